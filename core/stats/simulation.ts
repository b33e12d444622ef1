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
