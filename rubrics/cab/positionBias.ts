/**
 * Order effects in CryptoAnalystBench's shared judge conversations: does a response's position change its
 * scores or its chance of being ranked first? Both tests respect the design (every query and every system
 * appears in many positions), so that query difficulty and system quality do not hide the position effect.
 */
import { blockedAnova, mean, winnerPositionTest } from '../../core/stats/stats';
import type { StoredJudgment } from '../../core/model/types';

/** What the tests read from a judgment; simulations build these directly. */
export type PositionedJudgment = Pick<StoredJudgment, 'queryId' | 'copilot' | 'position' | 'rank' | 'total' | 'status'>;

export interface PositionBias {
  /** Mean total of the responses shown in position p+1 (all copilots pooled). */
  meanTotalByPosition: Array<number | null>;
  /** Share of ranked queries in which the response in position p+1 was ranked first (among queries that had a position p+1). */
  rank1RateByPosition: Array<number | null>;
  meanRankByPosition: Array<number | null>;
  nByPosition: number[];
  rank1CountsByPosition: number[];
  /** Rank-1 counts by position against chance, conditioned on each query's number of responses (Monte Carlo). */
  rank1Test: { statistic: number; df: number; pValue: number; expected: number[]; iterations: number; method: string };
  /** Totals by position in a two-way blocked ANOVA (query and system as blocks). dfBetween: position; dfWithin: residual. */
  totalsTest: { F: number | null; dfBetween: number; dfWithin: number; pValue: number | null; method: string };
  alpha: number;
  /** Either test below alpha/2 (Bonferroni over the two tests): order effects larger than chance. */
  significant: boolean;
}

export const POSITION_ALPHA = 0.05;
export const RANK1_METHOD =
  'Pearson χ² of rank-1 counts by position; p by Monte Carlo with each query keeping its own number of responses';
export const TOTALS_METHOD =
  'two-way ANOVA of totals: position tested after query and system blocks (least squares, unbalanced allowed)';

const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);
const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);

/** Position effect on totals, blocking on query and system. Judgments need a position and an ok total. */
export function totalsByPositionTest(judgments: PositionedJudgment[]): PositionBias['totalsTest'] {
  const rows = judgments
    .filter((j) => j.position !== null && j.status === 'ok' && j.total !== null)
    .map((j) => ({
      block: j.queryId,
      nuisance: [j.copilot],
      factor: String(j.position).padStart(4, '0'),
      y: j.total!,
    }));
  const r = blockedAnova(rows);
  return {
    F: finiteOrNull(r.F),
    dfBetween: r.dfFactor,
    dfWithin: r.dfResidual,
    pValue: finiteOrNull(r.pValue),
    method: TOTALS_METHOD,
  };
}

/**
 * Position of the rank-1 response in each ranked query, against uniform over that query's positions.
 * `unitSize`: responses shown per query. Queries without exactly one rank-1 response are left out.
 */
export function rankOneByPositionTest(
  judgments: PositionedJudgment[],
  unitSize: Map<string, number>,
  seed: string,
  iterations = 9999,
): PositionBias['rank1Test'] {
  const winners = new Map<string, number[]>();
  for (const j of judgments)
    if (j.rank === 1 && j.position !== null) winners.set(j.queryId, [...(winners.get(j.queryId) ?? []), j.position]);
  const units = [...winners]
    .filter(([, ps]) => ps.length === 1)
    .map(([q, ps]) => ({ size: unitSize.get(q) ?? ps[0], position: ps[0] }));
  const t = winnerPositionTest(units, { iterations, seed });
  return {
    statistic: t.statistic,
    df: t.df,
    pValue: t.pValue,
    expected: t.expected,
    iterations: t.iterations,
    method: RANK1_METHOD,
  };
}

export function positionBias(
  judgments: PositionedJudgment[],
  unitSize: Map<string, number>,
  ranked: Set<string>,
  positions: number,
  seed: string,
): PositionBias {
  const at = (p: number) => judgments.filter((j) => j.position === p + 1);
  const range = [...Array(positions).keys()];
  const totals = range.map((p) =>
    at(p)
      .filter((j) => j.status === 'ok')
      .map((j) => j.total!),
  );
  const rank1CountsByPosition = range.map((p) => at(p).filter((j) => j.rank === 1).length);
  // Queries that were ranked and had a response in position p+1.
  const rankedAt = range.map((p) => at(p).filter((j) => ranked.has(j.queryId)).length);
  const rank1 = rankOneByPositionTest(
    judgments.filter((j) => ranked.has(j.queryId)),
    unitSize,
    seed,
  );
  const expected = range.map((p) => rank1.expected[p] ?? 0);
  const totalsTest = totalsByPositionTest(judgments);
  const pValues = [rank1.pValue, totalsTest.pValue].filter((p): p is number => p !== null && Number.isFinite(p));
  return {
    meanTotalByPosition: totals.map(meanOrNull),
    rank1RateByPosition: range.map((p) => (rankedAt[p] ? rank1CountsByPosition[p] / rankedAt[p] : null)),
    meanRankByPosition: range.map((p) =>
      meanOrNull(
        at(p)
          .filter((j) => j.rank !== null)
          .map((j) => j.rank!),
      ),
    ),
    nByPosition: totals.map((t) => t.length),
    rank1CountsByPosition,
    rank1Test: { ...rank1, expected },
    totalsTest,
    alpha: POSITION_ALPHA,
    significant: pValues.some((p) => p < POSITION_ALPHA / 2),
  };
}
