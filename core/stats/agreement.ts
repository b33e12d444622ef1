/**
 * Agreement and reliability of judges: the same unit (a response, a query's ranking) judged several times,
 * by one judge sampled repeatedly or by a panel. Pure functions over plain numbers, checked in
 * test/core/stats/agreement.test.ts against published worked examples.
 *
 * Layout convention: `units[u][r]` is the value rater (or sample) r gave unit u; null/undefined/NaN = missing.
 */
import { mean } from './stats';

export type Ratings = Array<Array<number | null | undefined>>;

const present = (row: Array<number | null | undefined>): number[] =>
  row.filter((v): v is number => typeof v === 'number' && !Number.isNaN(v));

/**
 * Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"): 1 − observed /
 * expected disagreement, computed from the coincidence of pairable values, so any number of raters and
 * missing values are fine. Units with fewer than two values are not pairable and are ignored.
 * `interval`: squared difference; `nominal`: 0 when equal, 1 otherwise.
 * Returns NaN when there is no expected disagreement (every pairable value identical) or nothing is pairable.
 */
export function krippendorffAlpha(units: Ratings, metric: 'interval' | 'nominal' = 'interval'): number {
  // Σ over ordered pairs i ≠ j of δ(v_i, v_j), in closed form.
  const pairSum = (values: number[]): number => {
    const m = values.length;
    if (metric === 'interval') {
      let s = 0;
      let s2 = 0;
      for (const v of values) {
        s += v;
        s2 += v * v;
      }
      return 2 * (m * s2 - s * s);
    }
    const counts = new Map<number, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    let same = 0;
    for (const c of counts.values()) same += c * c;
    return m * m - same;
  };
  const pairable = units.map(present).filter((v) => v.length >= 2);
  const all = pairable.flat();
  const n = all.length;
  if (n < 2) return NaN;
  let observed = 0;
  for (const v of pairable) observed += pairSum(v) / (v.length - 1);
  const expected = pairSum(all);
  if (expected <= 1e-12 * Math.max(1, Math.abs(observed))) return NaN;
  return 1 - ((n - 1) * observed) / expected;
}

/** Krippendorff's alpha for nominal labels (e.g. annotators' winner choices); null where alpha is undefined. */
export function krippendorffAlphaNominal(units: string[][]): number | null {
  const codes = new Map<string, number>();
  const code = (label: string) => codes.get(label) ?? codes.set(label, codes.size).get(label)!;
  const alpha = krippendorffAlpha(
    units.map((u) => u.map(code)),
    'nominal',
  );
  return Number.isNaN(alpha) ? null : alpha;
}

export interface IntraclassCorrelations {
  /** One-way random effects, single rater: raters are interchangeable draws (e.g. repeated samples of one judge). */
  icc1: number;
  /** Two-way random effects, absolute agreement, single rater (Shrout & Fleiss ICC(2,1)): a judge panel drawn from many. */
  icc2: number;
  /** Two-way mixed effects, consistency, single rater (ICC(3,1)): these judges only; a constant offset is not disagreement. */
  icc3: number;
  units: number;
  raters: number;
}

/**
 * Shrout & Fleiss (1979) intraclass correlations from the ANOVA mean squares of a complete units × raters
 * table (units with a missing value are dropped). NaN where undefined (fewer than 2 units or raters, or no
 * variance at all).
 */
export function intraclassCorrelation(units: Ratings): IntraclassCorrelations {
  const k = Math.max(0, ...units.map((u) => u.length));
  const rows = units.map(present).filter((v, i) => v.length === k && units[i].length === k);
  const n = rows.length;
  if (n < 2 || k < 2) return { icc1: NaN, icc2: NaN, icc3: NaN, units: n, raters: k };
  const grand = mean(rows.flat());
  const rowMeans = rows.map(mean);
  const colMeans = Array.from({ length: k }, (_, j) => mean(rows.map((r) => r[j])));
  const ssRows = k * rowMeans.reduce((s, m) => s + (m - grand) ** 2, 0);
  const ssCols = n * colMeans.reduce((s, m) => s + (m - grand) ** 2, 0);
  const ssTotal = rows.flat().reduce((s, x) => s + (x - grand) ** 2, 0);
  const ssError = Math.max(0, ssTotal - ssRows - ssCols);
  const msr = ssRows / (n - 1);
  const msc = ssCols / (k - 1);
  const mse = ssError / ((n - 1) * (k - 1));
  const msw = (ssCols + ssError) / (n * (k - 1));
  const ratio = (num: number, den: number) => (den > 0 ? num / den : NaN);
  return {
    icc1: ratio(msr - msw, msr + (k - 1) * msw),
    icc2: ratio(msr - mse, msr + (k - 1) * mse + (k * (msc - mse)) / n),
    icc3: ratio(msr - mse, msr + (k - 1) * mse),
    units: n,
    raters: k,
  };
}

/** Kendall's tau-b between two paired lists (ties in either are corrected for); NaN if either is constant. */
export function kendallTauB(x: number[], y: number[]): number {
  if (x.length !== y.length)
    throw new RangeError(`kendallTauB needs paired samples, got lengths ${x.length} and ${y.length}`);
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  const n = x.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const dx = Math.sign(x[i] - x[j]);
      const dy = Math.sign(y[i] - y[j]);
      if (dx === 0 && dy === 0) continue;
      if (dx === 0) tiesX++;
      else if (dy === 0) tiesY++;
      else if (dx === dy) concordant++;
      else discordant++;
    }
  }
  const den = Math.sqrt((concordant + discordant + tiesX) * (concordant + discordant + tiesY));
  return den > 0 ? (concordant - discordant) / den : NaN;
}

export interface WithinUnitSpread {
  /** Pooled within-unit standard deviation: √(Σ_u Σ (x − x̄_u)² / Σ_u (m_u − 1)) over units with ≥ 2 values. */
  sd: number;
  /** Share of those units whose largest and smallest values differ by at least `threshold`. */
  disagreeShare: number;
  /** Units with at least two values. */
  units: number;
}

/** How much repeated judgments of the same unit spread (NaN figures when no unit has two values). */
export function withinUnitSpread(units: Ratings, threshold = 2): WithinUnitSpread {
  const rows = units.map(present).filter((v) => v.length >= 2);
  if (!rows.length) return { sd: NaN, disagreeShare: NaN, units: 0 };
  let ss = 0;
  let df = 0;
  let disagree = 0;
  for (const v of rows) {
    const m = mean(v);
    ss += v.reduce((s, x) => s + (x - m) ** 2, 0);
    df += v.length - 1;
    if (Math.max(...v) - Math.min(...v) >= threshold - 1e-9) disagree++;
  }
  return { sd: Math.sqrt(ss / df), disagreeShare: disagree / rows.length, units: rows.length };
}
