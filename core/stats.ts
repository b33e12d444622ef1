/**
 * Small, dependency-free statistics for comparing copilots.
 *
 * Everything here is pure JavaScript (no node: imports) so it can run anywhere, including inside a
 * Temporal workflow sandbox, and every resampling procedure is driven by a seeded PRNG so that a
 * report regenerated from the same scores prints the same intervals and p-values.
 */
import { randomIndex, seededRandom } from './random';

// ---------------------------------------------------------------------------------------------
// Descriptive statistics and the bootstrap
// ---------------------------------------------------------------------------------------------

/** Arithmetic mean; NaN for an empty array (there is no meaningful default). */
export function mean(xs: number[]): number {
  if (xs.length === 0) return NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Linear-interpolation quantile (R type 7, numpy's default "linear") of an already sorted array. */
export function quantileSorted(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

function checkLevel(level: number): void {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be in (0, 1), got ${level}`);
}

function checkIterations(iterations: number): void {
  if (!Number.isInteger(iterations) || iterations < 1) {
    throw new RangeError(`iterations must be a positive integer, got ${iterations}`);
  }
}

const DEFAULT_SEED = 'judgeflow';

/**
 * Percentile bootstrap confidence interval for the mean. Returns null for fewer than two values,
 * where resampling can only reproduce the single observation and an interval would be misleading.
 */
export function bootstrapMeanCI(
  xs: number[],
  opts: { iterations?: number; level?: number; seed?: string } = {},
): { low: number; high: number } | null {
  const iterations = opts.iterations ?? 2000;
  const level = opts.level ?? 0.95;
  checkIterations(iterations);
  checkLevel(level);
  if (xs.length < 2) return null;

  const rand = seededRandom(opts.seed ?? DEFAULT_SEED);
  const n = xs.length;
  const means = new Array<number>(iterations);
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += xs[randomIndex(rand, n)];
    means[it] = sum / n;
  }
  means.sort((x, y) => x - y);
  const tail = (1 - level) / 2;
  return { low: quantileSorted(means, tail), high: quantileSorted(means, 1 - tail) };
}

// ---------------------------------------------------------------------------------------------
// Paired comparison
// ---------------------------------------------------------------------------------------------

export interface PairedTest {
  n: number;
  /** mean(b - a): positive means b scored higher. */
  meanDiff: number;
  /** Paired bootstrap 95% CI of mean(b - a); null when n < 2. */
  ci95: { low: number; high: number } | null;
  pValue: number;
  /** pValue < alpha */
  significant: boolean;
}

/**
 * Two-sided sign-flip permutation p-value for H0: the paired differences are symmetric around 0.
 *
 * When 2^n fits in the iteration budget every sign pattern is enumerated, giving the exact p-value;
 * otherwise random flips are drawn and the (count + 1) / (iterations + 1) estimate is used, which
 * counts the observed labelling and so never reports an impossible p of 0.
 */
function signFlipPValue(diffs: number[], iterations: number, rand: () => number): number {
  const n = diffs.length;
  let observed = 0;
  let scale = 0;
  for (const d of diffs) {
    observed += d;
    scale += Math.abs(d);
  }
  // Sums that equal the observed one mathematically may differ in the last bits after reordering.
  const threshold = Math.abs(observed) - 1e-9 * scale;

  if (n <= 30 && 2 ** n <= iterations) {
    const patterns = 2 ** n;
    let extreme = 0;
    for (let mask = 0; mask < patterns; mask++) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += mask & (2 ** i) ? -diffs[i] : diffs[i];
      if (Math.abs(sum) >= threshold) extreme++;
    }
    return extreme / patterns;
  }

  let extreme = 0;
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += rand() < 0.5 ? -diffs[i] : diffs[i];
    if (Math.abs(sum) >= threshold) extreme++;
  }
  return (extreme + 1) / (iterations + 1);
}

/**
 * Compares two copilots scored on the same queries: a[i] and b[i] belong to query i.
 * The p-value comes from a sign-flip permutation test on b - a (no normality assumption, which
 * matters for bounded, lumpy judge scores) and the CI from a paired bootstrap of b - a.
 */
export function pairedTest(
  a: number[],
  b: number[],
  opts: { iterations?: number; seed?: string; alpha?: number } = {},
): PairedTest {
  if (a.length !== b.length) {
    throw new RangeError(`pairedTest needs paired samples, got lengths ${a.length} and ${b.length}`);
  }
  const iterations = opts.iterations ?? 5000;
  const alpha = opts.alpha ?? 0.05;
  const seed = opts.seed ?? DEFAULT_SEED;
  checkIterations(iterations);

  const diffs = a.map((x, i) => b[i] - x);
  if (diffs.some((d) => !Number.isFinite(d))) throw new RangeError('pairedTest: scores must be finite numbers');

  const n = diffs.length;
  const meanDiff = mean(diffs);
  // No observed difference at all is the strongest possible "no evidence"; the test would say the
  // same (every flip ties), but short-circuiting makes it explicit and avoids float noise.
  const pValue = diffs.every((d) => d === 0) ? 1 : signFlipPValue(diffs, iterations, seededRandom(`${seed}:perm`));
  const ci95 = bootstrapMeanCI(diffs, { iterations, level: 0.95, seed: `${seed}:ci` });
  return { n, meanDiff, ci95, pValue, significant: pValue < alpha };
}

// ---------------------------------------------------------------------------------------------
// Special functions (Numerical Recipes, 3rd ed., §6.1, §6.2, §6.4)
// ---------------------------------------------------------------------------------------------

const EPS = 1e-15;
const FPMIN = 1e-300;
const MAX_ITERATIONS = 10_000;

const LANCZOS = [
  57.1562356658629235, -59.5979603554754912, 14.1360979747417471, -0.491913816097620199,
  0.339946499848118887e-4, 0.465236289270485756e-4, -0.983744753048795646e-4, 0.158088703224912494e-3,
  -0.210264441724104883e-3, 0.217439618115212643e-3, -0.16431810653676389e-3, 0.844182239838527433e-4,
  -0.261908384015814087e-4, 0.368991826595316234e-5,
];

/** ln Γ(x) for x > 0 via the Lanczos approximation (accurate to ~1e-15 relative). */
export function lnGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`lnGamma needs x > 0, got ${x}`);
  let y = x;
  let tmp = x + 5.2421875;
  tmp = (x + 0.5) * Math.log(tmp) - tmp;
  let ser = 0.999999999999997092;
  for (const c of LANCZOS) ser += c / ++y;
  return tmp + Math.log((2.5066282746310005 * ser) / x);
}

/** P(a, x) by its power series; converges quickly for x < a + 1. */
function gammaSeries(a: number, x: number): number {
  let ap = a;
  let del = 1 / a;
  let sum = del;
  for (let i = 0; i < MAX_ITERATIONS; i++) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (Math.abs(del) < Math.abs(sum) * EPS) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - lnGamma(a));
}

/** Q(a, x) by its continued fraction (modified Lentz); converges quickly for x >= a + 1. */
function gammaContinuedFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / FPMIN;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i <= MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = b + an / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return Math.exp(-x + a * Math.log(x) - lnGamma(a)) * h;
}

/**
 * Regularized upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a). Each branch computes Q directly
 * in its own convergence region so small tail probabilities keep their relative precision.
 */
export function gammaQ(a: number, x: number): number {
  if (!(a > 0) || x < 0 || Number.isNaN(x)) throw new RangeError(`gammaQ needs a > 0 and x >= 0, got a=${a}, x=${x}`);
  if (x === 0) return 1;
  if (x === Infinity) return 0;
  return x < a + 1 ? 1 - gammaSeries(a, x) : gammaContinuedFraction(a, x);
}

/** Continued fraction for the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < FPMIN) d = FPMIN;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function betaI(a: number, b: number, x: number): number {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) {
    throw new RangeError(`betaI needs a, b > 0 and 0 <= x <= 1, got a=${a}, b=${b}, x=${x}`);
  }
  if (x === 0 || x === 1) return x;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The continued fraction converges fastest below the mean of the distribution; use the symmetry
  // I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
  return x < (a + 1) / (a + b + 2)
    ? (front * betaContinuedFraction(a, b, x)) / a
    : 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** P(X >= statistic) for X ~ chi-square(df). */
export function chiSquareSurvival(statistic: number, df: number): number {
  if (df <= 0) return 1;
  return gammaQ(df / 2, Math.max(0, statistic) / 2);
}

/** P(X >= f) for X ~ F(df1, df2). */
export function fSurvival(f: number, df1: number, df2: number): number {
  if (f <= 0) return 1;
  if (f === Infinity) return 0;
  return betaI(df2 / 2, df1 / 2, df2 / (df2 + df1 * f));
}

// ---------------------------------------------------------------------------------------------
// Hypothesis tests
// ---------------------------------------------------------------------------------------------

export interface ChiSquareResult {
  statistic: number;
  df: number;
  pValue: number;
}

/**
 * Goodness of fit against equal expected counts, e.g. "does the judge pick position A as often as
 * position B?". With no observations (or a single category) there is nothing to test: p = 1.
 */
export function chiSquareUniform(counts: number[]): ChiSquareResult {
  if (counts.some((c) => !(c >= 0) || !Number.isFinite(c))) {
    throw new RangeError('chiSquareUniform: counts must be finite and non-negative');
  }
  const k = counts.length;
  const df = Math.max(0, k - 1);
  const total = counts.reduce((s, c) => s + c, 0);
  if (k < 2 || total === 0) return { statistic: 0, df, pValue: 1 };
  const expected = total / k;
  let statistic = 0;
  for (const c of counts) statistic += (c - expected) ** 2 / expected;
  return { statistic, df, pValue: chiSquareSurvival(statistic, df) };
}

/**
 * Pearson test of independence on an r x c contingency table. All-zero rows and columns are
 * dropped first: they carry no information and would otherwise divide by a zero expected count
 * and inflate the degrees of freedom.
 */
export function chiSquareIndependence(table: number[][]): ChiSquareResult {
  const width = Math.max(0, ...table.map((row) => row.length));
  const cell = (r: number[], j: number): number => r[j] ?? 0; // ragged rows: missing cells are 0
  if (table.some((row) => row.some((c) => !(c >= 0) || !Number.isFinite(c)))) {
    throw new RangeError('chiSquareIndependence: counts must be finite and non-negative');
  }

  const rows = table.filter((row) => row.some((c) => c > 0));
  const cols = [...Array(width).keys()].filter((j) => rows.some((row) => cell(row, j) > 0));
  const df = Math.max(0, (rows.length - 1) * (cols.length - 1));
  if (df === 0) return { statistic: 0, df, pValue: 1 };

  const rowTotals = rows.map((row) => cols.reduce((s, j) => s + cell(row, j), 0));
  const colTotals = cols.map((j) => rows.reduce((s, row) => s + cell(row, j), 0));
  const total = rowTotals.reduce((s, t) => s + t, 0);

  let statistic = 0;
  rows.forEach((row, i) => {
    cols.forEach((j, jj) => {
      const expected = (rowTotals[i] * colTotals[jj]) / total;
      statistic += (cell(row, j) - expected) ** 2 / expected;
    });
  });
  return { statistic, df, pValue: chiSquareSurvival(statistic, df) };
}

export interface AnovaResult {
  F: number;
  dfBetween: number;
  dfWithin: number;
  pValue: number;
}

/**
 * One-way ANOVA across groups (empty groups are ignored). With fewer than two groups or no
 * within-group degrees of freedom the test is undefined and F and pValue are NaN. If every group
 * is constant: equal constants give F = NaN, p = 1 (nothing differs); distinct constants give
 * F = Infinity, p = 0.
 */
export function oneWayAnova(groups: number[][]): AnovaResult {
  const used = groups.filter((g) => g.length > 0);
  const k = used.length;
  const total = used.reduce((s, g) => s + g.length, 0);
  const dfBetween = k - 1;
  const dfWithin = total - k;
  if (dfBetween < 1 || dfWithin < 1) return { F: NaN, dfBetween, dfWithin, pValue: NaN };

  const grand = mean(used.flat());
  let ssBetween = 0;
  let ssWithin = 0;
  for (const g of used) {
    const m = mean(g);
    ssBetween += g.length * (m - grand) ** 2;
    for (const x of g) ssWithin += (x - m) ** 2;
  }

  if (ssWithin === 0) {
    return ssBetween === 0
      ? { F: NaN, dfBetween, dfWithin, pValue: 1 }
      : { F: Infinity, dfBetween, dfWithin, pValue: 0 };
  }
  const F = ssBetween / dfBetween / (ssWithin / dfWithin);
  return { F, dfBetween, dfWithin, pValue: fSurvival(F, dfBetween, dfWithin) };
}
