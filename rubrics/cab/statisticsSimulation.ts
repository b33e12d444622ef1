/**
 * Simulations that show judgeflow's statistics detect what they claim: power and false-positive rates of the
 * CryptoAnalystBench position-bias tests, and coverage of the confidence intervals. Shared by
 * test/rubrics/cab/statisticsSimulation.test.ts (few, fast, fixed seeds) and `judgeflow bench --only stats` (many, printed).
 * Every presentation order comes from the real balanced CAB presentation design (rubrics/cab/presentation.ts).
 */
import { rankOneByPositionTest, totalsByPositionTest, type PositionedJudgment } from './positionBias';
import { buildPresentationDesign } from './presentation';
import { seededRandom } from '../../core/stats/random';
import { BCA_MIN_N, chiSquareSurvival, meanCI, oneWayAnova, type IntervalMethod } from '../../core/stats/stats';
import {
  describeRate,
  normalSampler,
  pct,
  range,
  simulatedRate,
  type SimulatedRate,
} from '../../core/stats/simulation';

export {
  claimStatus,
  describeRate,
  normalSampler,
  simulatedRate,
  type Requirement,
  type SimulatedRate,
} from '../../core/stats/simulation';

/**
 * How totals are generated. `gaussian` is additive, normal and equal-variance, where the F test is exact by theory
 * (it checks the code). The others are what real CAB data has:
 * - `ceiling-grades`: each response gets four integer 1–10 grades, rounded and clamped, with system means near the
 *   ceiling (the total is their sum, 4–40);
 * - `system-noise`: the noise sd depends on the system (`noiseSds`);
 * - `heavy-tails-interaction`: Student t(3) noise (scaled to `noiseSd`) and a system × query interaction (sd `interactionSd`);
 * - `missing-unequal`: `missingShare` of the responses fail (their query is shown the others only) and the noise sd
 *   depends on the system.
 */
export type TotalsModel =
  'gaussian' | 'ceiling-grades' | 'system-noise' | 'heavy-tails-interaction' | 'missing-unequal';

export interface PositionScenario {
  systemMeans: number[];
  queries: number;
  querySd: number;
  noiseSd: number;
  /** Added to the total of whichever response is shown first. */
  bonus: number;
  model?: TotalsModel;
  /** Per-system noise sd (system-noise, missing-unequal). */
  noiseSds?: number[];
  interactionSd?: number;
  missingShare?: number;
}

/** The scenario: 4 systems (20/24/28/32), 100 queries, query sd 4, noise sd 3, +1.5 in position 1. */
export const POSITION_SCENARIO: PositionScenario = {
  systemMeans: [20, 24, 28, 32],
  queries: 100,
  querySd: 4,
  noiseSd: 3,
  bonus: 1.5,
};

/** The realistic nulls (no position effect), each on the POSITION_SCENARIO design. */
export const REALISTIC_NULLS: Array<{ label: string; scenario: PositionScenario }> = [
  {
    label: 'integer 1–10 grades near the ceiling (4 grades, system means 7.5/8/8.5/9 per grade)',
    scenario: { ...POSITION_SCENARIO, bonus: 0, model: 'ceiling-grades', systemMeans: [30, 32, 34, 36], noiseSd: 2.4 },
  },
  {
    label: 'system-dependent noise (sd 1/2/4/6)',
    scenario: { ...POSITION_SCENARIO, bonus: 0, model: 'system-noise', noiseSds: [1, 2, 4, 6] },
  },
  {
    label: 'heavy tails (t3) with a system × query interaction (sd 2)',
    scenario: { ...POSITION_SCENARIO, bonus: 0, model: 'heavy-tails-interaction', interactionSd: 2 },
  },
  {
    label: '15% missing responses with unequal variances (sd 1/2/4/6)',
    scenario: { ...POSITION_SCENARIO, bonus: 0, model: 'missing-unequal', noiseSds: [1, 2, 4, 6], missingShare: 0.15 },
  },
];

/** One simulated run's judgments (totals only), in the balanced order buildPresentationDesign gives for `seed`. */
export function simulateTotals(scenario: PositionScenario, seed: string): PositionedJudgment[] {
  const model = scenario.model ?? 'gaussian';
  const systems = scenario.systemMeans.map((_, i) => `S${i + 1}`);
  const queryIds = Array.from({ length: scenario.queries }, (_, q) => `q${q + 1}`);
  const rand = seededRandom(`${seed}:scores`);
  const normal = normalSampler(rand);
  // Failed responses are decided first: the judge is shown only the others, in the design's order for that set.
  const present = queryIds.map((queryId) => {
    const kept = model === 'missing-unequal' ? systems.filter(() => rand() >= (scenario.missingShare ?? 0)) : systems;
    return { queryId, copilots: kept.length ? kept : [systems[0]] };
  });
  const { orders } = buildPresentationDesign({ seed, queries: present });
  const t3 = () => normal() / Math.sqrt((normal() ** 2 + normal() ** 2 + normal() ** 2) / 3) / Math.sqrt(3); // unit variance
  return present.flatMap(({ queryId }) => {
    const queryEffect = scenario.querySd * normal();
    return orders[queryId].map((copilot, p) => {
      const s = systems.indexOf(copilot);
      const bonus = p === 0 ? scenario.bonus : 0;
      let total: number;
      if (model === 'ceiling-grades') {
        // Four grades: the system's mean per grade, a quarter of the query effect, the bonus spread over the grades, noise per grade.
        total = 0;
        for (let d = 0; d < 4; d++)
          total += Math.min(
            10,
            Math.max(
              1,
              Math.round((scenario.systemMeans[s] + queryEffect + bonus) / 4 + (scenario.noiseSd / 2) * normal()),
            ),
          );
      } else if (model === 'heavy-tails-interaction') {
        total =
          scenario.systemMeans[s] +
          queryEffect +
          (scenario.interactionSd ?? 0) * normal() +
          scenario.noiseSd * t3() +
          bonus;
      } else {
        const sd = model === 'system-noise' || model === 'missing-unequal' ? scenario.noiseSds![s] : scenario.noiseSd;
        total = scenario.systemMeans[s] + queryEffect + sd * normal() + bonus;
      }
      return { queryId, copilot, position: p + 1, rank: null, status: 'ok' as const, total };
    });
  });
}

/** Rejections at `alpha` of the blocked test (what reports use) and of the one-way ANOVA it replaced. */
export function positionTotalsRejection(
  scenario: PositionScenario,
  sims: number,
  alpha: number,
  seed: string,
): { blocked: SimulatedRate; oneWay: SimulatedRate } {
  let blocked = 0;
  let oneWay = 0;
  for (let s = 0; s < sims; s++) {
    const judgments = simulateTotals(scenario, `${seed}:${s}`);
    if ((totalsByPositionTest(judgments).pValue ?? 1) < alpha) blocked++;
    const byPosition: number[][] = [];
    for (const j of judgments) (byPosition[j.position! - 1] ??= []).push(j.total!);
    if (oneWayAnova(byPosition).pValue < alpha) oneWay++;
  }
  return { blocked: simulatedRate(blocked, sims), oneWay: simulatedRate(oneWay, sims) };
}

/**
 * The rank-1 test when the judge ranks by total: `scenario` generates the totals (with its position bonus), the best
 * total is ranked first, and the size-conditioned Monte Carlo test (what reports use) is applied at `alpha`.
 */
export function rankOneRejection(
  scenario: PositionScenario,
  opts: { sims: number; alpha: number; seed: string; iterations?: number },
): SimulatedRate {
  let rejected = 0;
  for (let s = 0; s < opts.sims; s++) {
    const seed = `${opts.seed}:${s}`;
    const judgments = simulateTotals(scenario, seed);
    const unitSize = new Map<string, number>();
    const best = new Map<string, PositionedJudgment>();
    for (const j of judgments) {
      unitSize.set(j.queryId, (unitSize.get(j.queryId) ?? 0) + 1);
      if (!best.has(j.queryId) || j.total! > best.get(j.queryId)!.total!) best.set(j.queryId, j);
    }
    const ranked = judgments.map((j) => ({ ...j, rank: best.get(j.queryId) === j ? 1 : 2 }));
    if (rankOneByPositionTest(ranked, unitSize, seed, opts.iterations ?? 999).pValue < opts.alpha) rejected++;
  }
  return simulatedRate(rejected, opts.sims);
}

/** The smallest bonus on the grid with estimated power ≥ `target`, and a linear interpolation between grid points. */
export function bonusForPower(
  curve: Array<{ bonus: number; power: SimulatedRate }>,
  target = 0.8,
): { grid: number | null; interpolated: number | null } {
  const i = curve.findIndex((c) => c.power.rate >= target);
  if (i < 0) return { grid: null, interpolated: null };
  if (i === 0) return { grid: curve[0].bonus, interpolated: curve[0].bonus };
  const [a, b] = [curve[i - 1], curve[i]];
  return {
    grid: b.bonus,
    interpolated: a.bonus + ((target - a.power.rate) / (b.power.rate - a.power.rate)) * (b.bonus - a.bonus),
  };
}

/**
 * No position effect, queries of two sizes: `systems` systems of equal quality, half the queries answered by
 * only two of them (a seeded pair), the rest by all. The judge ranks by score, so rank 1 is uniform over a
 * query's positions. Returns the rejection rates of the size-conditioned Monte Carlo test (what reports use)
 * and of the χ² approximation it replaced.
 */
export function rankOneMixedSizesRejection(opts: {
  sims: number;
  alpha: number;
  seed: string;
  queries?: number;
  systems?: number;
  smallSize?: number;
  iterations?: number;
}): { conditioned: SimulatedRate; chiSquare: SimulatedRate } {
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
      order.forEach((copilot, p) =>
        judgments.push({ queryId, copilot, position: p + 1, rank: p === winner ? 1 : 2, status: 'ok', total: 0 }),
      );
    }
    const t = rankOneByPositionTest(judgments, unitSize, seed, opts.iterations ?? 999);
    if (t.pValue < opts.alpha) conditioned++;
    if (chiSquareSurvival(t.statistic, t.df) < opts.alpha) chiSquare++;
  }
  return { conditioned: simulatedRate(conditioned, opts.sims), chiSquare: simulatedRate(chiSquare, opts.sims) };
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

/** Simulated samples of size n whose 95% interval contains the true mean, as a rate with its exact interval. */
export function intervalCoverage(opts: {
  n: number;
  sims: number;
  method: IntervalMethod | 'auto';
  distribution: keyof typeof SCORE_DISTRIBUTIONS;
  seed: string;
  iterations?: number;
}): SimulatedRate {
  const dist = SCORE_DISTRIBUTIONS[opts.distribution];
  const draw = dist.draw(seededRandom(`${opts.seed}:data`));
  let covered = 0;
  for (let s = 0; s < opts.sims; s++) {
    const xs = Array.from({ length: opts.n }, draw);
    const ci = meanCI(xs, { method: opts.method, seed: `${opts.seed}:${s}`, iterations: opts.iterations ?? 1000 });
    if (ci && ci.low <= dist.mean && dist.mean <= ci.high) covered++;
  }
  return simulatedRate(covered, opts.sims);
}

/** Required coverage of a nominal 95% interval, from n = 10 up, for what reports use. */
export const COVERAGE_REQUIRED = 0.93;
export const COVERAGE_NS = [5, 10, 20, 30, 50, 100];

/**
 * A coverage cell as printed: the rate with its interval, then `!` when the estimate is below COVERAGE_REQUIRED and
 * `!!` when the whole interval is.
 */
export function coverageCell(r: SimulatedRate): string {
  const flag = r.ci95.high < COVERAGE_REQUIRED ? '!!' : r.rate < COVERAGE_REQUIRED ? '!' : '';
  return `${pct(r.rate)} [${range(r.ci95)}]${flag}`;
}

/** The smallest n of the grid from which every larger simulated n also meets the requirement (null when n = 100 does not). */
export function minimumN(cells: Array<{ n: number; coverage: SimulatedRate }>): number | null {
  let min: number | null = null;
  for (let i = cells.length - 1; i >= 0 && cells[i].coverage.rate >= COVERAGE_REQUIRED; i--) min = cells[i].n;
  return min;
}

export interface StatisticsBenchOptions {
  /** Simulated runs per false-positive claim (≥ 5,000 resolves "≤ 3%" at a 2.5% nominal level). */
  sims?: number;
  seed?: string;
}

/** The figures `judgeflow bench` prints (figures, not assertions; every number is reproducible from `seed`). */
export function printStatisticsFigures(log: (line: string) => void, opts: StatisticsBenchOptions = {}): void {
  const sims = opts.sims ?? 5000;
  const powerSims = Math.max(100, Math.round(sims / 5));
  const curveSims = Math.max(100, Math.round(sims / 10));
  const coverageSims = Math.max(200, Math.round(sims / 5));
  const seed = opts.seed ?? 'bench';
  const alpha = 0.025;
  const timed = <T>(f: () => T): [T, string] => {
    const t0 = Date.now();
    const r = f();
    return [r, `${((Date.now() - t0) / 1000).toFixed(1)} s`];
  };
  log(
    `\nStatistics simulations, seed "${seed}" (presentation orders from the CAB balanced design). Every rate: k of n simulated runs with its exact`,
  );
  log(
    `Clopper–Pearson 95% interval; a claim is "shown" when the interval lies inside it, "contradicted" when outside, else "not resolved".`,
  );
  log(
    `Runs: ${sims} per false-positive rate, ${powerSims} per power figure, ${curveSims} per point of the power curves, ${coverageSims} per coverage cell.`,
  );

  const s = POSITION_SCENARIO;
  log(
    `\nPosition bias of totals (blocked two-way ANOVA, what reports use): ${s.systemMeans.length} systems (means ${s.systemMeans.join('/')}), ${s.queries} queries, query sd ${s.querySd}, noise sd ${s.noiseSd}; α = ${alpha}`,
  );
  const [power, t1] = timed(() => positionTotalsRejection(s, powerSims, alpha, `${seed}:power`));
  log(
    `  +${s.bonus} in position 1, power: ${describeRate(power.blocked, { atLeast: 0.8 })}; old one-way ANOVA ${describeRate(power.oneWay)}  [${t1}]`,
  );
  const [fpr, t2] = timed(() => positionTotalsRejection({ ...s, bonus: 0 }, sims, alpha, `${seed}:null`));
  log(
    `  gaussian null (F exact by theory), false-positive rate: ${describeRate(fpr.blocked, { atMost: 0.03 })}; old one-way ${describeRate(fpr.oneWay)}  [${t2}]`,
  );
  for (const [i, n] of REALISTIC_NULLS.entries()) {
    const [r, t] = timed(() => positionTotalsRejection(n.scenario, sims, alpha, `${seed}:null${i}`));
    log(`  ${n.label}, false-positive rate: ${describeRate(r.blocked, { atMost: 0.03 })}  [${t}]`);
  }

  log(`\nRank-1 by position (size-conditioned Monte Carlo test, what reports use); α = ${alpha}`);
  const [rank1, t3] = timed(() => rankOneMixedSizesRejection({ sims, alpha, seed: `${seed}:rank1`, iterations: 999 }));
  log(
    `  no position effect, 100 queries, half rank 2 systems, half 5, equal quality: ${describeRate(rank1.conditioned, { between: [0.02, 0.03] })}; old χ² approximation ${describeRate(rank1.chiSquare)}  [${t3}]`,
  );
  const rankScenario: PositionScenario = { ...POSITION_SCENARIO, queries: 198, bonus: 0 };
  const [unequalNull, t4] = timed(() =>
    rankOneRejection(rankScenario, { sims, alpha, seed: `${seed}:rank1-unequal`, iterations: 999 }),
  );
  log(
    `  no position effect, 198 queries × 4 unequal systems (${rankScenario.systemMeans.join('/')}, judge ranks by total): ${describeRate(unequalNull, { atMost: alpha })} (conservative: power below the equal-quality case)  [${t4}]`,
  );
  const bonuses = [0, 1, 2, 3, 4, 6, 8, 10];
  for (const [label, means] of [
    ['unequal systems ' + rankScenario.systemMeans.join('/'), rankScenario.systemMeans],
    ['equal systems 26/26/26/26', [26, 26, 26, 26]],
  ] as const) {
    const t0 = Date.now();
    const curve = bonuses.map((bonus) => ({
      bonus,
      power: rankOneRejection(
        { ...rankScenario, systemMeans: [...means], bonus },
        { sims: curveSims, alpha, seed: `${seed}:rank1-power:${label}:${bonus}`, iterations: 499 },
      ),
    }));
    const found = bonusForPower(curve);
    log(
      `  power at 198 queries × 4 ${label} (noise sd ${rankScenario.noiseSd}, Monte Carlo 499 draws), by position-1 bonus in total points:`,
    );
    for (const c of curve) log(`    +${String(c.bonus).padEnd(3)} ${describeRate(c.power)}`);
    log(
      found.grid === null
        ? `    80% power is not reached by +${bonuses[bonuses.length - 1]}  [${((Date.now() - t0) / 1000).toFixed(1)} s]`
        : `    80% power from about +${found.interpolated!.toFixed(1)} (interpolated; +${found.grid} is the first grid bonus with ≥ 80%)  [${((Date.now() - t0) / 1000).toFixed(1)} s]`,
    );
  }

  log(
    `\nCoverage of nominal 95% intervals for a mean: each cell covered/${coverageSims} samples [exact 95% interval]; bootstrap 1000 resamples.`,
  );
  log(
    `Required ≥ ${pct(COVERAGE_REQUIRED, 0)} from n = 10 up for what reports use (t below ${BCA_MIN_N}, BCa from ${BCA_MIN_N}); ! estimate below it, !! whole interval below it.`,
  );
  const methods: Array<IntervalMethod> = ['percentile', 't', 'bca', 'studentized'];
  log(`  ${'distribution'.padEnd(12)}  ${'n'.padEnd(4)}  ${methods.map((m) => m.padEnd(24)).join('')}reports use`);
  for (const distribution of Object.keys(SCORE_DISTRIBUTIONS) as Array<keyof typeof SCORE_DISTRIBUTIONS>) {
    const used: Array<{ n: number; coverage: SimulatedRate }> = [];
    const studentized: Array<{ n: number; coverage: SimulatedRate }> = [];
    const t0 = Date.now();
    for (const n of COVERAGE_NS) {
      const cov = Object.fromEntries(
        methods.map((method) => [
          method,
          intervalCoverage({ n, sims: coverageSims, method, distribution, seed: `${seed}:cov:${distribution}:${n}` }),
        ]),
      ) as Record<IntervalMethod, SimulatedRate>;
      // What reports use is one of the two, by n: no need to simulate it again.
      const reports = n < BCA_MIN_N ? cov.t : cov.bca;
      used.push({ n, coverage: reports });
      studentized.push({ n, coverage: cov.studentized });
      log(
        `  ${distribution.padEnd(12)}  ${String(n).padEnd(4)}  ${methods.map((m) => coverageCell(cov[m]).padEnd(24)).join('')}${coverageCell(reports)}`,
      );
    }
    const min = minimumN(used);
    const minStudentized = minimumN(studentized);
    log(
      `  ${distribution}: what reports use meets ${pct(COVERAGE_REQUIRED, 0)} from n = ${min ?? '> 100'}; studentized bootstrap from n = ${minStudentized ?? '> 100'}  [${((Date.now() - t0) / 1000).toFixed(1)} s]`,
    );
  }
}
