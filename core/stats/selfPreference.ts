/**
 * Self-preference of a judge panel: how much more a judge gives its own model family's copilot than its scale and
 * offset, and the copilot's quality, explain.
 *
 * The model, fitted by alternating least squares on every judge's per-query totals (a judge's mean over its samples of
 * one (query, copilot) unit, on the copilot's score scale):
 *
 *     total[judge, unit] = offset[judge] + scale[judge] · quality[unit] + selfPreference[judge] · own(judge, unit) + error
 *
 * `quality` is the consensus quality of that copilot's answer to that query, estimated from all judges at once (each
 * judge's total put back on the common scale by its own offset and scale), `own` is 1 when the judge has a family and
 * the unit's copilot shares it. A judge +4 on every copilot has an offset; a judge that stretches the scale by 1.3 has
 * a scale; neither is self-preference, even when its family's copilot is the best (a stretched scale then raises that
 * copilot most, which an offset-only model read as preference). With two judges the scales cannot be told from the
 * noise: the model keeps offsets only (scale 1) and says so.
 *
 * The test: a query-level jackknife standard error of the own-family term (each query left out in turn and the model
 * refitted: it carries the consensus' own estimation error), t with (queries − 1) df, two-sided; Holm across every
 * (judge, copilot) pair of the panel; a pair is flagged only when its Holm-adjusted p is below 0.05, the term is
 * positive (self-preference is a preference for one's own family: a judge significantly harsher on its own family is
 * reported by its term and p, not flagged as self-preferring) and the judge scored at least
 * MIN_SELF_PREFERENCE_QUERIES queries. So a flag is a one-sided test at α/2 per pair, Holm-adjusted: a judge without
 * own-family preference is flagged in about α/4–α/2 of runs, and the panel's familywise false-flag rate is about
 * α/2 (both measured in `judgeflow bench --only stats`). A term the design cannot separate from the others (every
 * judge that scored the copilot is of its family, or the judge scored only its own family) is null.
 */
import { holmAdjust, solvePositiveDefinite, studentTCdf, studentTQuantile } from './stats';

/** Below this many queries no pair is flagged (the jackknife t test needs them to hold its 5%). */
export const MIN_SELF_PREFERENCE_QUERIES = 10;
export const SELF_PREFERENCE_ALPHA = 0.05;

export interface SelfPreferenceEntry {
  judge: string;
  copilot: string;
  family: string;
  /** The judge's own-family term, in points of the copilot's score (null when not estimable). */
  difference: number | null;
  ci95: { low: number; high: number } | null;
  /** Two-sided jackknife t test of the term, and Holm-adjusted across the panel's pairs. */
  p: number | null;
  pHolm: number | null;
  /** The judge's scale against the consensus (1: as the panel's average judge); null in the offset-only model. */
  scale: number | null;
  model: 'scale and offset' | 'offset only (two judges)';
  queries: number;
  /** pHolm < 0.05, a positive term, and at least MIN_SELF_PREFERENCE_QUERIES queries. */
  flagged: boolean;
}

export interface SelfPreferenceInput {
  judges: Array<{ name: string; family?: string }>;
  copilotFamilies: Record<string, string | undefined>;
  /** One judge's per-query total of one unit (already the mean over that judge's samples). */
  totals: Array<{ judge: string; queryId: string; copilot: string; total: number }>;
}

interface Row {
  judge: number;
  unit: number;
  query: number;
  y: number;
  own: boolean;
}

interface Fit {
  offset: number[];
  scale: number[];
  own: number[];
  quality: number[];
}

const ITERATIONS = 200;

/** Alternating least squares of the model above on `rows` (those of left-out queries dropped), warm-started from `start`. */
function fitModel(
  rows: Row[],
  judges: number,
  units: number,
  withScale: boolean,
  ownTerm: boolean[],
  start?: Fit,
): Fit {
  const fit: Fit = start
    ? { offset: [...start.offset], scale: [...start.scale], own: [...start.own], quality: [...start.quality] }
    : {
        offset: new Array(judges).fill(0),
        scale: new Array(judges).fill(1),
        own: new Array(judges).fill(0),
        quality: new Array(units).fill(0),
      };
  const byJudge = Array.from({ length: judges }, () => [] as Row[]);
  for (const r of rows) byJudge[r.judge].push(r);
  const present = new Array<boolean>(units).fill(false);
  for (const r of rows) present[r.unit] = true;
  if (!start) {
    const sums = new Array<number>(units).fill(0);
    const counts = new Array<number>(units).fill(0);
    for (const r of rows) {
      sums[r.unit] += r.y;
      counts[r.unit]++;
    }
    for (let u = 0; u < units; u++) fit.quality[u] = counts[u] ? sums[u] / counts[u] : 0;
  }
  const num = new Array<number>(units);
  const den = new Array<number>(units);
  for (let it = 0; it < ITERATIONS; it++) {
    let change = 0;
    for (let j = 0; j < judges; j++) {
      const cols = [0, ...(withScale ? [1] : []), ...(ownTerm[j] ? [2] : [])];
      const xtx = [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ];
      const xty = [0, 0, 0];
      for (const r of byJudge[j]) {
        const x = [1, fit.quality[r.unit], r.own ? 1 : 0];
        const target = withScale ? r.y : r.y - fit.quality[r.unit];
        for (const a of cols) {
          xty[a] += x[a] * target;
          for (const b of cols) xtx[a][b] += x[a] * x[b];
        }
      }
      const beta = solvePositiveDefinite(xtx, xty, cols);
      if (!beta) continue;
      const next = [0, 1, 0];
      cols.forEach((c, k) => (next[c] = beta[k]));
      change = Math.max(change, Math.abs(next[0] - fit.offset[j]), Math.abs(next[2] - fit.own[j]));
      [fit.offset[j], fit.scale[j], fit.own[j]] = withScale ? next : [next[0], 1, next[2]];
    }
    num.fill(0);
    den.fill(0);
    for (const r of rows) {
      const b = fit.scale[r.judge];
      num[r.unit] += b * (r.y - fit.offset[r.judge] - (r.own ? fit.own[r.judge] : 0));
      den[r.unit] += b * b;
    }
    // The common scale is fixed by its mean (0) and, with scales, its spread (the raw totals' average spread).
    let m = 0;
    let k = 0;
    for (let u = 0; u < units; u++)
      if (present[u] && den[u] > 0) {
        fit.quality[u] = num[u] / den[u];
        m += fit.quality[u];
        k++;
      }
    m /= k || 1;
    let ss = 0;
    for (let u = 0; u < units; u++) if (present[u]) ss += (fit.quality[u] - m) ** 2;
    const sd = Math.sqrt(ss / Math.max(1, k - 1));
    const factor = withScale && sd > 0 ? 1 / sd : 1;
    for (let u = 0; u < units; u++) if (present[u]) fit.quality[u] = (fit.quality[u] - m) * factor;
    if (change < 1e-10 && it > 2) break;
  }
  return fit;
}

export function selfPreference(input: SelfPreferenceInput): SelfPreferenceEntry[] {
  const pairs = input.judges.flatMap((j) =>
    Object.keys(input.copilotFamilies)
      .filter((c) => j.family && input.copilotFamilies[c] === j.family)
      .map((c) => ({ judge: j.name, copilot: c, family: j.family! })),
  );
  if (!pairs.length) return [];
  const judgeIndex = new Map(input.judges.map((j, i) => [j.name, i]));
  const unitIndex = new Map<string, number>();
  const queryIndex = new Map<string, number>();
  const unitCopilot: string[] = [];
  const rows: Row[] = [];
  for (const t of input.totals) {
    const j = judgeIndex.get(t.judge);
    if (j === undefined || !Number.isFinite(t.total)) continue;
    const key = `${t.queryId}\u0000${t.copilot}`;
    if (!unitIndex.has(key)) {
      unitIndex.set(key, unitIndex.size);
      unitCopilot.push(t.copilot);
    }
    if (!queryIndex.has(t.queryId)) queryIndex.set(t.queryId, queryIndex.size);
    const family = input.judges[j].family;
    rows.push({
      judge: j,
      unit: unitIndex.get(key)!,
      query: queryIndex.get(t.queryId)!,
      y: t.total,
      own: !!family && input.copilotFamilies[t.copilot] === family,
    });
  }
  const J = input.judges.length;
  const withScale = new Set(rows.map((r) => r.judge)).size >= 3;
  // A term is estimable when the judge also scored other copilots and someone outside the family scored the copilot.
  const estimable = (judge: number, copilot: string) => {
    const family = input.judges[judge].family;
    const mine = rows.filter((r) => r.judge === judge);
    return (
      mine.some((r) => r.own) &&
      mine.some((r) => !r.own) &&
      rows.some((r) => unitCopilot[r.unit] === copilot && input.judges[r.judge].family !== family)
    );
  };
  const ownTerm = input.judges.map((_, j) =>
    pairs.some((p) => judgeIndex.get(p.judge) === j && estimable(j, p.copilot)),
  );
  const U = unitIndex.size;
  const Q = queryIndex.size;
  const full = fitModel(rows, J, U, withScale, ownTerm);
  // Query jackknife: refit without each query in turn.
  const leaveOut = Array.from(
    { length: Q },
    (_, q) =>
      fitModel(
        rows.filter((r) => r.query !== q),
        J,
        U,
        withScale,
        ownTerm,
        full,
      ).own,
  );
  const meanScale = full.scale.reduce((s, b) => s + Math.abs(b), 0) / J;
  type Tested = {
    pair: (typeof pairs)[number];
    j: number;
    queries: number;
    difference: number | null;
    ci95: { low: number; high: number } | null;
    p: number | null;
  };
  const tested = pairs.map((pair): Tested => {
    const j = judgeIndex.get(pair.judge)!;
    const queries = new Set(rows.filter((r) => r.judge === j).map((r) => r.query)).size;
    if (!ownTerm[j] || !estimable(j, pair.copilot) || Q < 3)
      return { pair, j, queries, difference: null, ci95: null, p: null };
    const difference = full.own[j];
    const mean = leaveOut.reduce((s, f) => s + f[j], 0) / Q;
    const se = Math.sqrt(((Q - 1) / Q) * leaveOut.reduce((s, f) => s + (f[j] - mean) ** 2, 0));
    const t = studentTQuantile(0.975, Q - 1);
    const p = se > 0 ? 2 * (1 - studentTCdf(Math.abs(difference) / se, Q - 1)) : difference === 0 ? 1 : 0;
    return { pair, j, queries, difference, ci95: { low: difference - t * se, high: difference + t * se }, p };
  });
  const withP = tested.filter((x) => x.p !== null);
  const adjusted = holmAdjust(withP.map((x) => x.p!));
  const holm = new Map(withP.map((x, i) => [x, adjusted[i]]));
  return tested.map((x) => {
    const pHolm = holm.get(x) ?? null;
    return {
      ...x.pair,
      difference: x.difference,
      ci95: x.ci95,
      p: x.p,
      pHolm,
      scale: withScale && meanScale > 0 ? full.scale[x.j] / meanScale : null,
      model: withScale ? 'scale and offset' : 'offset only (two judges)',
      queries: x.queries,
      flagged:
        pHolm !== null &&
        pHolm < SELF_PREFERENCE_ALPHA &&
        x.difference !== null &&
        x.difference > 0 &&
        x.queries >= MIN_SELF_PREFERENCE_QUERIES,
    };
  });
}
