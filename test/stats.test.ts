import {
  betaI,
  bootstrapMeanCI,
  chiSquareIndependence,
  chiSquareSurvival,
  chiSquareUniform,
  fSurvival,
  gammaQ,
  lnGamma,
  mean,
  oneWayAnova,
  pairedTest,
} from '../core/stats';
import { seededRandom } from '../core/random';

describe('seededRandom', () => {
  it('is deterministic per seed and stays in [0, 1)', () => {
    const a = seededRandom('abc');
    const b = seededRandom('abc');
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mean(xs)).toBeGreaterThan(0.45);
    expect(mean(xs)).toBeLessThan(0.55);
  });

  it('differs between seeds and treats numbers like their string form', () => {
    expect(seededRandom('abc')()).not.toBe(seededRandom('abd')());
    expect(seededRandom(42)()).toBe(seededRandom('42')());
  });
});

describe('mean', () => {
  it('averages and is NaN for an empty array', () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(mean([])).toBeNaN();
  });
});

describe('special functions', () => {
  it('lnGamma matches factorials and Γ(1/2) = √π', () => {
    expect(lnGamma(10)).toBeCloseTo(Math.log(362880), 12);
    expect(lnGamma(1)).toBeCloseTo(0, 12);
    expect(lnGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
  });

  it('gammaQ(1, x) = e^-x', () => {
    for (const x of [0.1, 1, 2.5, 10, 40]) expect(gammaQ(1, x)).toBeCloseTo(Math.exp(-x), 12);
    expect(gammaQ(3, 0)).toBe(1);
  });

  it('betaI(1, 1, x) = x and betaI(a, 1, x) = x^a', () => {
    expect(betaI(1, 1, 0.3)).toBeCloseTo(0.3, 12);
    expect(betaI(2.5, 1, 0.6)).toBeCloseTo(0.6 ** 2.5, 12);
    expect(betaI(2, 3, 0)).toBe(0);
    expect(betaI(2, 3, 1)).toBe(1);
  });

  it('chi-square survival matches table critical values', () => {
    expect(chiSquareSurvival(3.841, 1)).toBeCloseTo(0.05, 4);
    expect(chiSquareSurvival(6.635, 1)).toBeCloseTo(0.01, 4);
    expect(chiSquareSurvival(5.991, 2)).toBeCloseTo(0.05, 4);
    expect(chiSquareSurvival(7.815, 3)).toBeCloseTo(0.05, 4);
    expect(chiSquareSurvival(18.307, 10)).toBeCloseTo(0.05, 4);
    // df = 2 is exactly exponential: P(X >= x) = e^(-x/2)
    expect(chiSquareSurvival(4, 2)).toBeCloseTo(Math.exp(-2), 12);
  });

  it('F survival matches table critical values and the df1 = 2 closed form', () => {
    expect(fSurvival(3.885, 2, 12)).toBeCloseTo(0.05, 4);
    expect(fSurvival(3.098, 3, 20)).toBeCloseTo(0.05, 4);
    expect(fSurvival(4.96, 1, 10)).toBeCloseTo(0.05, 3);
    // P(F(2, d) >= f) = (1 + 2f/d)^(-d/2)
    expect(fSurvival(1.7, 2, 9)).toBeCloseTo((1 + (2 * 1.7) / 9) ** -4.5, 12);
  });
});

describe('bootstrapMeanCI', () => {
  const xs = [3, 5, 4, 6, 2, 5, 7, 4, 5, 3, 6, 4];

  it('contains the mean and is ordered', () => {
    const ci = bootstrapMeanCI(xs, { seed: 's' })!;
    expect(ci.low).toBeLessThan(mean(xs));
    expect(ci.high).toBeGreaterThan(mean(xs));
    expect(ci.low).toBeGreaterThanOrEqual(Math.min(...xs));
    expect(ci.high).toBeLessThanOrEqual(Math.max(...xs));
  });

  it('is deterministic for a seed', () => {
    expect(bootstrapMeanCI(xs, { seed: 'x' })).toEqual(bootstrapMeanCI(xs, { seed: 'x' }));
    expect(bootstrapMeanCI(xs)).toEqual(bootstrapMeanCI(xs));
  });

  it('narrows as the level drops', () => {
    const wide = bootstrapMeanCI(xs, { level: 0.99, seed: 'x' })!;
    const narrow = bootstrapMeanCI(xs, { level: 0.5, seed: 'x' })!;
    expect(narrow.high - narrow.low).toBeLessThan(wide.high - wide.low);
  });

  it('is roughly mean ± 1.96 SE for a large sample', () => {
    const rand = seededRandom('normal-ish');
    const big = Array.from({ length: 400 }, () => rand() * 10); // uniform(0, 10): sd = 10/√12
    const se = 10 / Math.sqrt(12) / Math.sqrt(big.length);
    const ci = bootstrapMeanCI(big, { seed: 'y' })!;
    expect(ci.high - ci.low).toBeGreaterThan(2 * 1.96 * se * 0.85);
    expect(ci.high - ci.low).toBeLessThan(2 * 1.96 * se * 1.15);
  });

  it('returns null for fewer than two values and rejects a bad level', () => {
    expect(bootstrapMeanCI([])).toBeNull();
    expect(bootstrapMeanCI([1])).toBeNull();
    expect(() => bootstrapMeanCI(xs, { level: 1 })).toThrow(RangeError);
  });
});

describe('pairedTest', () => {
  const base = Array.from({ length: 30 }, (_, i) => (i * 7) % 10);

  it('finds a constant +1 shift over 30 pairs significant', () => {
    const r = pairedTest(
      base,
      base.map((x) => x + 1),
    );
    expect(r.n).toBe(30);
    expect(r.meanDiff).toBeCloseTo(1, 12);
    // Only the all-same-sign flips are as extreme; the Monte Carlo estimate is (1 + ~0) / 5001.
    expect(r.pValue).toBeLessThan(0.001);
    expect(r.significant).toBe(true);
    expect(r.ci95).toEqual({ low: 1, high: 1 });
  });

  it('does not call identical arrays significant', () => {
    const r = pairedTest(base, [...base]);
    expect(r).toEqual({ n: 30, meanDiff: 0, ci95: { low: 0, high: 0 }, pValue: 1, significant: false });
  });

  it('is exact for small n: five +1 shifts give p = 2/32', () => {
    const r = pairedTest([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]);
    expect(r.pValue).toBe(2 / 32);
    expect(r.significant).toBe(false);
  });

  it('is two-sided and reports the direction in meanDiff', () => {
    const down = pairedTest(
      base,
      base.map((x) => x - 1),
    );
    expect(down.meanDiff).toBeCloseTo(-1, 12);
    expect(down.significant).toBe(true);
  });

  it('does not flag pure noise and is deterministic for a seed', () => {
    const rand = seededRandom('noise');
    const a = Array.from({ length: 50 }, () => rand());
    const b = a.map((x) => x + (rand() - 0.5) * 0.01);
    const r1 = pairedTest(a, b, { seed: 'k' });
    expect(r1.pValue).toBeGreaterThan(0.05);
    expect(r1.ci95!.low).toBeLessThan(r1.meanDiff);
    expect(r1.ci95!.high).toBeGreaterThan(r1.meanDiff);
    expect(pairedTest(a, b, { seed: 'k' })).toEqual(r1);
  });

  it('respects alpha and rejects unpaired input', () => {
    const r = pairedTest([1, 2, 3, 4, 5], [2, 3, 4, 5, 6], { alpha: 0.1 });
    expect(r.significant).toBe(true);
    expect(() => pairedTest([1, 2], [1])).toThrow(RangeError);
  });

  it('handles empty input', () => {
    const r = pairedTest([], []);
    expect(r.n).toBe(0);
    expect(r.meanDiff).toBeNaN();
    expect(r.ci95).toBeNull();
    expect(r.pValue).toBe(1);
    expect(r.significant).toBe(false);
  });
});

describe('chiSquareUniform', () => {
  it('is 0 with p = 1 for perfectly even counts', () => {
    expect(chiSquareUniform([10, 10, 10, 10])).toEqual({ statistic: 0, df: 3, pValue: 1 });
  });

  it('computes the statistic by hand: [20, 10] vs 15 expected each', () => {
    const r = chiSquareUniform([20, 10]);
    expect(r.statistic).toBeCloseTo(25 / 15 + 25 / 15, 12);
    expect(r.df).toBe(1);
    expect(r.pValue).toBeGreaterThan(0.05); // 3.33 < 3.841
    expect(r.pValue).toBeLessThan(0.1); // 3.33 > 2.706
  });

  it('flags a strong position bias', () => {
    const r = chiSquareUniform([70, 30]); // statistic = 16
    expect(r.statistic).toBeCloseTo(16, 12);
    expect(r.pValue).toBeLessThan(0.001);
  });

  it('returns p = 1 when there is nothing to test', () => {
    expect(chiSquareUniform([]).pValue).toBe(1);
    expect(chiSquareUniform([5]).pValue).toBe(1);
    expect(chiSquareUniform([0, 0, 0]).pValue).toBe(1);
  });
});

describe('chiSquareIndependence', () => {
  it('computes a 2x2 table by hand and skips all-zero rows and columns', () => {
    // Expected 15 in every cell: 4 * 5^2 / 15 = 20/3.
    const r = chiSquareIndependence([
      [10, 20],
      [20, 10],
    ]);
    expect(r.statistic).toBeCloseTo(20 / 3, 12);
    expect(r.df).toBe(1);
    expect(r.pValue).toBeLessThan(0.01); // 6.667 > 6.635
    expect(r.pValue).toBeGreaterThan(0.005); // 6.667 < 7.879
    expect(
      chiSquareIndependence([
        [10, 0, 20],
        [0, 0, 0],
        [20, 0, 10],
      ]),
    ).toEqual(r);
  });

  it('gives p = 1 for a table with proportional rows', () => {
    const r = chiSquareIndependence([
      [10, 20, 30],
      [20, 40, 60],
    ]);
    expect(r.statistic).toBeCloseTo(0, 12);
    expect(r.df).toBe(2);
    expect(r.pValue).toBeCloseTo(1, 12);
  });

  it('has df 0 and p = 1 when only one row survives', () => {
    expect(chiSquareIndependence([[1, 2, 3], [0, 0, 0]])).toEqual({ statistic: 0, df: 0, pValue: 1 });
  });
});

describe('oneWayAnova', () => {
  it('matches a hand-computed example', () => {
    // Means 2, 5, 8; grand mean 5. SSB = 3*(9+0+9) = 54, SSW = 3*2 = 6.
    // MSB = 54/2 = 27, MSW = 6/6 = 1, F = 27; p = (1 + 2*27/6)^-3 = 0.001 (df1 = 2 closed form).
    const r = oneWayAnova([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ]);
    expect(r.F).toBeCloseTo(27, 12);
    expect(r.dfBetween).toBe(2);
    expect(r.dfWithin).toBe(6);
    expect(r.pValue).toBeCloseTo(0.001, 12);
  });

  it('matches a two-group example (F = t^2)', () => {
    // Means 2 and 3, pooled variance 1, t = 1/sqrt(2/3) → F = 1.5 on (1, 4).
    const r = oneWayAnova([
      [1, 2, 3],
      [2, 3, 4],
    ]);
    expect(r.F).toBeCloseTo(1.5, 12);
    expect(r.pValue).toBeGreaterThan(0.2);
  });

  it('handles degenerate input', () => {
    expect(oneWayAnova([[1, 2, 3]]).pValue).toBeNaN();
    expect(oneWayAnova([[1], [2]]).pValue).toBeNaN(); // no within-group df
    expect(oneWayAnova([[2, 2], [2, 2]])).toEqual({ F: NaN, dfBetween: 1, dfWithin: 2, pValue: 1 });
    expect(oneWayAnova([[1, 1], [3, 3], []])).toEqual({ F: Infinity, dfBetween: 1, dfWithin: 2, pValue: 0 });
  });
});
