/**
 * Self-preference of a judge panel: how much more a judge gives its own model family's copilot than its usual
 * leniency and the copilot's quality explain.
 *
 * The model, fitted by least squares on every judge's per-query totals (a judge's mean over its samples of one
 * (query, copilot) unit, on the copilot's score scale):
 *
 *     total[judge, unit] = unit + leniency[judge] + selfPreference[judge] · own(judge, unit) + error
 *
 * `unit` is the quality of that copilot's answer to that query (copilot quality, query difficulty and their
 * interaction, absorbed by centring within the unit), `leniency` a judge's shift on every copilot, and `own` is 1
 * when the judge has a family and the unit's copilot shares it. One own-family term per judge that has one: a judge
 * +4 on every copilot is lenient, not self-preferring, and another judge's self-preference does not leak into the
 * baseline (each has its own term), which a difference of the panel score with and without the judge mixed together.
 * The interval resamples queries (a query's units and all its judges' totals stay together, seeded percentile
 * bootstrap); a pair is flagged only when that interval excludes zero. A term that the design cannot separate from
 * the units and leniencies (every judge of the family, or the judge scoring only its own family) is null.
 */
import { bootstrapIntervals, solvePositiveDefinite } from './stats';

export interface SelfPreferenceEntry {
  judge: string;
  copilot: string;
  family: string;
  /** The judge's own-family term, in points of the copilot's score (null when not estimable). */
  difference: number | null;
  ci95: { low: number; high: number } | null;
  /** The interval excludes zero. */
  flagged: boolean;
}

export interface SelfPreferenceInput {
  judges: Array<{ name: string; family?: string }>;
  copilotFamilies: Record<string, string | undefined>;
  /** One judge's per-query total of one unit (already the mean over that judge's samples). */
  totals: Array<{ judge: string; queryId: string; copilot: string; total: number }>;
  iterations?: number;
  seed?: string;
}

interface QueryMoments {
  xtx: number[][];
  xty: number[];
}

/** Of `columns` in order, those kept when each that is (numerically) a combination of the kept ones before it is dropped. */
function independentColumns(xtx: number[][], columns: number[]): number[] {
  const keep: number[] = [];
  for (const c of columns) if (solvePositiveDefinite(xtx, xtx[c], [...keep, c]) !== null) keep.push(c);
  return keep;
}

export function selfPreference(input: SelfPreferenceInput): SelfPreferenceEntry[] {
  const pairs = input.judges.flatMap((j) => Object.keys(input.copilotFamilies).filter((c) => j.family && input.copilotFamilies[c] === j.family).map((c) => ({ judge: j.name, copilot: c, family: j.family! })));
  if (!pairs.length) return [];
  const judgeIndex = new Map(input.judges.map((j, i) => [j.name, i]));
  const familyJudges = input.judges.filter((j) => pairs.some((p) => p.judge === j.name));
  // Columns: leniency of every judge but the first (treatment coding), then one own-family term per family judge.
  const p = input.judges.length - 1 + familyJudges.length;
  const ownColumn = new Map(familyJudges.map((j, i) => [j.name, input.judges.length - 1 + i]));
  const byUnit = new Map<string, Array<{ x: number[]; y: number }>>();
  const queryOfUnit = new Map<string, string>();
  for (const t of input.totals) {
    const j = judgeIndex.get(t.judge);
    if (j === undefined || !Number.isFinite(t.total)) continue;
    const x = new Array<number>(p).fill(0);
    if (j > 0) x[j - 1] = 1;
    const own = ownColumn.get(t.judge);
    if (own !== undefined && input.copilotFamilies[t.copilot] === input.judges[j].family) x[own] = 1;
    const key = `${t.queryId}\u0000${t.copilot}`;
    byUnit.set(key, [...(byUnit.get(key) ?? []), { x, y: t.total }]);
    queryOfUnit.set(key, t.queryId);
  }
  // Centring within the unit absorbs its effect (Frisch–Waugh–Lovell); a query's moments then add up across resamples.
  const moments = new Map<string, QueryMoments>();
  for (const [key, rows] of byUnit) {
    const q = queryOfUnit.get(key)!;
    const m = moments.get(q) ?? { xtx: Array.from({ length: p }, () => new Array<number>(p).fill(0)), xty: new Array<number>(p).fill(0) };
    const xm = new Array<number>(p).fill(0);
    let ym = 0;
    for (const r of rows) {
      for (let a = 0; a < p; a++) xm[a] += r.x[a] / rows.length;
      ym += r.y / rows.length;
    }
    for (const r of rows) {
      const xc = r.x.map((v, a) => v - xm[a]);
      for (let a = 0; a < p; a++) {
        m.xty[a] += xc[a] * (r.y - ym);
        for (let b = 0; b < p; b++) m.xtx[a][b] += xc[a] * xc[b];
      }
    }
    moments.set(q, m);
  }
  const queries = [...moments.keys()].sort();
  const sum = (sample: QueryMoments[]) => {
    const xtx = Array.from({ length: p }, () => new Array<number>(p).fill(0));
    const xty = new Array<number>(p).fill(0);
    for (const m of sample)
      for (let a = 0; a < p; a++) {
        xty[a] += m.xty[a];
        for (let b = 0; b < p; b++) xtx[a][b] += m.xtx[a][b];
      }
    return { xtx, xty };
  };
  const all = sum(queries.map((q) => moments.get(q)!));
  const keep = independentColumns(all.xtx, [...Array(p).keys()]);
  // A term is identified only if its column is outside the span of all the others: then every least-squares solution
  // gives it the same value (the greedy basis above keeps it); otherwise it is aliased and null.
  const terms = familyJudges.map((j) => ownColumn.get(j.name)!);
  const identified = terms.map((c) => independentColumns(all.xtx, [...Array(p).keys()].filter((d) => d !== c)).length < keep.length);
  const estimate = (s: { xtx: number[][]; xty: number[] }) => {
    const beta = solvePositiveDefinite(s.xtx, s.xty, keep);
    return terms.map((c, t) => (beta && identified[t] ? beta[keep.indexOf(c)] : NaN));
  };
  const point = estimate(all);
  const intervals = bootstrapIntervals(queries.map((q) => moments.get(q)!), (sample) => estimate(sum(sample)), { iterations: input.iterations ?? 1000, seed: input.seed ?? 'judgeflow/self-preference' });
  return pairs.map((pair) => {
    const t = familyJudges.findIndex((j) => j.name === pair.judge);
    const difference = Number.isFinite(point[t]) ? point[t] : null;
    const ci95 = difference === null ? null : intervals[t];
    return { ...pair, difference, ci95, flagged: ci95 !== null && (ci95.low > 0 || ci95.high < 0) };
  });
}
