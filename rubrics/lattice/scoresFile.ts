import path from 'node:path';
import { z } from 'zod';
import { InputError, describeZodError } from '../../core/model/inputError';
import type { Query, StoredJudgment, StoredResponse } from '../../core/model/types';
import { latticeScore } from './aggregate';
import { asLatticeQuery, splitLabel, type LatticeQuery } from './queries';
import { LATTICE_DIMENSIONS, type LatticeRubric } from './rubric';

/**
 * The LATTICE reference harness's scores file (`scores_*.json`, written by scoring/batch.py and read by
 * scoring/build_benchmark.py), both ways. Key for key as the reference writes it:
 * - top level: instructions_path, queries_path, agent_files, model, total_scored, summary, results;
 * - summary[agent]: total_score (sum over scored queries), count, errors, avg_score (total ÷ count, 4 decimals, or null);
 * - results[]: qid (as in the query file), task_id and category in the long form ("T1 Protocol …", "C1 Basic"), query,
 *   results[] per agent: { agent, dimensions: { D1: { score, weighted_score, reason } … }, total_score } or { agent, error };
 * - weighted_score = round(score / 10 × weight(category, dimension), 4); total_score = round(Σ weighted_score, 4);
 *   T16: one dimension "T16-1", weighted_score = total_score = round(score / 10 × 100, 4).
 */

/** The reference's name of the refusal dimension. */
export const REFERENCE_REFUSAL = 'T16-1';

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export interface ReferenceDimension {
  score: number;
  weighted_score: number;
  reason: string;
}
export type ReferenceAgentResult =
  | { agent: string; dimensions: Record<string, ReferenceDimension>; total_score: number }
  | { agent: string; error: string };
export interface ReferenceEntry {
  qid: number | string;
  task_id: string;
  category: string;
  query: string;
  results: ReferenceAgentResult[];
}
export interface ReferenceScoresFile {
  instructions_path: string;
  queries_path: string;
  agent_files: Record<string, string>;
  model: string;
  total_scored: number;
  summary: Record<string, { total_score: number; count: number; errors: number; avg_score: number | null }>;
  results: ReferenceEntry[];
}

/** "T1 Protocol Mechanism Interpretation" as the query file said it, else the rubric's id and name. */
function longLabels(rubric: LatticeRubric, q: LatticeQuery): { qid: number | string; task: string; category: string } {
  const task = rubric.data.tasks.find((t) => t.id === q.task);
  const category = rubric.data.categories.find((c) => c.id === q.category);
  return {
    qid: q.reference?.id ?? q.id,
    task: q.reference?.task ?? `${q.task} ${task?.name ?? ''}`.trim(),
    category: q.reference?.category ?? `${q.category} ${category?.name ?? ''}`.trim(),
  };
}

/** One verdict in the reference's shape: the weighted scores computed as scoring_helpers.py does. */
function agentResult(
  rubric: LatticeRubric,
  q: LatticeQuery,
  copilot: string,
  judgment: StoredJudgment | undefined,
  response: StoredResponse | undefined,
): ReferenceAgentResult {
  if (!response || response.status !== 'ok')
    return {
      agent: copilot,
      error: response
        ? `${response.status}: ${response.errorMessage ?? response.errorKind ?? ''}`.trim()
        : 'missing answer',
    };
  if (!judgment || judgment.status !== 'ok' || !judgment.scores)
    return { agent: copilot, error: judgment?.error ?? 'missing judge output' };
  const max = rubric.data.scale.max;
  const reason = (d: string) => judgment.rationales?.[d] ?? '';
  if (q.task === rubric.data.refusalTask) {
    const score = judgment.scores[rubric.data.refusal.id];
    const weighted = round4((score / max) * 100);
    return {
      agent: copilot,
      dimensions: { [REFERENCE_REFUSAL]: { score, weighted_score: weighted, reason: reason(rubric.data.refusal.id) } },
      total_score: weighted,
    };
  }
  const weights = rubric.data.weights[q.category];
  const dimensions: Record<string, ReferenceDimension> = {};
  let total = 0;
  for (const d of LATTICE_DIMENSIONS) {
    const score = judgment.scores[d];
    const weighted = round4((score / max) * weights[d]);
    dimensions[d] = { score, weighted_score: weighted, reason: reason(d) };
    total += weighted;
  }
  return { agent: copilot, dimensions, total_score: round4(total) };
}

/** A stored LATTICE run as the reference's scores file. */
export function toReferenceScores(args: {
  rubric: LatticeRubric;
  queries: Query[];
  copilots: string[];
  responses: StoredResponse[];
  judgments: StoredJudgment[];
  model: string;
  queriesPath: string;
  instructionsPath: string;
  agentFiles: Record<string, string>;
}): ReferenceScoresFile {
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const judgments = new Map(args.judgments.map((j) => [key(j.queryId, j.copilot), j]));
  const responses = new Map(args.responses.map((r) => [key(r.queryId, r.copilot), r]));
  const results: ReferenceEntry[] = args.queries.map((query) => {
    const q = asLatticeQuery(query);
    const labels = longLabels(args.rubric, q);
    return {
      qid: labels.qid,
      task_id: labels.task,
      category: labels.category,
      query: q.text,
      results: args.copilots.map((c) =>
        agentResult(args.rubric, q, c, judgments.get(key(q.id, c)), responses.get(key(q.id, c))),
      ),
    };
  });
  const summary: ReferenceScoresFile['summary'] = {};
  for (const c of args.copilots) {
    const mine = results.map((e) => e.results.find((r) => r.agent === c)!);
    const scored = mine.filter((r): r is Extract<ReferenceAgentResult, { total_score: number }> => 'total_score' in r);
    const total = scored.reduce((s, r) => s + r.total_score, 0);
    summary[c] = {
      total_score: total,
      count: scored.length,
      errors: mine.length - scored.length,
      avg_score: scored.length ? round4(total / scored.length) : null,
    };
  }
  return {
    instructions_path: args.instructionsPath,
    queries_path: args.queriesPath,
    agent_files: Object.fromEntries(Object.entries(args.agentFiles).sort(([a], [b]) => (a < b ? -1 : 1))),
    model: args.model,
    total_scored: results.length,
    summary,
    results,
  };
}

const dimensionSchema = z
  .object({ score: z.number(), weighted_score: z.number().optional(), reason: z.string().optional() })
  .passthrough();
const scoresFileSchema = z
  .object({
    model: z.string().optional(),
    queries_path: z.string().optional(),
    agent_files: z.record(z.string(), z.string()).optional(),
    summary: z.record(z.string(), z.unknown()),
    results: z.array(
      z
        .object({
          qid: z.union([z.number(), z.string()]).nullable(),
          task_id: z.string(),
          category: z.string(),
          query: z.string(),
          results: z.array(
            z.union([
              z
                .object({
                  agent: z.string(),
                  dimensions: z.record(z.string(), dimensionSchema),
                  total_score: z.number(),
                })
                .passthrough(),
              z.object({ agent: z.string(), error: z.string() }).passthrough(),
            ]),
          ),
        })
        .passthrough(),
    ),
  })
  .passthrough();

/** What a reference scores file says, as judgeflow verdicts on the queries of `queries` (matched by query text, as the reference matches). */
export function fromReferenceScores(
  value: unknown,
  file: string,
  rubric: LatticeRubric,
  queries: Query[],
): {
  agents: string[];
  model: string;
  agentFiles: Record<string, string>;
  verdicts: Array<
    | {
        queryId: string;
        copilot: string;
        scores: Record<string, number>;
        rationales: Record<string, string>;
        total: number;
      }
    | { queryId: string; copilot: string; error: string }
  >;
} {
  const parsed = scoresFileSchema.safeParse(value);
  if (!parsed.success)
    throw new InputError(
      `${describeZodError(parsed.error, file)}\n${file}: expected the LATTICE reference's scores file (scores_*.json from scoring/batch.py: summary, results[].qid/task_id/category/query/results)`,
    );
  const data = parsed.data;
  const agents = Object.keys(data.summary).sort();
  const byText = new Map(queries.map((q) => [q.text.trim(), asLatticeQuery(q)]));
  const problems: string[] = [];
  const verdicts: ReturnType<typeof fromReferenceScores>['verdicts'] = [];
  const dimensionIdOf = (d: string) => (d === REFERENCE_REFUSAL ? rubric.data.refusal.id : d);
  data.results.forEach((entry, i) => {
    const q = byText.get(entry.query.trim());
    const at = `${file}: results[${i}] (qid ${entry.qid})`;
    if (!q) return problems.push(`${at}: its query is not in the query file ("${entry.query.slice(0, 60)}")`);
    if (splitLabel(entry.task_id)?.id !== q.task || splitLabel(entry.category)?.id !== q.category)
      return problems.push(
        `${at}: task/category "${entry.task_id}" / "${entry.category}" differ from the query file's ${q.task} / ${q.category}`,
      );
    for (const r of entry.results) {
      if (!agents.includes(r.agent))
        return problems.push(`${at}: agent "${r.agent}" is not in the summary (${agents.join(', ')})`);
      if ('error' in r && typeof r.error === 'string') {
        verdicts.push({ queryId: q.id, copilot: r.agent, error: `reference harness: ${r.error}` });
        continue;
      }
      const dims = (r as { dimensions: Record<string, { score: number; reason?: string }> }).dimensions;
      const expected = q.task === rubric.data.refusalTask ? [REFERENCE_REFUSAL] : [...LATTICE_DIMENSIONS];
      const missing = expected.filter((d) => !(d in dims));
      if (missing.length) return problems.push(`${at}: agent ${r.agent} has no ${missing.join(', ')}`);
      const scores = Object.fromEntries(expected.map((d) => [dimensionIdOf(d), dims[d].score]));
      const rationales = Object.fromEntries(expected.map((d) => [dimensionIdOf(d), dims[d].reason ?? '']));
      verdicts.push({
        queryId: q.id,
        copilot: r.agent,
        scores,
        rationales,
        total: latticeScore(rubric.data, q, scores),
      });
    }
  });
  if (problems.length)
    throw new InputError(
      problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''),
    );
  return { agents, model: data.model ?? 'reference judge', agentFiles: data.agent_files ?? {}, verdicts };
}

/** `./response/<file name>` as the reference's manifest names an agent's answers file. */
export const manifestAgentFile = (file: string) => `./response/${path.basename(file)}`;
