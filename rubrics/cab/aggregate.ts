import { bootstrapMeanCI, chiSquareSurvival, mean, oneWayAnova } from '../../core/stats';
import type { Query, StoredJudgment, StoredResponse } from '../../core/types';
import { taxonomyKey } from './judge';
import type { CabPlan } from './plan';
import { coverage, type Coverage } from '../../core/coverage';
import { tagsOf } from './queries';
import { CAB_DIMENSIONS, CAB_TAXONOMY } from './rubric';

export interface CabCopilotSummary extends Coverage {
  /** Mean score per dimension over scored responses. */
  dimensions: Record<string, number | null>;
  /** Sum of the four dimension means (4–40 on the 1–10 scale). */
  total: number | null;
  /** Bootstrap 95% CI of the mean total. */
  ci95: { low: number; high: number } | null;
  /** Mean rank (1 = best) over queries whose ranking succeeded. */
  meanRank: number | null;
  /** rankCounts[k] = queries where the copilot was ranked k+1. */
  rankCounts: number[];
  /** Error taxonomy (errorTaxonomy: true): share of checked responses with each flag present. */
  taxonomy?: { n: number; failed: number; rates: Record<string, number | null> };
}

export interface PositionBias {
  /** Mean total of the responses shown in position p+1 (all copilots pooled). */
  meanTotalByPosition: Array<number | null>;
  /** Share of ranked queries in which the response in position p+1 was ranked first (among queries that had a position p+1). */
  rank1RateByPosition: Array<number | null>;
  meanRankByPosition: Array<number | null>;
  nByPosition: number[];
  rank1CountsByPosition: number[];
  /** Rank-1 counts by position against the counts expected if position did not matter (1/k per position of a k-response query). */
  rank1Test: { statistic: number; df: number; pValue: number; expected: number[] };
  /** One-way ANOVA of totals grouped by position. */
  totalsTest: { F: number | null; dfBetween: number; dfWithin: number; pValue: number | null };
  alpha: number;
  /** Either test below alpha/2 (Bonferroni over the two tests): order effects larger than chance. */
  significant: boolean;
}

export interface CabSummary {
  /** Per copilot; the report key keeps CryptoAnalystBench's wording. */
  systems: Record<string, CabCopilotSummary>;
  tags: Record<string, Record<string, { total: number | null; meanRank: number | null; n: number }>>;
  positionBias: PositionBias;
  /** copilot → times shown in position p+1 (the presentation design's position counts). */
  presentation: Record<string, number[]>;
  predecessorCounts: Record<string, Record<string, number>> | null;
  predecessorImbalance: number | null;
  /** Queries (with two or more responses judged) whose ranking turn failed: ranks are missing, scores kept. */
  rankingFailures: number;
  taxonomy: boolean;
}

const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);
const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);

/** Judgments that went through a conversation (recordJudgeFailure rows have no position). */
const inConversation = (j: StoredJudgment) => j.position !== null;

export function summariseCab(args: { queries: Query[]; copilots: string[]; responses: StoredResponse[]; judgments: StoredJudgment[]; plan: CabPlan | undefined; taxonomy: boolean; seed?: string }): CabSummary {
  const { queries, copilots, responses, taxonomy } = args;
  const byQuery = new Map(queries.map((q) => [q.id, q]));
  const judgments = args.judgments.filter((j) => byQuery.has(j.queryId));
  const positions = judgments.reduce((max, j) => Math.max(max, j.position ?? 0), copilots.length);

  const systems: Record<string, CabCopilotSummary> = {};
  for (const copilot of copilots) systems[copilot] = summariseCopilot(judgments.filter((j) => j.copilot === copilot), responses.filter((r) => r.copilot === copilot && byQuery.has(r.queryId)), positions, taxonomy, `${args.seed ?? 'judgeflow'}:${copilot}`);

  const tags: CabSummary['tags'] = {};
  for (const j of judgments) {
    for (const tag of tagsOf(byQuery.get(j.queryId)!)) (tags[tag] ??= {})[j.copilot] ??= { total: null, meanRank: null, n: 0 };
  }
  for (const [tag, byCopilot] of Object.entries(tags)) {
    for (const copilot of Object.keys(byCopilot)) {
      const mine = judgments.filter((j) => j.copilot === copilot && tagsOf(byQuery.get(j.queryId)!).includes(tag));
      const ok = mine.filter((j) => j.status === 'ok');
      byCopilot[copilot] = { total: meanOrNull(ok.map((j) => j.total!)), meanRank: meanOrNull(mine.filter((j) => j.rank !== null).map((j) => j.rank!)), n: ok.length };
    }
  }

  // Per query: how many responses the conversation showed, and whether its ranking succeeded.
  const unitSize = new Map<string, number>();
  const ranked = new Set<string>();
  for (const j of judgments.filter(inConversation)) {
    unitSize.set(j.queryId, (unitSize.get(j.queryId) ?? 0) + 1);
    if (j.rank !== null) ranked.add(j.queryId);
  }
  const rankingFailures = [...unitSize].filter(([q, k]) => k > 1 && !ranked.has(q)).length;

  const presentation: Record<string, number[]> = {};
  for (const copilot of copilots) {
    presentation[copilot] = args.plan?.presentation.positionCounts[copilot]?.slice() ?? countPositions(judgments.filter((j) => j.copilot === copilot && inConversation(j)), positions);
    while (presentation[copilot].length < positions) presentation[copilot].push(0);
  }

  return {
    systems,
    tags,
    positionBias: positionBias(judgments.filter(inConversation), unitSize, ranked, positions),
    presentation,
    predecessorCounts: args.plan?.presentation.predecessorCounts ?? null,
    predecessorImbalance: args.plan?.predecessorImbalance ?? null,
    rankingFailures,
    taxonomy,
  };
}

function countPositions(judgments: StoredJudgment[], positions: number): number[] {
  const counts = new Array<number>(positions).fill(0);
  for (const j of judgments) counts[j.position! - 1]++;
  return counts;
}

function summariseCopilot(mine: StoredJudgment[], myResponses: StoredResponse[], positions: number, taxonomy: boolean, seed: string): CabCopilotSummary {
  const ok = mine.filter((j) => j.status === 'ok');
  const dimensions = Object.fromEntries(CAB_DIMENSIONS.map((d) => [d, meanOrNull(ok.map((j) => j.scores![d]))]));
  const dimMeans = CAB_DIMENSIONS.map((d) => dimensions[d]);
  const ranks = mine.filter((j) => j.rank !== null).map((j) => j.rank!);
  const rankCounts = new Array<number>(positions).fill(0);
  for (const r of ranks) rankCounts[r - 1]++;
  const summary: CabCopilotSummary = {
    ...coverage(mine, myResponses),
    dimensions,
    total: dimMeans.some((m) => m === null) ? null : (dimMeans as number[]).reduce((sum, m) => sum + m, 0),
    ci95: bootstrapMeanCI(
      ok.map((j) => j.total!),
      { seed },
    ),
    meanRank: meanOrNull(ranks),
    rankCounts,
  };
  if (taxonomy) {
    const checked = ok.filter((j) => j.scores![taxonomyKey(CAB_TAXONOMY[0])] !== undefined);
    summary.taxonomy = {
      n: checked.length,
      failed: ok.length - checked.length,
      rates: Object.fromEntries(CAB_TAXONOMY.map((f) => [f, meanOrNull(checked.map((j) => j.scores![taxonomyKey(f)]))])),
    };
  }
  return summary;
}

const ALPHA = 0.05;

function positionBias(judgments: StoredJudgment[], unitSize: Map<string, number>, ranked: Set<string>, positions: number): PositionBias {
  const at = (p: number) => judgments.filter((j) => j.position === p + 1);
  const range = [...Array(positions).keys()];
  const totals = range.map((p) => at(p).filter((j) => j.status === 'ok').map((j) => j.total!));
  const rank1CountsByPosition = range.map((p) => at(p).filter((j) => j.rank === 1).length);
  // Queries that were ranked and had a response in position p+1.
  const rankedAt = range.map((p) => at(p).filter((j) => ranked.has(j.queryId)).length);
  // Under "position does not matter", each of the k positions of a ranked query wins with probability 1/k.
  const expected = range.map((p) => [...ranked].reduce((s, q) => s + (unitSize.get(q)! > p ? 1 / unitSize.get(q)! : 0), 0));
  const rank1Test = goodnessOfFit(rank1CountsByPosition, expected);
  const anova = oneWayAnova(totals);
  const pValues = [rank1Test.pValue, anova.pValue].filter((p) => Number.isFinite(p));
  return {
    meanTotalByPosition: totals.map(meanOrNull),
    rank1RateByPosition: range.map((p) => (rankedAt[p] ? rank1CountsByPosition[p] / rankedAt[p] : null)),
    meanRankByPosition: range.map((p) => meanOrNull(at(p).filter((j) => j.rank !== null).map((j) => j.rank!))),
    nByPosition: totals.map((t) => t.length),
    rank1CountsByPosition,
    rank1Test: { ...rank1Test, expected },
    totalsTest: { F: finiteOrNull(anova.F), dfBetween: anova.dfBetween, dfWithin: anova.dfWithin, pValue: finiteOrNull(anova.pValue) },
    alpha: ALPHA,
    significant: pValues.some((p) => p < ALPHA / 2),
  };
}

/**
 * Pearson goodness of fit against given expected counts (cells expecting 0 are left out). With every
 * ranked query showing the same number of responses this is exactly chiSquareUniform on the counts.
 */
export function goodnessOfFit(observed: number[], expected: number[]): { statistic: number; df: number; pValue: number } {
  const cells = observed.map((o, i) => [o, expected[i]] as const).filter(([, e]) => e > 0);
  const df = cells.length - 1;
  if (df < 1) return { statistic: 0, df: Math.max(0, df), pValue: 1 };
  const statistic = cells.reduce((s, [o, e]) => s + (o - e) ** 2 / e, 0);
  return { statistic, df, pValue: chiSquareSurvival(statistic, df) };
}
