/**
 * Simulated rates and their exact intervals, shared by the statistics simulations of the bench
 * (rubrics/cab/statisticsSimulation.ts, core/stats/statsSimulation.ts) and their tests.
 */
import { clopperPearson } from './stats';

/** A simulated rate: k of n runs, with its exact (Clopper–Pearson) 95% interval. */
export interface SimulatedRate {
  k: number;
  n: number;
  rate: number;
  ci95: { low: number; high: number };
}

export const simulatedRate = (k: number, n: number): SimulatedRate => ({
  k,
  n,
  rate: k / n,
  ci95: clopperPearson(k, n)!,
});

/** What a claim requires of a rate. */
export type Requirement = { atMost: number } | { atLeast: number } | { between: [number, number] };

/**
 * Whether the interval shows the claim (entirely inside the requirement), contradicts it (entirely outside), or
 * cannot tell at this number of simulations.
 */
export function claimStatus(r: SimulatedRate, req: Requirement): 'shown' | 'contradicted' | 'not resolved' {
  const { low, high } = r.ci95;
  if ('atMost' in req) return high <= req.atMost ? 'shown' : low > req.atMost ? 'contradicted' : 'not resolved';
  if ('atLeast' in req) return low >= req.atLeast ? 'shown' : high < req.atLeast ? 'contradicted' : 'not resolved';
  const [a, b] = req.between;
  return low >= a && high <= b ? 'shown' : high < a || low > b ? 'contradicted' : 'not resolved';
}

export const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;
export const range = (r: { low: number; high: number }) => `${(100 * r.low).toFixed(1)}–${pct(r.high)}`;

/** "2.8% (140 of 5000; 95% CI 2.4–3.3%)", and with a requirement what the interval supports and the claim's status. */
export function describeRate(r: SimulatedRate, req?: Requirement): string {
  const base = `${pct(r.rate)} (${r.k} of ${r.n}; 95% CI ${range(r.ci95)})`;
  if (!req) return base;
  const wanted =
    'atMost' in req
      ? `≤ ${pct(req.atMost)}`
      : 'atLeast' in req
        ? `≥ ${pct(req.atLeast)}`
        : range({ low: req.between[0], high: req.between[1] });
  const supports =
    'atMost' in req ? `≤ ${pct(r.ci95.high)}` : 'atLeast' in req ? `≥ ${pct(r.ci95.low)}` : range(r.ci95);
  return `${base}: supports ${supports}; claim ${wanted} ${claimStatus(r, req)}`;
}

/** Standard normal draws from a seeded uniform (Box–Muller). */
export function normalSampler(rand: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const u = 1 - rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/**
 * A row's target and how a simulated rate is checked against it:
 * - `atLeast` / `atMost`: passes when the whole Clopper–Pearson interval is inside the target (the rate is shown);
 * - `level`: the false-positive rate of an exact level-α test, which sits at α by construction, so no number of runs
 *   can put its interval below α. It passes when the interval reaches down to α or below (the rate is not shown above
 *   α), and the point estimate is printed beside it.
 */
export type Target = { atLeast: number } | { atMost: number } | { level: number };

export function meetsTarget(r: SimulatedRate, target: Target): boolean {
  return targetVerdict(r, target) === 'PASS';
}

/**
 * PASS: the interval shows the target (for `level`: reaches α or below); FAIL: the interval lies wholly on the wrong
 * side of it; NOT SHOWN: it straddles the target (too few runs to tell).
 */
export function targetVerdict(r: SimulatedRate, target: Target): 'PASS' | 'FAIL' | 'NOT SHOWN' {
  const { low, high } = r.ci95;
  if ('level' in target) return low <= target.level ? 'PASS' : 'FAIL';
  if ('atLeast' in target) return low >= target.atLeast ? 'PASS' : high < target.atLeast ? 'FAIL' : 'NOT SHOWN';
  return high <= target.atMost ? 'PASS' : low > target.atMost ? 'FAIL' : 'NOT SHOWN';
}

/** "4.9% (195 of 4000; 95% CI 4.2–5.6%), target ≤ 5.0%, the test's own α (…) PASS". */
export function describeAgainstTarget(r: SimulatedRate, target: Target): string {
  const rule =
    'atLeast' in target
      ? `target ≥ ${pct(target.atLeast)} (interval above it)`
      : 'atMost' in target
        ? `target ≤ ${pct(target.atMost)} (interval below it)`
        : `target ≤ ${pct(target.level)}, the test's own α (an exact test sits at α: passes when the interval reaches ${pct(target.level)} or below)`;
  return `${pct(r.rate)} (${r.k} of ${r.n}; 95% CI ${range(r.ci95)}), ${rule} ${targetVerdict(r, target)}`;
}
