import { z } from 'zod';
import type { ChatMessage } from '../../core/llm/client';
import { judgmentSlot, type JudgeContext, type ReadyResponse } from '../../core/model/protocol';
import { memoSpec } from '../../core/model/scoreSchema';
import { askLatticeJudge, capsText, dimensionsFor, latticeSystemPrompt } from './judge';
import { historyBlock } from '../../core/model/history';
import type { JudgeUnit } from '../../core/model/store';
import type { Query, StoredJudgment } from '../../core/model/types';
import { buildPresentationDesign, predecessorImbalance, type PresentationDesign } from '../../core/model/presentation';
import { latticeScore } from './aggregate';
import { asLatticeQuery, type LatticeQuery } from './queries';
import type { LatticeRubric } from './rubric';

/**
 * Joint judging, as the reference harness's code does it (scoring/batch.py): one judge call per query shows every
 * copilot's answer, and the judge returns one entry per answer. Unlike the reference, the judge sees a blinded label
 * (`agent-1` …, numbered by the position shown) in place of each copilot's name, and the order is a balanced design
 * (the one CryptoAnalystBench uses: each copilot in each position equally often), not the files' fixed order.
 */

/** The config's `lattice:` section. */
export const latticeOptionsSchema = z
  .object({
    judging: z
      .enum(['independent', 'joint'])
      .default('independent')
      .describe(
        "independent: one judge call per answer, as the LATTICE paper describes; joint: one call per query showing every copilot's answer under a blinded label in a balanced order, as the reference harness's code judges (docs/lattice-reference.md).",
      ),
  })
  .strict();

export type LatticeJudging = z.infer<typeof latticeOptionsSchema>['judging'];
export const judgingOf = (options: Record<string, unknown> | undefined): LatticeJudging =>
  options?.judging === 'joint' ? 'joint' : 'independent';

/** What a joint run stores as its plan: the presentation order of every query, fixed before any answer is in. */
export interface LatticeJointPlan {
  judging: 'joint';
  seed: string;
  presentation: PresentationDesign;
  predecessorImbalance: number;
}

export function planLatticeAhead({
  queries,
  copilots,
  seed,
  options,
}: {
  queries: Query[];
  copilots: string[];
  seed: string;
  options?: Record<string, unknown>;
}): LatticeJointPlan | undefined {
  if (judgingOf(options) !== 'joint') return undefined;
  const presentation = buildPresentationDesign({ seed, queries: queries.map((q) => ({ queryId: q.id, copilots })) });
  return { judging: 'joint', seed, presentation, predecessorImbalance: predecessorImbalance(presentation) };
}

export const readJointPlan = (plan: unknown): LatticeJointPlan | undefined =>
  (plan as LatticeJointPlan | undefined)?.judging === 'joint' ? (plan as LatticeJointPlan) : undefined;

/**
 * Independent: one unit per answer, at once. Joint: the query's one unit once every copilot has answered or failed
 * for good, holding the copilots that answered in the design's order (a query missing an answer keeps the others' order).
 */
export function readyLatticeUnits({
  query,
  responses,
  copilots,
  plan,
}: {
  query: Query;
  responses: ReadyResponse[];
  copilots: string[];
  plan: unknown;
}): JudgeUnit[] {
  const joint = readJointPlan(plan);
  if (!joint)
    return responses.filter((r) => r.status === 'ok').map((r) => ({ queryId: query.id, copilots: [r.copilot] }));
  if (copilots.some((c) => !responses.some((r) => r.copilot === c))) return [];
  const ok = new Set(responses.filter((r) => r.status === 'ok').map((r) => r.copilot));
  const present = (joint.presentation.orders[query.id] ?? copilots).filter((c) => ok.has(c));
  return present.length ? [{ queryId: query.id, copilots: present }] : [];
}

/** The label the judge sees for the answer shown in position k (1-based). */
export const blindLabel = (position: number) => `agent-${position}`;

/**
 * Why the answers come together and how to answer: the rubric's own system prompt says how to grade one answer, and
 * this says that each of the answers shown is graded that way, on its own.
 */
const JOINT_NOTE = [
  'This request shows several answers to the same query, each in an [Agent] block with a label (agent-1, agent-2, …).',
  'The labels only number the answers in the order shown; they say nothing about which product wrote them.',
  'Grade every answer on its own against the rubric above, exactly as you would if it were the only one shown: do not rank the answers against each other, and do not let one answer raise or lower the scores of another.',
  'Answer with JSON {"results": [{"agent": "<label>", "dimensions": {"<dimension id>": {"score": <integer>, "reason": "<rationale>"}, …}}, …]}: one entry per label shown, each label exactly once.',
].join('\n');

/** The user message in the reference's layout: [Task], [Category], [Query], then [Agent Answers] with one [Agent] block per answer. */
export function jointMessages(
  rubric: LatticeRubric,
  query: LatticeQuery,
  answers: Array<{ label: string; text: string }>,
): ChatMessage[] {
  const d = rubric.data;
  const dims = dimensionsFor(rubric, query.task);
  const task = d.tasks.find((t) => t.id === query.task)!;
  const category = d.categories.find((c) => c.id === query.category)!;
  const system = latticeSystemPrompt(rubric, query.task);
  const block = (title: string, body: string) => `[${title}]\n<<<\n${body}\n>>>`;
  const agents = answers.map((a) => `[Agent]\nname: ${a.label}\nanswer:\n<<<\n${a.text}\n>>>`).join('\n\n');
  const history = historyBlock(query.history);
  const user = [
    block('Task', `${task.id} ${task.name}\n${task.description}`),
    block('Category', `${category.id} ${category.name}\n${category.description}`),
    ...(history.trim() ? [history.trim()] : []),
    block('Query', query.text),
    ...(capsText(rubric, query.task, query.category) ? [capsText(rubric, query.task, query.category).trim()] : []),
    block('Agent Answers', agents),
    `Grade each answer on: ${dims.map((x) => x.id).join(', ')}.`,
  ].join('\n\n');
  return [
    { role: 'system', content: `${system}\n\n${JOINT_NOTE}` },
    { role: 'user', content: user },
  ];
}

type JointAnswer = { results: Array<{ agent: string; dimensions: Record<string, { score: number; reason: string }> }> };

const jointSpecs = new Map<string, ReturnType<typeof buildJointSpec>>();

/** The reference's answer shape; `check` makes a missing, unknown or repeated label an invalid answer (re-asked). */
export function jointSpec(labels: string[], dimensionIds: string[], min: number, max: number) {
  return memoSpec(jointSpecs, JSON.stringify([labels, dimensionIds, min, max]), () =>
    buildJointSpec(labels, dimensionIds, min, max),
  );
}

function buildJointSpec(labels: string[], dimensionIds: string[], min: number, max: number) {
  const entry = {
    type: 'object',
    properties: { score: { type: 'integer', minimum: min, maximum: max }, reason: { type: 'string' } },
    required: ['score', 'reason'],
    additionalProperties: false,
  };
  const dimensions = {
    type: 'object',
    properties: Object.fromEntries(dimensionIds.map((d) => [d, entry])),
    required: dimensionIds,
    additionalProperties: false,
  };
  const jsonSchema = {
    type: 'object',
    properties: {
      results: {
        type: 'array',
        minItems: labels.length,
        maxItems: labels.length,
        items: {
          type: 'object',
          properties: { agent: { type: 'string', enum: labels }, dimensions },
          required: ['agent', 'dimensions'],
          additionalProperties: false,
        },
      },
    },
    required: ['results'],
    additionalProperties: false,
  };
  const zodEntry = z.object({ score: z.number().int().min(min).max(max), reason: z.string() });
  const zodSchema = z.object({
    results: z.array(
      z.object({ agent: z.string(), dimensions: z.object(Object.fromEntries(dimensionIds.map((d) => [d, zodEntry]))) }),
    ),
  }) as unknown as z.ZodType<JointAnswer>;
  const check = (value: JointAnswer): string | null => {
    const given = value.results.map((r) => r.agent.trim());
    const repeated = [...new Set(given.filter((g, i) => given.indexOf(g) !== i))];
    const missing = labels.filter((l) => !given.includes(l));
    const unknown = given.filter((g) => !labels.includes(g));
    const problems = [
      ...(missing.length ? [`no entry for ${missing.join(', ')}`] : []),
      ...(repeated.length ? [`more than one entry for ${repeated.join(', ')}`] : []),
      ...(unknown.length ? [`entries for labels not shown (${unknown.join(', ')})`] : []),
    ];
    return problems.length
      ? `the results must hold each label shown (${labels.join(', ')}) exactly once: ${problems.join('; ')}`
      : null;
  };
  return { name: 'lattice_joint_judgment', jsonSchema, zodSchema, check };
}

/** One query's answers in one judge call; every verdict of the unit is stored together (or, on failure, every failure). */
export async function judgeLatticeJoint(
  rubric: LatticeRubric,
  unit: JudgeUnit,
  ctx: JudgeContext,
): Promise<{ judged: number; failed: number }> {
  const { store, runId } = ctx;
  const existing = await Promise.all(
    unit.copilots.map((c) => store.getJudgment(runId, unit.queryId, c, rubric.version, ctx.slot)),
  );
  if (existing.every((j) => j !== null)) return tally(existing.map((j) => j!.status));
  const query = asLatticeQuery(await store.snapshotQuery(ctx.snapshotId, unit.queryId));
  const answers = await Promise.all(
    unit.copilots.map(async (copilot, i) => {
      const response = await store.getResponse(runId, unit.queryId, copilot);
      if (!response || response.status !== 'ok' || response.text === null)
        throw new Error(`no collected response for ${unit.queryId}/${copilot}`);
      return { copilot, label: blindLabel(i + 1), text: response.text };
    }),
  );
  const dims = dimensionsFor(rubric, query.task);
  const spec = jointSpec(
    answers.map((a) => a.label),
    dims.map((x) => x.id),
    rubric.data.scale.min,
    rubric.data.scale.max,
  );
  const answer = await askLatticeJudge(ctx, rubric, jointMessages(rubric, query, answers), spec);
  const createdAt = new Date().toISOString();
  const judge = {
    model: ctx.judge.model,
    baseURL: ctx.judge.baseURL,
    temperature: ctx.judge.temperature,
    rubricVersion: rubric.version,
    seed: ctx.judge.seed ?? null,
    systemFingerprint: answer.systemFingerprint,
  };
  const judgments: StoredJudgment[] = answers.map((a, i) => {
    const base = {
      runId,
      queryId: unit.queryId,
      copilot: a.copilot,
      rubricVersion: rubric.version,
      rank: null,
      position: i + 1,
      judge,
      attempts: answer.attempts,
      createdAt,
      ...judgmentSlot(ctx.slot),
    };
    if (!answer.ok)
      return { ...base, status: 'failed', scores: null, rationales: null, total: null, error: answer.error };
    // The check guarantees exactly one entry per label: mapped back to the copilot here, after judging.
    const entry = answer.value.results.find((r) => r.agent.trim() === a.label)!;
    const scores = Object.fromEntries(Object.entries(entry.dimensions).map(([d, v]) => [d, v.score]));
    const rationales = Object.fromEntries(Object.entries(entry.dimensions).map(([d, v]) => [d, v.reason]));
    return { ...base, status: 'ok', scores, rationales, total: latticeScore(rubric.data, query, scores), error: null };
  });
  await store.putJudgments(judgments);
  return tally(judgments.map((j) => j.status));
}

function tally(statuses: Array<'ok' | 'failed'>): { judged: number; failed: number } {
  const judged = statuses.filter((s) => s === 'ok').length;
  return { judged, failed: statuses.length - judged };
}

/** What report.json says of how the run was judged (`judging`), and the line report.md and report.html show. */
export function judgingRecord(
  options: Record<string, unknown>,
  plan: unknown,
  imported?: unknown,
): { mode: LatticeJudging | 'imported'; description: string; predecessorImbalance?: number } {
  if (imported)
    return {
      mode: 'imported',
      description: `imported from a reference scores file (${String((imported as { file?: string }).file ?? '')}); judged by the reference harness, every agent of a query in one call with its name shown`,
    };
  const joint = readJointPlan(plan);
  if (judgingOf(options) === 'joint')
    return {
      mode: 'joint',
      description:
        'joint: one judge call per query showing every answer under a blinded label (agent-1 …) in a balanced order, as the reference harness judges (the paper describes independent calls)',
      ...(joint ? { predecessorImbalance: joint.predecessorImbalance } : {}),
    };
  return { mode: 'independent', description: 'independent: one judge call per answer, as the paper describes' };
}
