import { lengthBias, type LengthBias } from '../../core/stats/lengthBias';
import { perQueryScores, separability, type Separability } from '../../core/stats/separability';
import { mean, meanCI, type MeanInterval } from '../../core/stats/stats';
import type { Query, StoredJudgment, StoredResponse } from '../../core/model/types';
import { taxonomyKey } from './judge';
import type { CabPlan } from './plan';
import { coverage, type Coverage } from '../../core/model/coverage';
import { positionBias, type PositionBias } from './positionBias';
import { tagsOf } from './queries';
import { CAB_DIMENSIONS, CAB_TAXONOMY } from './rubric';
import { referenceRuleFigures, type ReferenceRuleFigures } from './referenceRules';
import { meanOfDimensionMeans, withResponseScores } from './score';

export interface CabCopilotSummary extends Coverage {
  /** Mean score per dimension over scored responses. */
  dimensions: Record<string, number | null>;
  /** The headline: the mean of the four dimension means (1–10), the reference's "Avg Total". */
  score: number | null;
  /** The four dimension means added up (4–40): a sum, shown only under that name. */
  sumOfDimensionMeans: number | null;
  /** 95% CI of the mean score over queries (meanCI: Student t below 100 queries, else BCa bootstrap); n = queries. */
  ci95: MeanInterval | null;
  /** Mean rank (1 = best) over queries whose ranking succeeded. */
  meanRank: number | null;
  /** Mean of (rank − 1)/(k − 1) over ranked queries of k ≥ 2 responses: 0 = always first, 1 = always last, whatever k. */
  normalisedRank: number | null;
  /** rankCounts[k] = queries where the copilot was ranked k+1. */
  rankCounts: number[];
  /** Error taxonomy (errorTaxonomy: true): share of checked responses with each flag present. */
  taxonomy?: { n: number; failed: number; rates: Record<string, number | null> };
}

export interface CabSummary {
  /** Per copilot; the report key keeps CryptoAnalystBench's wording. */
  systems: Record<string, CabCopilotSummary>;
  /** Per tag and copilot: mean response score (1–10), mean rank, responses scored. */
  tags: Record<string, Record<string, { score: number | null; meanRank: number | null; n: number }>>;
  positionBias: PositionBias;
  /** Pairwise paired tests of per-query totals, Holm-corrected, and the tiers they imply. */
  separability: Separability;
  /** Correlation between response length and score. */
  lengthBias: LengthBias;
  /** copilot → times shown in position p+1 (the presentation design's position counts). */
  presentation: Record<string, number[]>;
  predecessorCounts: Record<string, Record<string, number>> | null;
  predecessorImbalance: number | null;
  /** Queries (with two or more responses judged) whose ranking turn failed: ranks are missing, scores kept. */
  rankingFailures: number;
  taxonomy: boolean;
  /** The same verdicts under the reference harness's rules for failures (failures as 1, flags as 1, rank N, ranking by total). */
  referenceRules: ReferenceRuleFigures;
}

const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);

/** Judgments that went through a conversation (recordJudgeFailure rows have no position). */
const inConversation = (j: StoredJudgment) => j.position !== null;

export function summariseCab(args: {
  queries: Query[];
  copilots: string[];
  responses: StoredResponse[];
  /** One verdict per query × system (the mean over samples and judges). */
  judgments: StoredJudgment[];
  /** Every conversation's verdicts, when there were several per query (samples, panels): position effects are measured on these. */
  verdicts?: StoredJudgment[];
  plan: CabPlan | undefined;
  taxonomy: boolean;
  seed?: string;
  /** The scale's minimum: what the reference scores a failure. */
  minScore?: number;
}): CabSummary {
  const { queries, copilots, responses, taxonomy } = args;
  const byQuery = new Map(queries.map((q) => [q.id, q]));
  // Every per-response figure below is on the headline's scale: the mean of the response's four scores.
  const judgments = withResponseScores(args.judgments.filter((j) => byQuery.has(j.queryId)));
  const positions = judgments.reduce((max, j) => Math.max(max, j.position ?? 0), copilots.length);

  const tags: CabSummary['tags'] = {};
  for (const j of judgments) {
    for (const tag of tagsOf(byQuery.get(j.queryId)!))
      (tags[tag] ??= {})[j.copilot] ??= { score: null, meanRank: null, n: 0 };
  }
  for (const [tag, byCopilot] of Object.entries(tags)) {
    for (const copilot of Object.keys(byCopilot)) {
      const mine = judgments.filter((j) => j.copilot === copilot && tagsOf(byQuery.get(j.queryId)!).includes(tag));
      const ok = mine.filter((j) => j.status === 'ok');
      byCopilot[copilot] = {
        score: meanOrNull(ok.map((j) => j.total!)),
        meanRank: meanOrNull(mine.filter((j) => j.rank !== null).map((j) => j.rank!)),
        n: ok.length,
      };
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

  const seed = args.seed ?? 'judgeflow';
  const perQuery = perQueryScores(judgments, copilots);
  const systems: Record<string, CabCopilotSummary> = {};
  for (const copilot of copilots) {
    const mine = judgments.filter((j) => j.copilot === copilot);
    systems[copilot] = summariseCopilot(
      mine,
      responses.filter((r) => r.copilot === copilot && byQuery.has(r.queryId)),
      [...perQuery[copilot].values()],
      unitSize,
      positions,
      taxonomy,
      `${seed}:${copilot}`,
    );
  }
  const byTotal = [...copilots].sort((a, b) => (systems[b].score ?? -Infinity) - (systems[a].score ?? -Infinity));

  // Position effects live in single conversations: with several per query (samples, panel judges) each is its own block.
  const conversations = byConversation(
    args.verdicts && withResponseScores(args.verdicts.filter((j) => byQuery.has(j.queryId))),
    judgments,
  );
  const presentation: Record<string, number[]> = {};
  for (const copilot of copilots) {
    const designed = conversations.several ? undefined : args.plan?.presentation.positionCounts[copilot]?.slice();
    presentation[copilot] =
      designed ??
      countPositions(
        conversations.rows.filter((j) => j.copilot === copilot && inConversation(j)),
        positions,
      );
    while (presentation[copilot].length < positions) presentation[copilot].push(0);
  }

  return {
    systems,
    tags,
    positionBias: positionBias(
      conversations.rows.filter(inConversation),
      conversations.unitSize ?? unitSize,
      conversations.ranked ?? ranked,
      positions,
      seed,
    ),
    separability: separability(perQuery, byTotal, { seed }),
    lengthBias: lengthBias(
      judgments,
      responses.filter((r) => byQuery.has(r.queryId)),
      copilots,
      'total',
    ),
    presentation,
    predecessorCounts: args.plan?.presentation.predecessorCounts ?? null,
    predecessorImbalance: args.plan?.predecessorImbalance ?? null,
    rankingFailures,
    taxonomy,
    referenceRules: referenceRuleFigures({
      queries,
      copilots,
      judgments,
      taxonomy,
      minScore: args.minScore ?? 1,
      collected: new Set(responses.filter((r) => r.status === 'ok').map((r) => `${r.queryId}\u0000${r.copilot}`)),
    }),
  };
}

/**
 * Verdicts keyed by conversation (query, judge, sample) when a query had several; else the consensus rows as they are.
 * `unitSize` and `ranked` then count per conversation too.
 */
function byConversation(
  verdicts: StoredJudgment[] | undefined,
  judgments: StoredJudgment[],
): { several: boolean; rows: StoredJudgment[]; unitSize?: Map<string, number>; ranked?: Set<string> } {
  if (!verdicts || verdicts.length <= judgments.length) return { several: false, rows: judgments };
  const rows = verdicts.map((j) => ({ ...j, queryId: `${j.queryId}\u0000${j.judgeName ?? ''}\u0000${j.sample ?? 0}` }));
  const unitSize = new Map<string, number>();
  const ranked = new Set<string>();
  for (const j of rows.filter(inConversation)) {
    unitSize.set(j.queryId, (unitSize.get(j.queryId) ?? 0) + 1);
    if (j.rank !== null) ranked.add(j.queryId);
  }
  return { several: true, rows, unitSize, ranked };
}

function countPositions(judgments: StoredJudgment[], positions: number): number[] {
  const counts = new Array<number>(positions).fill(0);
  for (const j of judgments) counts[j.position! - 1]++;
  return counts;
}

function summariseCopilot(
  mine: StoredJudgment[],
  myResponses: StoredResponse[],
  queryTotals: number[],
  unitSize: Map<string, number>,
  positions: number,
  taxonomy: boolean,
  seed: string,
): CabCopilotSummary {
  const ok = mine.filter((j) => j.status === 'ok');
  const dimensions = Object.fromEntries(CAB_DIMENSIONS.map((d) => [d, meanOrNull(ok.map((j) => j.scores![d]))]));
  const score = meanOfDimensionMeans(dimensions);
  const ranks = mine.filter((j) => j.rank !== null).map((j) => j.rank!);
  const rankCounts = new Array<number>(positions).fill(0);
  for (const r of ranks) rankCounts[r - 1]++;
  const summary: CabCopilotSummary = {
    ...coverage(mine, myResponses),
    dimensions,
    score,
    sumOfDimensionMeans: score === null ? null : score * CAB_DIMENSIONS.length,
    ci95: meanCI(queryTotals, { seed }),
    meanRank: meanOrNull(ranks),
    normalisedRank: meanOrNull(
      mine
        .filter((j) => j.rank !== null && (unitSize.get(j.queryId) ?? 0) > 1)
        .map((j) => (j.rank! - 1) / (unitSize.get(j.queryId)! - 1)),
    ),
    rankCounts,
  };
  if (taxonomy) {
    // Every collected response is checked, whether or not its scoring succeeded (a failed judgment keeps only its flags).
    const asked = mine.filter(inConversation);
    const checked = asked.filter((j) => j.scores?.[taxonomyKey(CAB_TAXONOMY[0])] !== undefined);
    summary.taxonomy = {
      n: checked.length,
      failed: asked.length - checked.length,
      rates: Object.fromEntries(
        CAB_TAXONOMY.map((f) => [f, meanOrNull(checked.map((j) => j.scores![taxonomyKey(f)]))]),
      ),
    };
  }
  return summary;
}
