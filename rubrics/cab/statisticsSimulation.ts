/**
 * Simulations that show judgeflow's statistics detect what they claim: power and false-positive rates of the
 * CryptoAnalystBench position-bias tests, and coverage of the confidence intervals. Shared by
 * test/rubrics/cab/statisticsSimulation.test.ts (few, fast, fixed seeds) and `judgeflow bench --only stats` (many, printed).
 * Every presentation order comes from the real balanced CAB presentation design (rubrics/cab/presentation.ts).
 */
import { rankOneByPositionTest, totalsByPositionTest, type PositionedJudgment } from './positionBias';
import { buildPresentationDesign } from './presentation';
import { seededRandom } from '../../core/random';
import { BCA_MIN_N, chiSquareSurvival, meanCI, oneWayAnova, type IntervalMethod } from '../../core/stats';

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

export interface PositionScenario {
  systemMeans: number[];
  queries: number;
  querySd: number;
  noiseSd: number;
  /** Added to the total of whichever response is shown first. */
  bonus: number;
}

/** The scenario: 4 systems (20/24/28/32), 100 queries, query sd 4, noise sd 3, +1.5 in position 1. */
export const POSITION_SCENARIO: PositionScenario = { systemMeans: [20, 24, 28, 32], queries: 100, querySd: 4, noiseSd: 3, bonus: 1.5 };

/** One simulated run's judgments (totals only), in the balanced order buildPresentationDesign gives for `seed`. */
export function simulateTotals(scenario: PositionScenario, seed: string): PositionedJudgment[] {
  const systems = scenario.systemMeans.map((_, i) => `S${i + 1}`);
  const queryIds = Array.from({ length: scenario.queries }, (_, q) => `q${q + 1}`);
  const { orders } = buildPresentationDesign({ seed, queries: queryIds.map((queryId) => ({ queryId, copilots: systems })) });
  const normal = normalSampler(seededRandom(`${seed}:scores`));
  return queryIds.flatMap((queryId) => {
    const queryEffect = scenario.querySd * normal();
    return orders[queryId].map((copilot, p) => ({
      queryId,
      copilot,
      position: p + 1,
      rank: null,
      status: 'ok' as const,
      total: scenario.systemMeans[systems.indexOf(copilot)] + queryEffect + scenario.noiseSd * normal() + (p === 0 ? scenario.bonus : 0),
    }));
  });
}

/** Rejection rates at `alpha` of the blocked test (what reports use) and of the one-way ANOVA it replaced. */
export function positionTotalsRejection(scenario: PositionScenario, sims: number, alpha: number, seed: string): { blocked: number; oneWay: number; sims: number } {
  let blocked = 0;
  let oneWay = 0;
  for (let s = 0; s < sims; s++) {
    const judgments = simulateTotals(scenario, `${seed}:${s}`);
    if ((totalsByPositionTest(judgments).pValue ?? 1) < alpha) blocked++;
    const byPosition: number[][] = [];
    for (const j of judgments) (byPosition[j.position! - 1] ??= []).push(j.total!);
    if (oneWayAnova(byPosition).pValue < alpha) oneWay++;
  }
  return { blocked: blocked / sims, oneWay: oneWay / sims, sims };
}

/**
 * No position effect, queries of two sizes: `systems` systems of equal quality, half the queries answered by
 * only two of them (a seeded pair), the rest by all. The judge ranks by score, so rank 1 is uniform over a
 * query's positions. Returns the rejection rates of the size-conditioned Monte Carlo test (what reports use)
 * and of the χ² approximation it replaced.
 */
export function rankOneMixedSizesRejection(
  opts: { sims: number; alpha: number; seed: string; queries?: number; systems?: number; smallSize?: number; iterations?: number },
): { conditioned: number; chiSquare: number; sims: number } {
  const queries = opts.queries ?? 100;
  const systemNames = Array.from({ length: opts.systems ?? 5 }, (_, i) => `S${i + 1}`);
  const small = opts.smallSize ?? 2;
  let conditioned = 0;
  let chiSquare = 0;
  for (let s = 0; s < opts.sims; s++) {
    const seed = `${opts.seed}:${s}`;
    const rand = seededRandom(`${seed}:subsets`);
    const present = Array.from({ length: queries }, (_, q) => {
      if (q % 2 === 0) return { queryId: `q${q + 1}`, copilots: systemNames };
      const pool = [...systemNames];
      const pick: string[] = [];
      while (pick.length < small) pick.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
      return { queryId: `q${q + 1}`, copilots: pick };
    });
    const { orders } = buildPresentationDesign({ seed, queries: present });
    const judgments: PositionedJudgment[] = [];
    const unitSize = new Map<string, number>();
    for (const { queryId } of present) {
      const order = orders[queryId];
      unitSize.set(queryId, order.length);
      const winner = Math.floor(rand() * order.length); // equal quality: every response equally likely to score best
      order.forEach((copilot, p) => judgments.push({ queryId, copilot, position: p + 1, rank: p === winner ? 1 : 2, status: 'ok', total: 0 }));
    }
    const t = rankOneByPositionTest(judgments, unitSize, seed, opts.iterations ?? 999);
    if (t.pValue < opts.alpha) conditioned++;
    if (chiSquareSurvival(t.statistic, t.df) < opts.alpha) chiSquare++;
  }
  return { conditioned: conditioned / opts.sims, chiSquare: chiSquare / opts.sims, sims: opts.sims };
}

const GRADES = [2, 4, 5, 6, 7, 8, 9, 10];
const GRADE_PROBS = [0.03, 0.05, 0.07, 0.1, 0.2, 0.3, 0.2, 0.05];
const GRADE_MEAN = GRADES.reduce((s, g, i) => s + g * GRADE_PROBS[i], 0);
const gradeSampler = (rand: () => number) => (): number => {
  let u = rand();
  for (let i = 0; i < GRADES.length; i++) if ((u -= GRADE_PROBS[i]) < 0) return GRADES[i];
  return GRADES[GRADES.length - 1];
};

/**
 * Score distributions for coverage: normal; a CAB-like total (sum of four 1–10 grades drawn from a left-skewed
 * judge distribution); and the harshest case, a single skewed grade × 10 (one LATTICE-like dimension).
 */
export const SCORE_DISTRIBUTIONS = {
  normal: { mean: 0, draw: (rand: () => number) => normalSampler(rand) },
  'cab-total': {
    mean: 4 * GRADE_MEAN,
    draw: (rand: () => number) => {
      const grade = gradeSampler(rand);
      return () => grade() + grade() + grade() + grade();
    },
  },
  'one-grade': {
    mean: 10 * GRADE_MEAN,
    draw: (rand: () => number) => {
      const grade = gradeSampler(rand);
      return () => 10 * grade();
    },
  },
} as const;

/** Share of simulated samples of size n whose 95% interval contains the true mean. */
export function intervalCoverage(opts: { n: number; sims: number; method: IntervalMethod | 'auto'; distribution: keyof typeof SCORE_DISTRIBUTIONS; seed: string; iterations?: number }): number {
  const dist = SCORE_DISTRIBUTIONS[opts.distribution];
  const draw = dist.draw(seededRandom(`${opts.seed}:data`));
  let covered = 0;
  for (let s = 0; s < opts.sims; s++) {
    const xs = Array.from({ length: opts.n }, draw);
    const ci = meanCI(xs, { method: opts.method, seed: `${opts.seed}:${s}`, iterations: opts.iterations ?? 1000 });
    if (ci && ci.low <= dist.mean && dist.mean <= ci.high) covered++;
  }
  return covered / opts.sims;
}

/** The figures `judgeflow bench` prints (figures, not assertions; every number is reproducible from `seed`). */
export function printStatisticsFigures(log: (line: string) => void, opts: { sims?: number; seed?: string } = {}): void {
  const sims = opts.sims ?? 2000;
  const seed = opts.seed ?? 'bench';
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const timed = <T>(f: () => T): [T, string] => {
    const t0 = Date.now();
    const r = f();
    return [r, `${((Date.now() - t0) / 1000).toFixed(1)} s`];
  };
  log(`\nStatistics simulations (${sims} simulated runs per figure, seed "${seed}"; presentation orders from the CAB balanced presentation design)`);

  const s = POSITION_SCENARIO;
  log(`\nPosition bias of totals: ${s.systemMeans.length} systems (means ${s.systemMeans.join('/')}), ${s.queries} queries, query sd ${s.querySd}, noise sd ${s.noiseSd}; α = 0.025`);
  const [power, t1] = timed(() => positionTotalsRejection(s, sims, 0.025, `${seed}:power`));
  log(`  +${s.bonus} in position 1 — power: blocked two-way ANOVA ${pct(power.blocked)} (required ≥ 80%); old one-way ANOVA ${pct(power.oneWay)}  [${t1}]`);
  const [fpr, t2] = timed(() => positionTotalsRejection({ ...s, bonus: 0 }, sims, 0.025, `${seed}:null`));
  log(`  no bonus — false-positive rate: blocked ${pct(fpr.blocked)} (required ≤ 3%); old one-way ${pct(fpr.oneWay)}  [${t2}]`);

  log('\nRank-1 by position, no position effect, 100 queries: half rank 2 systems, half 5; α = 0.025');
  const [rank1, t3] = timed(() => rankOneMixedSizesRejection({ sims, alpha: 0.025, seed: `${seed}:rank1`, iterations: 999 }));
  log(`  false-positive rate: size-conditioned Monte Carlo test ${pct(rank1.conditioned)} (required 2–3%); old χ² approximation ${pct(rank1.chiSquare)}  [${t3}]`);

  const coverageSims = Math.max(200, Math.round(sims / 2));
  log(`\nCoverage of nominal 95% intervals for a mean (${coverageSims} samples each; bootstrap 1000 resamples; required ≥ 93% from n = 10 up for what reports use)`);
  log(`  distribution  n     percentile  t        BCa      reports (t below ${BCA_MIN_N}, BCa from ${BCA_MIN_N})`);
  for (const distribution of Object.keys(SCORE_DISTRIBUTIONS) as Array<keyof typeof SCORE_DISTRIBUTIONS>) {
    for (const n of [5, 10, 20, 30, 50, 100]) {
      const cov = (method: IntervalMethod | 'auto') => intervalCoverage({ n, sims: coverageSims, method, distribution, seed: `${seed}:cov:${distribution}:${n}` });
      const [percentile, t, bca] = [cov('percentile'), cov('t'), cov('bca')];
      // What reports use is one of the two, by n: no need to simulate it again.
      const row = [percentile, t, bca, n < BCA_MIN_N ? t : bca].map((x) => pct(x).padEnd(9));
      log(`  ${distribution.padEnd(12)}  ${String(n).padEnd(4)}  ${row[0]}   ${row[1]}${row[2]}${row[3]}`);
    }
  }
}
