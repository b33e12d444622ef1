import { meanCI, mean, type MeanInterval } from '../../core/stats/stats';
import type { Query, StoredJudgment } from '../../core/model/types';
import type { LatticeRubricData } from './rubric';
import { LATTICE_CATEGORIES, LATTICE_DIMENSIONS, LATTICE_TASKS } from './rubric';

/**
 * The paper's tables and the reference's summaries (scoring/build_benchmark.py of SaharaLabsAI/lattice-benchmark), from
 * one consensus verdict per query × copilot. Failed judgments and missing answers are left out (missing data); the
 * reference's code assumes every agent was scored on every query.
 */

/** A mean with its 95% interval over queries (meanCI: Student t below 100 queries, BCa bootstrap from 100). */
export interface CellMean {
  mean: number | null;
  ci95: MeanInterval | null;
  n: number;
}

/** The reference's rounding for every figure it prints: round(value + 1e-8, 2) (build_benchmark.py round2). */
export const referenceRound2 = (x: number) => Math.round((x + 1e-8) * 100) / 100;
/** Two decimals as the reference prints them (2.675 → "2.68", where toFixed alone gives "2.67"); "–" for no value. */
export const fmt2 = (x: number | null | undefined) =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : referenceRound2(x).toFixed(2);

/** The reference's score buckets of a response's 0–100 total, low edge inclusive ("0-49" is below 50). */
export const SCORE_BUCKETS = ['0-49', '50-59', '60-69', '70-79', '80-89', '90-100'] as const;
export function bucketOf(total: number): (typeof SCORE_BUCKETS)[number] {
  if (total < 50) return '0-49';
  if (total < 60) return '50-59';
  if (total < 70) return '60-69';
  if (total < 80) return '70-79';
  if (total < 90) return '80-89';
  return '90-100';
}

/** Population standard deviation (divides by n), 0 for fewer than two values: build_benchmark.py's stddev. */
export function populationSd(xs: number[]): number {
  if (xs.length <= 1) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length);
}

/** A mean with its 95% interval, two decimals: "7.25 [6.90, 7.60]"; "–" where nothing was scored. */
export const cellText = (c: CellMean | undefined) =>
  !c || c.mean === null ? '–' : c.ci95 ? `${fmt2(c.mean)} [${fmt2(c.ci95.low)}, ${fmt2(c.ci95.high)}]` : fmt2(c.mean);

export interface LatticeTables {
  /** Table 5: mean dimension score (0–10) per copilot; D1–D6 over T1–T15, the refusal dimension over T16. */
  table5: { dimensions: string[]; copilots: Record<string, Record<string, CellMean>> };
  /** Table 6: mean 0–100 score per task (rows, under the paper's task names) × copilot. */
  table6: { rows: Array<{ task: string; name: string; queries: number; copilots: Record<string, CellMean> }> };
  /** Mean 0–100 score per query category × copilot. */
  categoryTable: {
    rows: Array<{ category: string; name: string; queries: number; copilots: Record<string, CellMean> }>;
  };
  /** Per copilot, how many of its scored responses fall in each of the reference's buckets. */
  scoreBuckets: Record<string, Record<string, number>>;
  /** Per copilot, mean and population standard deviation of its response totals (the reference's "consistency"), lowest spread first. */
  spread: Array<{ copilot: string; mean: number | null; sd: number | null; n: number }>;
  /**
   * The best copilot of each query: highest total; a tie goes to the first copilot in name order, as the reference's
   * strict ">" over agents in file-name order gives it. `tiedWith` lists the others at the same score (the reference keeps none).
   */
  bestPerQuery: {
    queries: Array<{ queryId: string; best: string | null; score: number | null; tiedWith: string[] }>;
    wins: Record<string, number>;
    ties: number;
  };
}

function cell(values: number[], seed: string): CellMean {
  return { mean: values.length ? mean(values) : null, ci95: meanCI(values, { seed }), n: values.length };
}

export function latticeTables(
  rubric: LatticeRubricData,
  queries: Query[],
  copilots: string[],
  judgments: StoredJudgment[],
  seed: string,
): LatticeTables {
  const byQuery = new Map(queries.map((q) => [q.id, q]));
  const ok = judgments.filter((j) => j.status === 'ok' && j.total !== null && j.scores && byQuery.has(j.queryId));
  // Each copilot's judgments once (not a filter of every judgment per cell: 112 cells × every judgment).
  const byCopilot = new Map<string, StoredJudgment[]>(copilots.map((c) => [c, []]));
  for (const j of ok) byCopilot.get(j.copilot)?.push(j);
  const mine = (c: string) => byCopilot.get(c) ?? [];
  const isRefusal = (j: StoredJudgment) => byQuery.get(j.queryId)!.task === rubric.refusalTask;
  const dimensions = [...LATTICE_DIMENSIONS, rubric.refusal.id];

  const table5: LatticeTables['table5'] = { dimensions, copilots: {} };
  for (const c of copilots) {
    table5.copilots[c] = Object.fromEntries(
      dimensions.map((d) => {
        const over = mine(c).filter((j) => (d === rubric.refusal.id ? isRefusal(j) : !isRefusal(j)));
        return [
          d,
          cell(
            over.map((j) => j.scores![d]).filter((x) => typeof x === 'number'),
            `${seed}:${c}:${d}`,
          ),
        ];
      }),
    );
  }
  const grouped = (key: 'task' | 'category', id: string) => ({
    queries: queries.filter((q) => q[key] === id).length,
    copilots: Object.fromEntries(
      copilots.map((c) => [
        c,
        cell(
          mine(c)
            .filter((j) => byQuery.get(j.queryId)![key] === id)
            .map((j) => j.total!),
          `${seed}:${c}:${id}`,
        ),
      ]),
    ),
  });
  const table6 = {
    rows: LATTICE_TASKS.map((t) => ({
      task: t,
      name: rubric.tasks.find((x) => x.id === t)!.name,
      ...grouped('task', t),
    })),
  };
  const categoryTable = {
    rows: LATTICE_CATEGORIES.map((k) => ({
      category: k,
      name: rubric.categories.find((x) => x.id === k)!.name,
      ...grouped('category', k),
    })),
  };

  const scoreBuckets: LatticeTables['scoreBuckets'] = {};
  for (const c of copilots) {
    scoreBuckets[c] = Object.fromEntries(SCORE_BUCKETS.map((b) => [b, 0]));
    for (const j of mine(c)) scoreBuckets[c][bucketOf(j.total!)]++;
  }
  const spread = copilots
    .map((c) => {
      const totals = mine(c).map((j) => j.total!);
      return {
        copilot: c,
        mean: totals.length ? mean(totals) : null,
        sd: totals.length ? populationSd(totals) : null,
        n: totals.length,
      };
    })
    .sort((a, b) => (a.sd ?? Infinity) - (b.sd ?? Infinity));

  const inNameOrder = [...copilots].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const totalOf = new Map(ok.map((j) => [`${j.queryId}\u0000${j.copilot}`, j.total!]));
  const wins: Record<string, number> = Object.fromEntries(copilots.map((c) => [c, 0]));
  let ties = 0;
  const best = queries.map((q) => {
    let top: string | null = null;
    let score = -1;
    for (const c of inNameOrder) {
      const t = totalOf.get(`${q.id}\u0000${c}`);
      if (t !== undefined && t > score) [top, score] = [c, t];
    }
    const tiedWith =
      top === null ? [] : inNameOrder.filter((c) => c !== top && totalOf.get(`${q.id}\u0000${c}`) === score);
    if (top !== null) wins[top]++;
    if (tiedWith.length) ties++;
    return { queryId: q.id, best: top, score: top === null ? null : score, tiedWith };
  });
  return { table5, table6, categoryTable, scoreBuckets, spread, bestPerQuery: { queries: best, wins, ties } };
}
