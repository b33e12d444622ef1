/**
 * Which copilots can the benchmark actually tell apart? Every pair is compared on the queries both were
 * scored on (a paired sign-flip permutation test), the p-values are Holm-adjusted over all pairs, and
 * copilots are grouped, in score order, into tiers within which no pair is separable.
 */
import { holmAdjust, mean, pairedTest } from './stats';

export interface SeparabilityPair {
  a: string;
  b: string;
  /** Queries both copilots were scored on. */
  n: number;
  /** mean(a − b) over those queries. */
  meanDiff: number | null;
  pValue: number | null;
  /** Holm-adjusted over all pairs. */
  pAdjusted: number | null;
  significant: boolean;
}

export interface Separability {
  pairs: SeparabilityPair[];
  /** Copilots in score order, cut where a copilot is separable from some member of the current tier. */
  tiers: string[][];
  method: string;
  alpha: number;
}

export const SEPARABILITY_METHOD =
  'paired two-sided sign-flip permutation test of per-query scores over the queries both copilots were scored on; Holm correction over all pairs; a tier holds copilots (in score order) no two of which are separable';

/**
 * `scores[copilot]`: per-query score (one number per query: average a query's several judgments first).
 * `order`: copilots best first (the report's headline order); copilots missing from it are appended.
 */
export function separability(
  scores: Record<string, Map<string, number>>,
  order: string[],
  opts: { alpha?: number; seed?: string; iterations?: number } = {},
): Separability {
  const alpha = opts.alpha ?? 0.05;
  const names = [...order.filter((c) => c in scores), ...Object.keys(scores).filter((c) => !order.includes(c))];
  const raw: Array<Omit<SeparabilityPair, 'pAdjusted' | 'significant'>> = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const [a, b] = [names[i], names[j]];
      const shared = [...scores[a].keys()].filter((q) => scores[b].has(q)).sort();
      const xs = shared.map((q) => scores[a].get(q)!);
      const ys = shared.map((q) => scores[b].get(q)!);
      if (shared.length < 2) {
        raw.push({ a, b, n: shared.length, meanDiff: shared.length ? xs[0] - ys[0] : null, pValue: null });
        continue;
      }
      // 2000 sign-flip draws (exact below 11 queries): the smallest p, 1/2001, survives Holm over 45 pairs (10 copilots) at α = 0.05.
      const t = pairedTest(ys, xs, {
        seed: `${opts.seed ?? 'judgeflow'}:separability:${a}:${b}`,
        iterations: opts.iterations ?? 2000,
        alpha,
        ci: false, // a pair's interval is not reported; it was a third of the report's test time (issue 29)
      });
      raw.push({ a, b, n: t.n, meanDiff: mean(xs.map((x, k) => x - ys[k])), pValue: t.pValue });
    }
  }
  const adjusted = holmAdjust(raw.map((p) => p.pValue ?? NaN));
  const pairs = raw.map((p, k) => ({
    ...p,
    pAdjusted: Number.isNaN(adjusted[k]) ? null : adjusted[k],
    significant: !Number.isNaN(adjusted[k]) && adjusted[k] < alpha,
  }));
  const separable = (a: string, b: string) =>
    pairs.some((p) => ((p.a === a && p.b === b) || (p.a === b && p.b === a)) && p.significant);
  const tiers: string[][] = [];
  for (const c of names) {
    const current = tiers[tiers.length - 1];
    if (current && !current.some((m) => separable(m, c))) current.push(c);
    else tiers.push([c]);
  }
  return { pairs, tiers, method: SEPARABILITY_METHOD, alpha };
}

/**
 * One score per query for each copilot (the mean of that query's ok judgments): the unit every interval and
 * paired test resamples, so that several judgments of one query never count as independent evidence.
 */
export function perQueryScores(
  judgments: Array<{ queryId: string; copilot: string; status: string; total: number | null }>,
  copilots: string[],
): Record<string, Map<string, number>> {
  const sums: Record<string, Map<string, [number, number]>> = Object.fromEntries(copilots.map((c) => [c, new Map()]));
  for (const j of judgments) {
    if (j.status !== 'ok' || j.total === null || !sums[j.copilot]) continue;
    const [s, k] = sums[j.copilot].get(j.queryId) ?? [0, 0];
    sums[j.copilot].set(j.queryId, [s + j.total, k + 1]);
  }
  return Object.fromEntries(copilots.map((c) => [c, new Map([...sums[c]].map(([q, [s, k]]) => [q, s / k]))]));
}
