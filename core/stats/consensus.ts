/**
 * From every stored verdict (each sample of each judge) to the one verdict per query × copilot that reports, compare,
 * studies and pruning read: the mean over a judge's successful samples, then the panel's aggregate over its judges.
 * A query × copilot with a single verdict is passed through unchanged, so a run judged once by one judge reports
 * exactly what it reported before samples and panels existed.
 */
import { mean } from './stats';
import type { StoredJudgment } from '../model/types';

export type PanelAggregate = 'mean' | 'median';

/** How a unit without a panel verdict (too few judges gave one) starts its error, so reports can count them apart. */
export const PANEL_QUORUM_ERROR = 'too few judges';

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const aggregateOf = (how: PanelAggregate): ((xs: number[]) => number) => (how === 'median' ? median : mean);

const key = (j: Pick<StoredJudgment, 'queryId' | 'copilot'>) => `${j.queryId}\u0000${j.copilot}`;
const judgeOf = (j: StoredJudgment) => j.judgeName ?? '';

/** Rows grouped by query × copilot, in first-seen order. */
export function byUnit(rows: StoredJudgment[]): StoredJudgment[][] {
  const groups = new Map<string, StoredJudgment[]>();
  for (const j of rows) {
    const g = groups.get(key(j));
    if (g) g.push(j);
    else groups.set(key(j), [j]);
  }
  return [...groups.values()];
}

/** Rows grouped by judge name, in first-seen order. */
export function byJudge(rows: StoredJudgment[]): Map<string, StoredJudgment[]> {
  const out = new Map<string, StoredJudgment[]>();
  for (const j of rows) out.set(judgeOf(j), [...(out.get(judgeOf(j)) ?? []), j]);
  return out;
}

/** One judge's verdict on one response: the mean of its ok samples' scores and totals (null when none succeeded). */
export function judgeMean(
  samples: StoredJudgment[],
): { scores: Record<string, number>; total: number | null; rank: number | null } | null {
  const ok = samples.filter((j) => j.status === 'ok');
  if (!ok.length) return null;
  const keys = [...new Set(ok.flatMap((j) => Object.keys(j.scores ?? {})))];
  const scores = Object.fromEntries(
    keys.map((k) => [k, mean(ok.filter((j) => j.scores?.[k] !== undefined).map((j) => j.scores![k]))]),
  );
  const totals = ok.filter((j) => j.total !== null).map((j) => j.total!);
  const ranks = samples.filter((j) => j.rank !== null).map((j) => j.rank!);
  return { scores, total: totals.length ? mean(totals) : null, rank: ranks.length ? mean(ranks) : null };
}

/**
 * One verdict per query × copilot. Scores and total: each judge's mean over its ok samples, then `aggregate` over the
 * judges that have one. Rank (protocols that rank): the same mean of ranks, turned back into a rank among the query's
 * copilots (ties share the better rank). Rationales, position and stamp come from the first ok verdict (first judge,
 * lowest sample). A query × copilot with no ok verdict keeps its first failure; one with fewer than `minJudges` judges
 * giving a verdict (a panel's quorum, see minJudgesOf) has no panel verdict either: a failure saying how many judged.
 */
export function consensusJudgments(
  rows: StoredJudgment[],
  aggregate: PanelAggregate = 'mean',
  minJudges = 1,
): StoredJudgment[] {
  const agg = aggregateOf(aggregate);
  const meanRank = new Map<string, number>();
  const out = byUnit(rows).map((group) => {
    if (group.length === 1) {
      if (group[0].rank !== null) meanRank.set(key(group[0]), group[0].rank);
      return group[0];
    }
    const means = [...byJudge(group).values()].map(judgeMean).filter((m): m is NonNullable<typeof m> => m !== null);
    const first = group.find((j) => j.status === 'ok');
    const ranks = means.filter((m) => m.rank !== null).map((m) => m.rank!);
    if (!first) {
      const failed = group[0];
      return {
        ...failed,
        error: `all ${group.length} verdicts failed; first: ${failed.error ?? 'no reason recorded'}`,
      };
    }
    if (means.length < minJudges) {
      const judges = byJudge(group);
      const failed = [...judges.entries()]
        .filter(([, samples]) => !samples.some((j) => j.status === 'ok'))
        .map(([name, samples]) => `${name || 'judge'}: ${samples[0].error ?? 'no reason recorded'}`);
      return {
        ...first,
        status: 'failed' as const,
        scores: null,
        rationales: null,
        total: null,
        rank: null,
        error: `${PANEL_QUORUM_ERROR}: ${means.length} of ${judges.size} judges gave a verdict, panel.minJudges is ${minJudges}; ${failed.slice(0, 3).join('; ')}${failed.length > 3 ? '; …' : ''}`,
      };
    }
    if (ranks.length) meanRank.set(key(first), agg(ranks));
    const keys = [...new Set(means.flatMap((m) => Object.keys(m.scores)))];
    const scores = Object.fromEntries(
      keys.map((k) => [k, agg(means.filter((m) => m.scores[k] !== undefined).map((m) => m.scores[k]))]),
    );
    const totals = means.filter((m) => m.total !== null).map((m) => m.total!);
    return { ...first, scores, total: totals.length ? agg(totals) : null, rank: null };
  });
  // Ranks back as integers among the query's ranked copilots.
  const perQuery = new Map<string, number[]>();
  for (const j of out)
    if (meanRank.has(key(j))) perQuery.set(j.queryId, [...(perQuery.get(j.queryId) ?? []), meanRank.get(key(j))!]);
  return out.map((j) => {
    const mine = meanRank.get(key(j));
    if (mine === undefined || j.rank !== null) return j;
    return { ...j, rank: 1 + perQuery.get(j.queryId)!.filter((r) => r < mine - 1e-9).length };
  });
}
