/**
 * Small, dependency-free statistics for comparing copilots.
 *
 * Everything here is pure JavaScript (no node: imports) so it can run anywhere, including inside a
 * Temporal workflow sandbox, and every resampling procedure is driven by a seeded PRNG so that a
 * report regenerated from the same scores prints the same intervals and p-values.
 */
import { randomIndex, seededRandom, seededState } from './random';
import { activeIntervalsAhead } from './intervalsAhead';
import type { IntervalMethod, MeanInterval } from './interval';

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
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
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

export type { IntervalMethod, MeanInterval } from './interval';

/** Below this many units the interval is Student t; from here on BCa bootstrap (see meanCI). */
export const BCA_MIN_N = 100;

/**
 * Confidence interval for the mean of independent units (one value per query: callers average a query's
 * several judgments first, so that the query, not the item, is the resampled unit).
 *
 * `auto` (the default) uses Student's t below BCA_MIN_N units and the BCa bootstrap (queries resampled, seeded)
 * from there on. The percentile bootstrap is too narrow for small n (simulated coverage of a nominal 95%: 84% at
 * n = 5, 91% at n = 10), and BCa, though better, still fell short of t up to n = 50 in simulation (about 91–93%
 * against t's 94–95% on normal and CAB-like scores); from 100 units both cover and BCa follows skewed score
 * distributions more closely (`judgeflow bench --only stats` prints
 * the coverage). `studentized` (bootstrap-t) is available for comparison and is not what reports use. Returns null for
 * fewer than two values, where no interval is meaningful.
 */
export function meanCI(
  xs: number[],
  opts: { iterations?: number; level?: number; seed?: string; method?: IntervalMethod | 'auto' } = {},
): MeanInterval | null {
  const iterations = opts.iterations ?? 2000;
  const level = opts.level ?? 0.95;
  checkIterations(iterations);
  checkLevel(level);
  // Computed ahead, on another thread, for a report (core/stats/intervalsAhead.ts).
  const known = activeIntervalsAhead()?.known({
    values: xs,
    seed: opts.seed ?? DEFAULT_SEED,
    iterations,
    level,
    ...(opts.method ? { method: opts.method } : {}),
  });
  if (known !== undefined) return known;
  const n = xs.length;
  if (n < 2) return null;
  const method: IntervalMethod = !opts.method || opts.method === 'auto' ? (n < BCA_MIN_N ? 't' : 'bca') : opts.method;
  const m = mean(xs);
  const variance = xs.reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1);
  if (variance <= 1e-24 * xs.reduce((s, x) => s + x * x, 0)) return { low: m, high: m, n, method };
  if (method === 't') {
    const half = studentTQuantile(1 - (1 - level) / 2, n - 1) * Math.sqrt(variance / n);
    return { low: m - half, high: m + half, n, method };
  }

  if (method === 'studentized') {
    const rand = seededRandom(opts.seed ?? DEFAULT_SEED);
    // Bootstrap-t (Efron and Tibshirani 1993, ch. 12): the quantiles of t* = (m* − m) / se* replace Student's. A resample
    // with no spread gets t* = ±1e6 (or 0), sorting to the ends as an infinite one would without making NaNs.
    const se = Math.sqrt(variance / n);
    const ts = new Array<number>(iterations);
    for (let it = 0; it < iterations; it++) {
      let sum = 0;
      let sumSq = 0;
      for (let i = 0; i < n; i++) {
        const x = xs[Math.floor(rand() * n)] - m;
        sum += x;
        sumSq += x * x;
      }
      const mStar = sum / n;
      const seStar = Math.sqrt(Math.max(0, (sumSq - n * mStar * mStar) / (n - 1)) / n);
      ts[it] = seStar > 1e-12 * se ? mStar / seStar : Math.sign(mStar) * 1e6;
    }
    ts.sort((x, y) => x - y);
    const tail = (1 - level) / 2;
    return { low: m - quantileSorted(ts, 1 - tail) * se, high: m - quantileSorted(ts, tail) * se, n, method };
  }
  const means = bootstrapMeans(xs, iterations, opts.seed ?? DEFAULT_SEED);
  means.sort();
  const tail = (1 - level) / 2;
  if (method === 'percentile')
    return { low: quantileSorted(means, tail), high: quantileSorted(means, 1 - tail), n, method };

  // BCa (Efron 1987): bias correction z0 from the share of resampled means below the estimate (ties
  // count half), acceleration a from the jackknife skewness of the mean.
  let below = 0;
  for (const b of means) below += b < m ? 1 : b === m ? 0.5 : 0;
  const z0 = normalQuantile(Math.min(1 - 1 / (2 * iterations), Math.max(1 / (2 * iterations), below / iterations)));
  const total = m * n;
  let num = 0;
  let den = 0;
  for (const x of xs) {
    const d = (total - x) / (n - 1) - m; // θ(i) − θ̄: the leave-one-out mean minus their average (= m)
    num += d ** 3;
    den += d ** 2;
  }
  const a = den > 0 ? -num / (6 * den ** 1.5) : 0;
  const adjusted = (z: number) => normalCdf(z0 + (z0 + z) / (1 - a * (z0 + z)));
  return {
    low: quantileSorted(means, adjusted(normalQuantile(tail))),
    high: quantileSorted(means, adjusted(normalQuantile(1 - tail))),
    n,
    method,
  };
}

/**
 * The means of `iterations` resamples of `xs` (n draws with replacement each), drawn from seededRandom(seed)'s stream:
 * resample it, draw i, is xs[floor(u * n)] for the generator's next u, as randomIndex draws. The generator (sfc32,
 * core/stats/random.ts) is stepped here with its state in local variables instead of through a closure: this loop runs
 * n × iterations times per interval (about 70 million draws in a 1,200 × 4 LATTICE report), and the call per draw was
 * most of the report's time (issue 29). Same seed, same numbers as before.
 */
export function bootstrapMeans(xs: ArrayLike<number>, iterations: number, seed: string): Float64Array {
  const n = xs.length;
  const values = Float64Array.from(xs);
  const state = seededState(seed);
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  const means = new Float64Array(iterations);
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      let t = (a + b) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      d = (d + 1) | 0;
      t = (t + d) | 0;
      c = (c + t) | 0;
      sum += values[Math.floor(((t >>> 0) / 4294967296) * n)];
    }
    means[it] = sum / n;
  }
  return means;
}

/** Standard normal CDF Φ(z) via the incomplete gamma function (erfc(x) = Q(1/2, x²)). */
export function normalCdf(z: number): number {
  if (z === Infinity) return 1;
  if (z === -Infinity) return 0;
  const tail = 0.5 * gammaQ(0.5, (z * z) / 2);
  return z >= 0 ? 1 - tail : tail;
}

/** Standard normal quantile Φ⁻¹(p): Acklam's rational approximation polished by one Halley step (|error| < 1e-12). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) {
    if (p === 0) return -Infinity;
    if (p === 1) return Infinity;
    throw new RangeError(`normalQuantile needs 0 <= p <= 1, got ${p}`);
  }
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  let x: number;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    x =
      (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - low) {
    const q = p - 0.5;
    const r = q * q;
    x =
      ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
      (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x =
      -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const e = normalCdf(x) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}

/** P(T <= t) for Student's t with df degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`studentTCdf needs df > 0, got ${df}`);
  if (t === 0) return 0.5;
  const tail = 0.5 * betaI(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

const tQuantiles = new Map<string, number>();

/** Student t quantile by bisection on the CDF (60 halvings: far below any printed precision); memoised. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile needs 0 < p < 1, got ${p}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  const key = `${p}:${df}`;
  const known = tQuantiles.get(key);
  if (known !== undefined) return known;
  const q = bisectTQuantile(p, df);
  if (tQuantiles.size < 10_000) tQuantiles.set(key, q);
  return q;
}

function bisectTQuantile(p: number, df: number): number {
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

// ---------------------------------------------------------------------------------------------
// Paired comparison
// ---------------------------------------------------------------------------------------------

export interface PairedTest {
  n: number;
  /** mean(b - a): positive means b scored higher. */
  meanDiff: number;
  /** 95% CI of mean(b - a) over the pairs (meanCI: t below BCA_MIN_N pairs, BCa bootstrap from there); null when n < 2, or not asked for (`ci: false`). */
  ci95: MeanInterval | null;
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
function signFlipPValue(
  diffs: number[],
  iterations: number,
  seed: string,
  alternative: 'two-sided' | 'less' = 'two-sided',
): number {
  const n = diffs.length;
  let observed = 0;
  let scale = 0;
  for (const d of diffs) {
    observed += d;
    scale += Math.abs(d);
  }
  // Sums that equal the observed one mathematically may differ in the last bits after reordering.
  const slack = 1e-9 * scale;
  const threshold = Math.abs(observed) - slack;
  // Two-sided: |sum| at least |observed|; 'less': sum at most the observed one (as far below 0 or further).
  const extremeSum =
    alternative === 'two-sided'
      ? (sum: number) => Math.abs(sum) >= threshold
      : (sum: number) => sum <= observed + slack;

  if (n <= 30 && 2 ** n <= iterations) {
    const patterns = 2 ** n;
    let extreme = 0;
    for (let mask = 0; mask < patterns; mask++) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += mask & (2 ** i) ? -diffs[i] : diffs[i];
      if (extremeSum(sum)) extreme++;
    }
    return extreme / patterns;
  }

  // seededRandom(seed) stepped in place, as in bootstrapMeans: its u < 0.5 is the 32-bit output's top bit clear, that
  // is the output read as int32 being ≥ 0, so the flips are the ones `rand() < 0.5` drew.
  const values = Float64Array.from(diffs);
  const state = seededState(seed);
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  let extreme = 0;
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      let t = (a + b) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      d = (d + 1) | 0;
      t = (t + d) | 0;
      c = (c + t) | 0;
      // Branch-free: (t >> 31) | 1 is −1 for a negative t and 1 otherwise, so this subtracts values[i] where the branch
      // `t >= 0 ? -values[i] : values[i]` added its negation (the same sums, bit for bit). The branch, taken at random
      // half the time, was mispredicted about every other draw: two thirds of the test's time (issue 29).
      sum -= ((t >> 31) | 1) * values[i];
    }
    if (extremeSum(sum)) extreme++;
  }
  return (extreme + 1) / (iterations + 1);
}

/**
 * One-sided sign-flip p-value for H0: the differences are symmetric around 0, against the alternative that they sit
 * below it (small when the sum is far below 0). Exact when 2^n fits in the iteration budget, as signFlipPValue.
 */
export function signFlipLessPValue(diffs: number[], opts: { iterations?: number; seed?: string } = {}): number {
  const iterations = opts.iterations ?? 5000;
  checkIterations(iterations);
  if (diffs.some((d) => !Number.isFinite(d)))
    throw new RangeError('signFlipLessPValue: differences must be finite numbers');
  if (!diffs.length || diffs.every((d) => d === 0)) return 1;
  return signFlipPValue(diffs, iterations, `${opts.seed ?? DEFAULT_SEED}:perm-less`, 'less');
}

/**
 * Compares two copilots scored on the same queries: a[i] and b[i] belong to query i.
 * The p-value comes from a sign-flip permutation test on b - a (no normality assumption, which
 * matters for bounded, lumpy judge scores) and the CI from meanCI of b - a.
 */
export function pairedTest(
  a: number[],
  b: number[],
  opts: { iterations?: number; seed?: string; alpha?: number; ci?: boolean } = {},
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
  const pValue = diffs.every((d) => d === 0) ? 1 : signFlipPValue(diffs, iterations, `${seed}:perm`);
  const ci95 = opts.ci === false ? null : meanCI(diffs, { iterations, level: 0.95, seed: `${seed}:ci` });
  return { n, meanDiff, ci95, pValue, significant: pValue < alpha };
}

// ---------------------------------------------------------------------------------------------
// Special functions (Numerical Recipes, 3rd ed., §6.1, §6.2, §6.4)
// ---------------------------------------------------------------------------------------------

const EPS = 1e-15;
const FPMIN = 1e-300;
const MAX_ITERATIONS = 10_000;

const LANCZOS = [
  57.1562356658629235, -59.5979603554754912, 14.1360979747417471, -0.491913816097620199, 0.339946499848118887e-4,
  0.465236289270485756e-4, -0.983744753048795646e-4, 0.158088703224912494e-3, -0.210264441724104883e-3,
  0.217439618115212643e-3, -0.16431810653676389e-3, 0.844182239838527433e-4, -0.261908384015814087e-4,
  0.368991826595316234e-5,
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
 * Below this a sum of squares of deviations is zero. Exact zeros cannot be trusted (the mean of [0.7, 0.7, 0.7] is
 * not exactly 0.7 in binary floating point): "no variation" is judged relative to the centred total and to the
 * rounding of the data's own magnitude (n × (16 ε max|y|)²), never to the uncentred Σy², which a large constant
 * offset inflates until every real difference reads as none.
 */
function zeroSumOfSquares(ys: ArrayLike<number>, centredTotal: number): number {
  let biggest = 0;
  for (let i = 0; i < ys.length; i++) biggest = Math.max(biggest, Math.abs(ys[i]));
  return 1e-12 * centredTotal + ys.length * (16 * Number.EPSILON * biggest) ** 2;
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

  // Centred first: with a large common offset (1e7 + small grades) uncentred sums lose every significant digit.
  const all = used.flat();
  const grand = mean(all);
  const centred = used.map((g) => g.map((x) => x - grand));
  let ssBetween = 0;
  let ssWithin = 0;
  for (const g of centred) {
    const m = mean(g);
    ssBetween += g.length * m ** 2;
    for (const x of g) ssWithin += (x - m) ** 2;
  }
  const tolerance = zeroSumOfSquares(all, ssBetween + ssWithin);
  if (ssWithin <= tolerance) {
    return ssBetween <= tolerance
      ? { F: NaN, dfBetween, dfWithin, pValue: 1 }
      : { F: Infinity, dfBetween, dfWithin, pValue: 0 };
  }
  const F = ssBetween / dfBetween / (ssWithin / dfWithin);
  return { F, dfBetween, dfWithin, pValue: fSurvival(F, dfBetween, dfWithin) };
}

// ---------------------------------------------------------------------------------------------
// Blocked designs, winners by position, multiple comparisons, correlation
// ---------------------------------------------------------------------------------------------

export interface BlockedAnovaResult {
  F: number;
  /** Degrees of freedom of the tested factor (its levels − 1, less any level aliased with the blocks). */
  dfFactor: number;
  dfResidual: number;
  ssFactor: number;
  ssResidual: number;
  pValue: number;
}

/**
 * F test of one factor in an additive model y = block + nuisance factors + factor + error, fitted by least
 * squares (unbalanced data and missing cells are fine). The blocks are absorbed by centring within each block
 * (Frisch–Waugh–Lovell), so a thousand queries cost nothing; the nuisance factors and the tested factor enter
 * as treatment-coded dummies. The test compares the residual sum of squares with and without the factor.
 *
 * For CryptoAnalystBench totals: block = query, nuisance = system, factor = position. A query's difficulty
 * and a system's quality then no longer drown the position effect, which a one-way ANOVA by position
 * leaves in its error term. With a Latin square (block = row, nuisance = column, factor = letter) this is
 * the textbook Latin-square ANOVA; with no nuisance factor, the randomised complete block design.
 */
export function blockedAnova(
  rows: Array<{ block: string; nuisance?: string[]; factor: string; y: number }>,
): BlockedAnovaResult {
  const n = rows.length;
  const blocks = new Map<string, number[]>();
  rows.forEach((r, i) => {
    if (!Number.isFinite(r.y)) throw new RangeError(`blockedAnova: y must be finite (row ${i})`);
    const list = blocks.get(r.block) ?? [];
    list.push(i);
    blocks.set(r.block, list);
  });
  const centre = (v: Float64Array): Float64Array => {
    for (const idx of blocks.values()) {
      let sum = 0;
      for (const i of idx) sum += v[i];
      const m = sum / idx.length;
      for (const i of idx) v[i] -= m;
    }
    return v;
  };
  const dummies = (levelOf: (i: number) => string): Float64Array[] => {
    const levels = [...new Set(rows.map((_, i) => levelOf(i)))].sort();
    return levels.slice(1).map((level) => centre(Float64Array.from(rows, (_, i) => (levelOf(i) === level ? 1 : 0))));
  };
  const nuisanceCount = Math.max(0, ...rows.map((r) => r.nuisance?.length ?? 0));
  const nuisanceColumns = Array.from({ length: nuisanceCount }, (_, f) =>
    dummies((i) => rows[i].nuisance?.[f] ?? ''),
  ).flat();
  const factorColumns = dummies((i) => rows[i].factor);
  const y = centre(Float64Array.from(rows, (r) => r.y));

  // Gram–Schmidt over the columns; a column that is (numerically) a combination of earlier ones is aliased
  // and adds no degree of freedom.
  const basis: Float64Array[] = [];
  const addColumn = (col: Float64Array): boolean => {
    const v = Float64Array.from(col);
    const norm0 = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    if (norm0 === 0) return false;
    for (let pass = 0; pass < 2; pass++) {
      for (const q of basis) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += q[i] * v[i];
        for (let i = 0; i < n; i++) v[i] -= dot * q[i];
      }
    }
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    if (norm <= 1e-9 * norm0) return false;
    for (let i = 0; i < n; i++) v[i] /= norm;
    basis.push(v);
    return true;
  };
  const explained = () => basis.reduce((s, q) => s + q.reduce((d, qi, i) => d + qi * y[i], 0) ** 2, 0);
  for (const col of nuisanceColumns) addColumn(col);
  const ssReduced = explained();
  const dfFactor = factorColumns.filter(addColumn).length;
  const ssFull = explained();
  const ssCentred = y.reduce((s, x) => s + x * x, 0);
  const ssResidual = Math.max(0, ssCentred - ssFull);
  const ssFactor = Math.max(0, ssFull - ssReduced);
  const dfResidual = n - blocks.size - basis.length;
  if (dfFactor < 1 || dfResidual < 1) return { F: NaN, dfFactor, dfResidual, ssFactor, ssResidual, pValue: NaN };
  const tolerance = zeroSumOfSquares(
    Float64Array.from(rows, (r) => r.y),
    ssCentred,
  );
  if (ssResidual <= tolerance) {
    return ssFactor <= tolerance
      ? { F: NaN, dfFactor, dfResidual, ssFactor, ssResidual, pValue: 1 }
      : { F: Infinity, dfFactor, dfResidual, ssFactor, ssResidual, pValue: 0 };
  }
  const F = ssFactor / dfFactor / (ssResidual / dfResidual);
  return { F, dfFactor, dfResidual, ssFactor, ssResidual, pValue: fSurvival(F, dfFactor, dfResidual) };
}

export interface WinnerPositionTest {
  /** Pearson statistic of winners per position against the expected counts. */
  statistic: number;
  df: number;
  pValue: number;
  /** Expected winners per position if position did not matter: Σ over units with size ≥ p of 1/size. */
  expected: number[];
  observed: number[];
  iterations: number;
}

/**
 * Does the winner's position depend on position? Each unit (a judged query) showed `size` responses and one
 * of them, in `position` (1-based), won. Under "position does not matter" the winner is uniform over the unit's
 * positions, so the null distribution of the Pearson statistic is simulated with each unit keeping its own size
 * (a Monte Carlo test conditioned on the sizes). The χ² approximation is not used: with units of different sizes
 * the statistic is not χ²-distributed (it was conservative: about 1.5% rejections at α = 0.025 with half the
 * queries ranking 2 systems and half 5). The statistic is discrete (counts), so draws often tie with the observed
 * value; ties are broken at random, p = (greater + U·(equal + 1)) / (iterations + 1) with U uniform and the
 * observed labelling counted as one draw, which makes the test exact in size instead of conservative. Every
 * draw comes from a PRNG seeded by `seed`, so a report is reproducible.
 */
export function winnerPositionTest(
  units: Array<{ size: number; position: number }>,
  opts: { iterations?: number; seed?: string } = {},
): WinnerPositionTest {
  const iterations = opts.iterations ?? 9999;
  checkIterations(iterations);
  for (const u of units) {
    if (!(
      Number.isInteger(u.size) &&
      u.size >= 1 &&
      Number.isInteger(u.position) &&
      u.position >= 1 &&
      u.position <= u.size
    )) {
      throw new RangeError(`winnerPositionTest: position ${u.position} is not within 1..${u.size}`);
    }
  }
  const positions = Math.max(0, ...units.map((u) => u.size));
  const expected = new Array<number>(positions).fill(0);
  const observed = new Array<number>(positions).fill(0);
  for (const u of units) {
    for (let p = 0; p < u.size; p++) expected[p] += 1 / u.size;
    observed[u.position - 1]++;
  }
  const cells = expected.map((e, p) => (e > 0 ? p : -1)).filter((p) => p >= 0);
  const df = cells.length - 1;
  const pearson = (counts: number[]) => {
    let s = 0;
    for (const p of cells) s += (counts[p] - expected[p]) ** 2 / expected[p];
    return s;
  };
  const statistic = pearson(observed);
  // Units of size 1 always "win" in position 1 and carry no information.
  const informative = units.filter((u) => u.size > 1).map((u) => u.size);
  if (df < 1 || informative.length === 0)
    return { statistic, df: Math.max(0, df), pValue: 1, expected, observed, iterations: 0 };
  const ones = units.length - informative.length;
  const rand = seededRandom(`${opts.seed ?? DEFAULT_SEED}:winner-position`);
  const tolerance = 1e-9 * Math.max(1, statistic);
  const counts = new Array<number>(positions);
  let greater = 0;
  let equal = 0;
  for (let it = 0; it < iterations; it++) {
    counts.fill(0);
    counts[0] = ones;
    for (const k of informative) counts[randomIndex(rand, k)]++;
    const t = pearson(counts);
    if (t > statistic + tolerance) greater++;
    else if (t >= statistic - tolerance) equal++;
  }
  // Ties with the observed value are broken at random (one seeded uniform), which makes the test exact in size.
  return { statistic, df, pValue: (greater + rand() * (equal + 1)) / (iterations + 1), expected, observed, iterations };
}

/**
 * Holm's step-down adjustment (Holm 1979): controls the family-wise error rate like Bonferroni but is uniformly
 * more powerful. Returns adjusted p-values in the input order; reject H_i when adjusted[i] < alpha.
 * NaN p-values (untestable hypotheses) stay NaN and do not count towards the family size.
 */
export function holmAdjust(pValues: number[]): number[] {
  const order = pValues
    .map((p, i) => [p, i] as const)
    .filter(([p]) => !Number.isNaN(p))
    .sort((a, b) => a[0] - b[0]);
  const m = order.length;
  const out = pValues.map(() => NaN);
  let running = 0;
  order.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    out[i] = running;
  });
  return out;
}

/** Pearson correlation; NaN when either variable is constant or there are fewer than 2 pairs. */
export function pearson(x: number[], y: number[]): number {
  if (x.length !== y.length)
    throw new RangeError(`pearson needs paired samples, got lengths ${x.length} and ${y.length}`);
  const n = x.length;
  if (n < 2) return NaN;
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  if (sxx <= 1e-24 * n * (mx * mx + 1) || syy <= 1e-24 * n * (my * my + 1)) return NaN;
  return sxy / Math.sqrt(sxx * syy);
}

/** Ranks 1..n, ties sharing their mean rank. */
export function midRanks(xs: number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(xs.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return ranks;
}

/** Spearman's rank correlation (Pearson on mid-ranks, so ties are handled). */
export function spearman(x: number[], y: number[]): number {
  return pearson(midRanks(x), midRanks(y));
}

// ---------------------------------------------------------------------------------------------
// Agreement, ranking and paired-preference statistics (human preference studies)
// ---------------------------------------------------------------------------------------------

/** Wilson score interval for a proportion k/n at 95% (z = 1.96); null when n = 0. */
export function wilsonInterval(k: number, n: number, z = 1.959963984540054): { low: number; high: number } | null {
  if (n === 0) return null;
  const p = k / n;
  const denom = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * Wilson interval for a proportion whose trials come in clusters (claims of one query, items of one query): the
 * count is shrunk to its effective size n / deff, with the design effect deff = (cluster-robust variance of the
 * pooled rate) / (binomial variance), never below 1. The Wilson form keeps the interval inside [0, 1] without
 * collapsing at 0 or 1: all 40 of 40 in 10 queries gives [0.89, 1], not [1, 1]. At 0 or 1 the clusters show no spread,
 * so deff = 1. The quantile is Student t on (clusters − 1) df.
 * Null without any trial.
 */
export function clusteredWilsonInterval(
  clusters: Array<{ k: number; n: number }>,
): { low: number; high: number; designEffect: number; effectiveN: number } | null {
  const used = clusters.filter((c) => c.n > 0);
  // Few clusters: the variance itself rests on them, so the quantile is t with (clusters − 1) df rather than normal.
  const z = used.length >= 2 ? studentTQuantile(0.975, used.length - 1) : 1.959963984540054;
  const n = used.reduce((s, c) => s + c.n, 0);
  if (!n) return null;
  const k = used.reduce((s, c) => s + c.k, 0);
  const p = k / n;
  let deff = 1;
  if (used.length >= 2 && p > 0 && p < 1) {
    const q = used.length;
    const clustered = ((q / (q - 1)) * used.reduce((s, c) => s + (c.k - p * c.n) ** 2, 0)) / (n * n);
    deff = Math.max(1, clustered / ((p * (1 - p)) / n));
  }
  const effectiveN = n / deff;
  const w = wilsonInterval(p * effectiveN, effectiveN, z)!;
  return { low: w.low, high: w.high, designEffect: deff, effectiveN };
}

/** The x with I_x(a, b) = p (the Beta(a, b) quantile), by bisection on the regularized incomplete beta function. */
export function betaQuantile(p: number, a: number, b: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (betaI(a, b, mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Exact (Clopper–Pearson) interval for a proportion k/n: the Beta quantiles Beta(α/2; k, n−k+1) and
 * Beta(1−α/2; k+1, n−k), 0 and 1 at the ends. Conservative (coverage at least the level for every p), which is
 * what a claim such as "false-positive rate ≤ 3%" needs. Null when n = 0.
 */
export function clopperPearson(k: number, n: number, level = 0.95): { low: number; high: number } | null {
  checkLevel(level);
  if (!(Number.isInteger(k) && Number.isInteger(n) && k >= 0 && k <= n))
    throw new RangeError(`clopperPearson: need integers 0 ≤ k ≤ n, got ${k} of ${n}`);
  if (n === 0) return null;
  const tail = (1 - level) / 2;
  return {
    low: k === 0 ? 0 : betaQuantile(tail, k, n - k + 1),
    high: k === n ? 1 : betaQuantile(1 - tail, k + 1, n - k),
  };
}

/**
 * Cohen's kappa of two raters' labels on the same items. When chance agreement is 1 (both always gave one and the
 * same label) kappa is undefined: 1 if they agree on everything, otherwise null.
 */
export function cohenKappa(a: string[], b: string[]): number | null {
  if (a.length !== b.length) throw new RangeError('cohenKappa: label lists differ in length');
  const n = a.length;
  if (n === 0) return null;
  const observed = a.filter((x, i) => x === b[i]).length / n;
  const labels = new Set([...a, ...b]);
  let expected = 0;
  for (const l of labels) expected += (a.filter((x) => x === l).length / n) * (b.filter((x) => x === l).length / n);
  if (expected >= 1 - 1e-12) return observed === 1 ? 1 : null;
  return (observed - expected) / (1 - expected);
}

/** Pseudo-wins each way added to every pair that met at least once (see bradleyTerry). */
export const BRADLEY_TERRY_PRIOR = 0.5;

export interface BradleyTerryFit {
  /** Scaled to a geometric mean of 1 over the estimable players; null where no strength can be estimated. */
  strengths: Array<number | null>;
  /** Why a strength is null (no decisive comparison, or not connected to the group that sets the scale). */
  reasons: Array<string | null>;
  /** Connected groups of the comparison graph (player indices, largest first); strengths compare only within one. */
  groups: number[][];
  prior: number;
  /** Newton steps taken and whether the fit met the tolerance before the cap (a fit at the cap is still returned). */
  iterations: number;
  converged: boolean;
}

/**
 * Cholesky solve of a symmetric positive definite system A x = b restricted to the rows and columns in `keep` (all by
 * default); null when that part of A is (numerically) singular, which callers use to find aliased columns.
 */
export function solvePositiveDefinite(
  xtx: number[][],
  xty: number[],
  keep: number[] = xty.map((_, i) => i),
): number[] | null {
  const m = keep.length;
  const l = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < m; i++)
    for (let j = 0; j <= i; j++) {
      let s = xtx[keep[i]][keep[j]];
      for (let k = 0; k < j; k++) s -= l[i][k] * l[j][k];
      if (i === j) {
        if (!(s > 1e-9 * Math.max(1e-300, xtx[keep[i]][keep[i]]))) return null;
        l[i][i] = Math.sqrt(s);
      } else l[i][j] = s / l[j][j];
    }
  const z = new Array<number>(m).fill(0);
  for (let i = 0; i < m; i++) {
    let s = xty[keep[i]];
    for (let k = 0; k < i; k++) s -= l[i][k] * z[k];
    z[i] = s / l[i][i];
  }
  const x = new Array<number>(m).fill(0);
  for (let i = m - 1; i >= 0; i--) {
    let s = z[i];
    for (let k = i + 1; k < m; k++) s -= l[k][i] * x[k];
    x[i] = s / l[i][i];
  }
  return x;
}

/**
 * Bradley–Terry strengths from pairwise wins (`wins[i][j]`: times i beat j): the maximum of the likelihood
 * Π (p_i / (p_i + p_j))^w_ij after adding `prior` (default 0.5) pseudo-wins each way to every pair that met at
 * least once, so a player that never lost keeps a finite strength. Fitted by Newton's method on log-strengths with
 * step halving (the log-likelihood is concave), to a tolerance of 1e-10 on every log-strength, with an iteration
 * cap reported in `converged` — Hunter's MM algorithm needed tens of thousands of iterations on lopsided data
 * (`[[0,1000,1000],[0,0,1000],[0,0,0]]` is ∝ [1001.0, 1.000, 0.0010]; 500 MM steps stopped at [652, 1.24, 0.0012]).
 *
 * Only players joined by comparisons share a scale. Strengths are given for the largest connected group (the first
 * such group in player order when two are equally large), scaled to a geometric mean of 1 within it; a player with
 * no decisive comparison, or in another group, gets null and the reason.
 */
export function bradleyTerry(wins: number[][], opts: { prior?: number; maxIterations?: number } = {}): BradleyTerryFit {
  const k = wins.length;
  const prior = opts.prior ?? BRADLEY_TERRY_PRIOR;
  const maxIterations = opts.maxIterations ?? 100;
  if (!(prior >= 0)) throw new RangeError(`bradleyTerry: prior must be non-negative, got ${prior}`);
  const w = wins.map((row, i) => row.map((v, j) => (i === j ? 0 : v + (v + wins[j][i] > 0 ? prior : 0))));
  // Connected groups of the graph of pairs that met (both directions count once the prior is added).
  const groupOf = new Array<number>(k).fill(-1);
  const groups: number[][] = [];
  for (let s = 0; s < k; s++) {
    if (groupOf[s] >= 0 || !w[s].some((v, j) => v + w[j][s] > 0)) continue;
    const members = [s];
    groupOf[s] = groups.length;
    for (let q = 0; q < members.length; q++)
      for (let j = 0; j < k; j++)
        if (groupOf[j] < 0 && w[members[q]][j] + w[j][members[q]] > 0) {
          groupOf[j] = groups.length;
          members.push(j);
        }
    groups.push(members.sort((a, b) => a - b));
  }
  groups.sort((a, b) => b.length - a.length || a[0] - b[0]);
  const strengths: Array<number | null> = new Array(k).fill(null);
  const reasons: Array<string | null> = new Array(k).fill(null);
  const main = groups[0] ?? [];
  for (let i = 0; i < k; i++) {
    if (!w[i].some((v, j) => v + w[j][i] > 0)) reasons[i] = 'no decisive comparison';
    else if (!main.includes(i))
      reasons[i] = 'not compared, directly or through others, with the group that sets the scale';
  }
  if (main.length < 2) return { strengths, reasons, groups, prior, iterations: 0, converged: true };
  // With prior 0 a player that never lost has no finite maximum: Newton then runs to the cap and says so.
  const m = main.length;
  const theta = new Array<number>(m).fill(0);
  const loglik = (t: number[]) => {
    let s = 0;
    for (let a = 0; a < m; a++)
      for (let b = 0; b < m; b++) {
        const x = w[main[a]][main[b]];
        if (x > 0) s -= x * Math.log1p(Math.exp(t[b] - t[a]));
      }
    return s;
  };
  let iterations = 0;
  let converged = false;
  let current = loglik(theta);
  while (iterations < maxIterations) {
    iterations++;
    // Gradient and Hessian with theta[0] held at 0 (the scale is fixed afterwards).
    const grad = new Array<number>(m).fill(0);
    const hess = Array.from({ length: m }, () => new Array<number>(m).fill(0));
    for (let a = 0; a < m; a++)
      for (let b = a + 1; b < m; b++) {
        const games = w[main[a]][main[b]] + w[main[b]][main[a]];
        if (games === 0) continue;
        const pab = 1 / (1 + Math.exp(theta[b] - theta[a]));
        const info = games * pab * (1 - pab);
        grad[a] += w[main[a]][main[b]] - games * pab;
        grad[b] += w[main[b]][main[a]] - games * (1 - pab);
        hess[a][a] += info;
        hess[b][b] += info;
        hess[a][b] -= info;
        hess[b][a] -= info;
      }
    // The information matrix less the fixed player's row and column is positive definite on a connected group.
    const solved = solvePositiveDefinite(
      hess.slice(1).map((row) => row.slice(1)),
      grad.slice(1),
    );
    if (!solved || !solved.every(Number.isFinite)) break;
    const step = [0, ...solved];
    let scale = 1;
    let next = theta.map((t, a) => t + step[a]);
    let value = loglik(next);
    while (value < current - 1e-12 * Math.abs(current) && scale > 1e-6) {
      scale /= 2;
      next = theta.map((t, a) => t + scale * step[a]);
      value = loglik(next);
    }
    const moved = Math.max(...next.map((t, a) => Math.abs(t - theta[a])));
    for (let a = 0; a < m; a++) theta[a] = next[a];
    current = value;
    if (moved < 1e-10) {
      converged = true;
      break;
    }
  }
  const centre = mean(theta);
  main.forEach((i, a) => (strengths[i] = Math.exp(theta[a] - centre)));
  if (!converged) for (const i of main) reasons[i] = `not converged after ${iterations} Newton steps`;
  return { strengths, reasons, groups, prior, iterations, converged };
}

/**
 * Seeded percentile interval of a statistic over `iterations` resamples (with replacement) of `units`. A component
 * that some resample cannot compute (NaN or infinite there) gets null: its interval would rest only on the
 * resamples where it happened to exist.
 */
export function bootstrapIntervals<T>(
  units: T[],
  statistic: (sample: T[]) => number[],
  opts: { iterations?: number; seed?: string; level?: number } = {},
): Array<{ low: number; high: number } | null> {
  const iterations = opts.iterations ?? 1000;
  const level = opts.level ?? 0.95;
  checkIterations(iterations);
  checkLevel(level);
  if (units.length < 2) return statistic(units).map(() => null);
  const rand = seededRandom(opts.seed ?? DEFAULT_SEED);
  const draws: number[][] = [];
  for (let it = 0; it < iterations; it++)
    draws.push(statistic(units.map(() => units[randomIndex(rand, units.length)])));
  const tail = (1 - level) / 2;
  return draws[0].map((_, i) => {
    const sorted = draws.map((d) => d[i]).sort((a, b) => a - b);
    if (!sorted.every(Number.isFinite)) return null;
    return { low: quantileSorted(sorted, tail), high: quantileSorted(sorted, 1 - tail) };
  });
}
