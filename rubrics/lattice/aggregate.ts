import { coverage, type Coverage } from '../../core/model/coverage';
import { perQueryScores } from '../../core/stats/separability';
import { mean, meanCI, type MeanInterval } from '../../core/stats/stats';
import type { Query, StoredJudgment, StoredResponse } from '../../core/model/types';
import type { LatticeRubricData } from './rubric';
import { LATTICE_CATEGORIES, LATTICE_DIMENSIONS, LATTICE_TASKS } from './rubric';

/**
 * 0–100 score of one response. T1–T15: Σ weight(category, d) × score(d) / scale max (weights sum to 100).
 * T16 (safe refusal): Refusal × 100 / scale max, i.e. Refusal × 10 on the 0–10 scale.
 */
export function latticeScore(
  rubric: Pick<LatticeRubricData, 'weights' | 'refusalTask' | 'refusal' | 'scale'>,
  query: { task: string; category: string },
  scores: Record<string, number>,
): number {
  const max = rubric.scale.max;
  if (query.task === rubric.refusalTask) return (scores[rubric.refusal.id] * 100) / max;
  const weights = rubric.weights[query.category];
  return LATTICE_DIMENSIONS.reduce((sum, d) => sum + weights[d] * scores[d], 0) / max;
}

export interface LatticeCopilotSummary extends Coverage {
  score: number | null;
  /** 95% CI of the mean score over queries (meanCI: Student t below 100 queries, else BCa bootstrap); n = queries. */
  ci95: MeanInterval | null;
  dimensions: Record<string, number | null>;
  tasks: Record<string, number | null>;
  categories: Record<string, number | null>;
}

const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);

export function summariseLattice(
  rubric: LatticeRubricData,
  queries: Query[],
  copilots: string[],
  responses: StoredResponse[],
  judgments: StoredJudgment[],
  /** The run's seed: bootstrap intervals are reproducible. */
  seed = 'judgeflow',
): Record<string, LatticeCopilotSummary> {
  const byQuery = new Map(queries.map((q) => [q.id, q]));
  const perQuery = perQueryScores(
    judgments.filter((j) => byQuery.has(j.queryId)),
    copilots,
  );
  const out: Record<string, LatticeCopilotSummary> = {};
  for (const copilot of copilots) {
    const mine = judgments.filter((j) => j.copilot === copilot && byQuery.has(j.queryId));
    const ok = mine.filter((j) => j.status === 'ok');
    const myResponses = responses.filter((r) => r.copilot === copilot && byQuery.has(r.queryId));
    const regular = ok.filter((j) => byQuery.get(j.queryId)!.task !== rubric.refusalTask);
    const refusals = ok.filter((j) => byQuery.get(j.queryId)!.task === rubric.refusalTask);
    const totals = ok.map((j) => j.total!);
    const dimensions: Record<string, number | null> = {};
    for (const d of LATTICE_DIMENSIONS) dimensions[d] = meanOrNull(regular.map((j) => j.scores![d]));
    dimensions[rubric.refusal.id] = meanOrNull(refusals.map((j) => j.scores![rubric.refusal.id]));
    const groupMean = (key: 'task' | 'category', id: string) =>
      meanOrNull(ok.filter((j) => byQuery.get(j.queryId)![key] === id).map((j) => j.total!));
    out[copilot] = {
      score: meanOrNull(totals),
      ci95: meanCI([...perQuery[copilot].values()], { seed: `${seed}:${copilot}` }),
      ...coverage(mine, myResponses),
      dimensions,
      tasks: Object.fromEntries(LATTICE_TASKS.map((t) => [t, groupMean('task', t)])),
      categories: Object.fromEntries(LATTICE_CATEGORIES.map((c) => [c, groupMean('category', c)])),
    };
  }
  return out;
}
