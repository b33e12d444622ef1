import { mean } from '../../core/stats/stats';
import type { Query, StoredJudgment } from '../../core/model/types';
import { taxonomyKey } from './judge';
import { CAB_DIMENSIONS, CAB_TAXONOMY } from './rubric';
import { meanOfDimensionMeans } from './score';

/**
 * The figures the CryptoAnalystBench reference harness would report on the same verdicts. judgeflow records a failure
 * as missing data; the reference fills it in: a response that is empty or whose scoring failed after its retries scores
 * the scale's minimum (1) on every dimension, a failed error-taxonomy check sets every flag (1 = present), a copilot
 * missing from a query's ranking gets rank N (the number of copilots), and when the ranking turn failed the query is
 * ranked by the sum of the four scores instead (ties keep the order the responses were shown in). Computed from the
 * stored verdicts, beside judgeflow's own figures, so a reference run can be lined up with a judgeflow one.
 */
export interface ReferenceRuleFigures {
  /** Queries × copilots the reference would have rows for. */
  items: number;
  /** Items whose reference figure differs from judgeflow's: scores filled in as the minimum, ranks set or replaced, flags set to 1. */
  differ: { scores: number; ranks: number; flags: number };
  /** Queries whose ranking the reference would take from the scores (the ranking turn failed, or judgeflow had nothing to rank). */
  rankedByTotal: number;
  systems: Record<
    string,
    {
      score: number | null;
      dimensions: Record<string, number | null>;
      meanRank: number | null;
      wins: number;
      taxonomy: Record<string, number | null> | null;
    }
  >;
}

export function referenceRuleFigures(args: {
  queries: Query[];
  copilots: string[];
  judgments: StoredJudgment[];
  taxonomy: boolean;
  minScore: number;
  collected: Set<string>;
}): ReferenceRuleFigures {
  const { queries, copilots, minScore } = args;
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const judgmentOf = new Map(args.judgments.map((j) => [key(j.queryId, j.copilot), j]));
  const n = copilots.length;
  const differ = { scores: 0, ranks: 0, flags: 0 };
  let rankedByTotal = 0;
  const dims: Record<string, Record<string, number[]>> = Object.fromEntries(
    copilots.map((c) => [c, Object.fromEntries(CAB_DIMENSIONS.map((d) => [d, [] as number[]]))]),
  );
  const ranks: Record<string, number[]> = Object.fromEntries(copilots.map((c) => [c, [] as number[]]));
  const flags: Record<string, Record<string, number[]>> = Object.fromEntries(
    copilots.map((c) => [c, Object.fromEntries(CAB_TAXONOMY.map((f) => [f, [] as number[]]))]),
  );

  for (const q of queries) {
    const scoresOf = new Map<string, Record<string, number>>();
    for (const c of copilots) {
      const j = judgmentOf.get(key(q.id, c));
      const ok = j?.status === 'ok' && j.scores !== null;
      if (!ok) differ.scores++;
      const scores = Object.fromEntries(CAB_DIMENSIONS.map((d) => [d, ok ? j!.scores![d] : minScore]));
      scoresOf.set(c, scores);
      for (const d of CAB_DIMENSIONS) dims[c][d].push(scores[d]);
      // The reference's taxonomy run reads only rows with a response; a check that failed counts every flag present.
      if (args.taxonomy && args.collected.has(key(q.id, c))) {
        const checked = j?.scores?.[taxonomyKey(CAB_TAXONOMY[0])] !== undefined;
        if (!checked) differ.flags++;
        for (const f of CAB_TAXONOMY) flags[c][f].push(checked ? j!.scores![taxonomyKey(f)] : 1);
      }
    }
    const ranked = copilots.some((c) => judgmentOf.get(key(q.id, c))?.rank != null);
    let rankOf: (c: string) => number;
    if (ranked) rankOf = (c) => judgmentOf.get(key(q.id, c))?.rank ?? n;
    else {
      rankedByTotal++;
      // Python's sort is stable: equal sums keep the order the responses were scored in (shown first, then the rest).
      const order = copilots
        .map((c, i) => ({
          c,
          at: judgmentOf.get(key(q.id, c))?.position ?? n + i,
          sum: CAB_DIMENSIONS.reduce((s, d) => s + scoresOf.get(c)![d], 0),
        }))
        .sort((a, b) => a.at - b.at)
        .sort((a, b) => b.sum - a.sum)
        .map((x) => x.c);
      rankOf = (c) => order.indexOf(c) + 1;
    }
    for (const c of copilots) {
      const rank = rankOf(c);
      if (rank !== judgmentOf.get(key(q.id, c))?.rank) differ.ranks++;
      ranks[c].push(rank);
    }
  }
  const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);
  const systems = Object.fromEntries(
    copilots.map((c) => {
      const dimensions = Object.fromEntries(CAB_DIMENSIONS.map((d) => [d, meanOrNull(dims[c][d])]));
      return [
        c,
        {
          score: meanOfDimensionMeans(dimensions),
          dimensions,
          meanRank: meanOrNull(ranks[c]),
          wins: ranks[c].filter((r) => r === 1).length,
          taxonomy: args.taxonomy ? Object.fromEntries(CAB_TAXONOMY.map((f) => [f, meanOrNull(flags[c][f])])) : null,
        },
      ];
    }),
  );
  return { items: queries.length * copilots.length, differ, rankedByTotal, systems };
}
