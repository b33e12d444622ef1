import {
  betaI,
  blockedAnova,
  bradleyTerry,
  BRADLEY_TERRY_PRIOR,
  chiSquareSurvival,
  clopperPearson,
  chiSquareUniform,
  fSurvival,
  gammaQ,
  holmAdjust,
  lnGamma,
  mean,
  meanCI,
  midRanks,
  normalCdf,
  normalQuantile,
  oneWayAnova,
  pairedTest,
  pearson,
  spearman,
  quantileSorted,
  bootstrapMeans,
  studentTCdf,
  studentTQuantile,
  winnerPositionTest,
} from '../../../core/stats/stats';
import { seededRandom } from '../../../core/stats/random';

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

describe('meanCI', () => {
  const xs = [3, 5, 4, 6, 2, 5, 7, 4, 5, 3, 6, 4];

  it('is the Student t interval below 100 units: mean ± t(0.975, n−1)·s/√n', () => {
    // mean 54/12 = 4.5; Σ(x − 4.5)² = 23; s = √(23/11); t(0.975, 11) = 2.200985.
    const ci = meanCI(xs)!;
    const half = 2.200985 * Math.sqrt(23 / 11 / 12);
    expect(ci.method).toBe('t');
    expect(ci.n).toBe(12);
    expect(ci.low).toBeCloseTo(4.5 - half, 5);
    expect(ci.high).toBeCloseTo(4.5 + half, 5);
  });

  it('is BCa from 100 units, deterministic for a seed, and close to the t interval for symmetric data', () => {
    const rand = seededRandom('uniform');
    const big = Array.from({ length: 150 }, () => rand() * 10);
    const bca = meanCI(big, { seed: 'y', iterations: 1000 })!;
    const t = meanCI(big, { method: 't' })!;
    expect(bca.method).toBe('bca');
    expect(bca.n).toBe(150);
    expect(meanCI(big, { seed: 'y', iterations: 1000 })).toEqual(bca);
    expect(Math.abs(bca.low - t.low)).toBeLessThan(0.1 * (t.high - t.low));
    expect(Math.abs(bca.high - t.high)).toBeLessThan(0.1 * (t.high - t.low));
  });

  it('leans BCa towards the long tail of skewed data', () => {
    // Mostly small values and a few large ones: the upper side of the interval is the longer one.
    const skewed = Array.from({ length: 60 }, (_, i) => (i % 10 === 0 ? 40 : i % 3));
    const ci = meanCI(skewed, { seed: 's', method: 'bca' })!;
    const m = mean(skewed);
    expect(ci.high - m).toBeGreaterThan(1.15 * (m - ci.low));
  });

  it('degenerates to a point for constant data and is null below two values', () => {
    expect(meanCI([0.7, 0.7, 0.7])).toEqual({
      low: expect.closeTo(0.7, 12),
      high: expect.closeTo(0.7, 12),
      n: 3,
      method: 't',
    });
    expect(meanCI([])).toBeNull();
    expect(meanCI([1])).toBeNull();
    expect(() => meanCI(xs, { level: 1 })).toThrow(RangeError);
  });
});

describe('distribution quantiles', () => {
  it('normal and t quantiles match tables', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.025)).toBeCloseTo(-1.959964, 6);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.776445, 5);
    expect(studentTQuantile(0.975, 9)).toBeCloseTo(2.262157, 5);
    expect(studentTQuantile(0.025, 9)).toBeCloseTo(-2.262157, 5);
    expect(studentTCdf(2.228139, 10)).toBeCloseTo(0.975, 6);
  });
});

describe('blockedAnova', () => {
  it('reproduces a textbook Latin square (Montgomery, rocket propellant: SS 330 / 128, F = 7.73, p = 0.0025)', () => {
    const letters = ['ABCDE', 'BCDEA', 'CDEAB', 'DEABC', 'EABCD'];
    const y = [
      [24, 20, 19, 24, 24],
      [17, 24, 30, 27, 36],
      [18, 38, 26, 27, 21],
      [26, 31, 26, 23, 22],
      [22, 30, 20, 29, 31],
    ];
    const rows = y.flatMap((row, i) =>
      row.map((v, j) => ({ block: `batch${i}`, nuisance: [`operator${j}`], factor: letters[i][j], y: v })),
    );
    const r = blockedAnova(rows);
    expect(r.ssFactor).toBeCloseTo(330, 9);
    expect(r.ssResidual).toBeCloseTo(128, 9);
    expect(r.dfFactor).toBe(4);
    expect(r.dfResidual).toBe(12);
    expect(r.F).toBeCloseTo(7.734375, 9);
    expect(r.pValue).toBeCloseTo(0.0025, 4);
  });

  it('reproduces a randomised complete block design (Montgomery, hardness tips: F = 14.44, p = 0.0009)', () => {
    const y = [
      [9.3, 9.4, 9.6, 10.0],
      [9.4, 9.3, 9.8, 9.9],
      [9.2, 9.4, 9.5, 9.7],
      [9.7, 9.6, 10.0, 10.2],
    ];
    const r = blockedAnova(
      y.flatMap((row, t) => row.map((v, c) => ({ block: `coupon${c}`, factor: `tip${t}`, y: v }))),
    );
    expect(r.ssFactor).toBeCloseTo(0.385, 9);
    expect(r.ssResidual).toBeCloseTo(0.08, 9);
    expect(r.F).toBeCloseTo(14.4375, 6);
    expect(r.pValue).toBeCloseTo(0.00087, 5);
  });

  it('handles missing cells, aliased levels and exact fits', () => {
    // A position only ever seen in one block is aliased with nothing estimable there: it adds no df.
    const rows = [
      { block: 'q1', nuisance: ['A'], factor: '1', y: 10 },
      { block: 'q1', nuisance: ['B'], factor: '2', y: 8 },
      { block: 'q2', nuisance: ['A'], factor: '2', y: 9 },
      { block: 'q2', nuisance: ['B'], factor: '1', y: 9 },
      { block: 'q3', nuisance: ['A'], factor: '1', y: 11 },
      { block: 'q3', nuisance: ['B'], factor: '2', y: 8.5 },
      { block: 'q4', nuisance: ['A'], factor: '3', y: 7 },
    ];
    const r = blockedAnova(rows);
    expect(r.dfFactor).toBe(1);
    expect(r.dfResidual).toBe(7 - 4 - 2);
    // Totals that are exactly query + position: no residual, the effect is certain.
    const exact = ['q1', 'q2', 'q3'].flatMap((q, i) =>
      ['A', 'B', 'C'].map((s, k) => ({
        block: q,
        nuisance: [s],
        factor: String((i + k) % 3),
        y: 10 * i + ((i + k) % 3 === 0 ? 2 : 0),
      })),
    );
    expect(blockedAnova(exact).pValue).toBe(0);
    const flat = exact.map((r) => ({ ...r, y: 0.7 }));
    expect(blockedAnova(flat).pValue).toBe(1);
  });

  it('is unmoved by a large constant offset', () => {
    const y = [
      [9.3, 9.4, 9.6, 10.0],
      [9.4, 9.3, 9.8, 9.9],
      [9.2, 9.4, 9.5, 9.7],
      [9.7, 9.6, 10.0, 10.2],
    ];
    const rows = (offset: number) =>
      y.flatMap((row, t) => row.map((v, c) => ({ block: `coupon${c}`, factor: `tip${t}`, y: offset + v })));
    const shifted = blockedAnova(rows(1e7));
    expect(shifted.F).toBeCloseTo(14.4375, 4);
    expect(shifted.pValue).toBeCloseTo(blockedAnova(rows(0)).pValue, 6);
  });
});

describe('winnerPositionTest', () => {
  it('agrees with the exact conditional distribution, enumerated, on mixed sizes', () => {
    const units = [
      { size: 2, position: 1 },
      { size: 5, position: 1 },
      { size: 5, position: 1 },
      { size: 2, position: 1 },
      { size: 3, position: 2 },
    ];
    const r = winnerPositionTest(units, { iterations: 50_000, seed: 'exact' });
    // Enumerate all 2·5·5·2·3 = 300 equally likely winner patterns.
    const sizes = units.map((u) => u.size);
    let greater = 0;
    let equal = 0;
    let total = 0;
    const walk = (i: number, counts: number[]) => {
      if (i === sizes.length) {
        total++;
        const stat = counts.reduce((s, c, p) => s + (c - r.expected[p]) ** 2 / r.expected[p], 0);
        if (stat > r.statistic + 1e-9) greater++;
        else if (stat >= r.statistic - 1e-9) equal++;
        return;
      }
      for (let p = 0; p < sizes[i]; p++) {
        counts[p]++;
        walk(i + 1, counts);
        counts[p]--;
      }
    };
    walk(0, [0, 0, 0, 0, 0]);
    expect(total).toBe(300);
    expect(r.expected).toEqual([1.4 + 1 / 3, 1.4 + 1 / 3, 0.4 + 1 / 3, 0.4, 0.4].map((e) => expect.closeTo(e, 12)));
    expect(r.observed).toEqual([4, 1, 0, 0, 0]);
    // Ties broken at random: p lies between P(T > t) and P(T ≥ t) of the exact conditional distribution.
    expect(r.pValue).toBeGreaterThan(greater / total - 0.005);
    expect(r.pValue).toBeLessThan((greater + equal) / total + 0.005);
    expect(equal).toBeGreaterThan(0);
  });

  it('gives p = 1 with nothing to test and rejects impossible positions', () => {
    expect(winnerPositionTest([{ size: 1, position: 1 }]).pValue).toBe(1);
    expect(() => winnerPositionTest([{ size: 2, position: 3 }])).toThrow(RangeError);
  });
});

describe('holmAdjust', () => {
  it('matches R p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm")', () => {
    expect(holmAdjust([0.01, 0.04, 0.03, 0.005])).toEqual([0.03, 0.06, 0.06, 0.02].map((p) => expect.closeTo(p, 12)));
  });

  it('caps at 1 and leaves untestable hypotheses out of the family', () => {
    expect(holmAdjust([0.5, 0.9])).toEqual([1, 1]);
    const r = holmAdjust([0.02, NaN, 0.01]);
    expect(r[0]).toBeCloseTo(0.02, 12);
    expect(r[1]).toBeNaN();
    expect(r[2]).toBeCloseTo(0.02, 12);
  });
});

describe('correlations', () => {
  it('pearson and spearman match hand computations', () => {
    // x = 1..5, y = 2,4,5,4,5: Sxy = 6, Sxx = 10, Syy = 6 → r = 6/√60.
    expect(pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])).toBeCloseTo(6 / Math.sqrt(60), 12);
    // Mid-ranks of y: 1, 2.5, 4.5, 2.5, 4.5 → Pearson of ranks.
    expect(midRanks([2, 4, 5, 4, 5])).toEqual([1, 2.5, 4.5, 2.5, 4.5]);
    expect(spearman([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])).toBeCloseTo(
      pearson([1, 2, 3, 4, 5], [1, 2.5, 4.5, 2.5, 4.5]),
      12,
    );
    expect(spearman([1, 2, 3], [1, 4, 9])).toBeCloseTo(1, 12);
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
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
    expect(r.ci95).toEqual({ low: 1, high: 1, n: 30, method: 't' });
  });

  it('does not call identical arrays significant', () => {
    const r = pairedTest(base, [...base]);
    expect(r).toEqual({
      n: 30,
      meanDiff: 0,
      ci95: { low: 0, high: 0, n: 30, method: 't' },
      pValue: 1,
      significant: false,
    });
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
    expect(
      oneWayAnova([
        [2, 2],
        [2, 2],
      ]),
    ).toEqual({ F: NaN, dfBetween: 1, dfWithin: 2, pValue: 1 });
    expect(oneWayAnova([[1, 1], [3, 3], []])).toEqual({ F: Infinity, dfBetween: 1, dfWithin: 2, pValue: 0 });
    // 0.7 is not exact in binary: the group means differ from 0.7 in the last bit, which must not read as an effect.
    expect(
      oneWayAnova([
        [0.7, 0.7, 0.7],
        [0.7, 0.7, 0.7, 0.7],
      ]).pValue,
    ).toBe(1);
    expect(
      oneWayAnova([
        [0.1, 0.1, 0.1],
        [0.3, 0.3, 0.3],
      ]).pValue,
    ).toBe(0);
  });

  it('is unmoved by a large constant offset (centred sums; scipy f_oneway gives p = 0.2746)', () => {
    const r = oneWayAnova([
      [1e7 + 1, 1e7 + 2, 1e7 + 3],
      [1e7 + 2, 1e7 + 3, 1e7 + 5],
    ]);
    expect(r.F).toBeCloseTo(1.6, 6);
    expect(r.pValue).toBeCloseTo(0.2746, 4);
    expect(r.pValue).toBeCloseTo(
      oneWayAnova([
        [1, 2, 3],
        [2, 3, 5],
      ]).pValue,
      8,
    );
    expect(
      oneWayAnova([
        [1e7 + 0.7, 1e7 + 0.7],
        [1e7 + 0.7, 1e7 + 0.7],
      ]).pValue,
    ).toBe(1);
  });
});

describe('bradleyTerry', () => {
  const ratios = (s: Array<number | null>, ref: number) => s.map((v) => v! / s[ref]!);

  it('converges on lopsided data to the maximum-likelihood fit with the documented prior', () => {
    // The fit two independent implementations agree on; 500 MM steps used to stop at [652.1, 1.239, 0.0012].
    const fit = bradleyTerry([
      [0, 1000, 1000],
      [0, 0, 1000],
      [0, 0, 0],
    ]);
    expect(fit.converged).toBe(true);
    expect(fit.prior).toBe(BRADLEY_TERRY_PRIOR);
    const r = ratios(fit.strengths, 1);
    expect(r[0]).toBeCloseTo(1001.001, 2);
    expect(r[2]).toBeCloseTo(0.000999, 6);
    expect(fit.strengths.reduce((p, v) => p! * v!, 1)).toBeCloseTo(1, 9);
  });

  it("satisfies the likelihood equations: each player's wins equal its expected wins", () => {
    // Six copilots where the better always wins, 10 games per pair.
    const k = 6;
    const wins = Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (i < j ? 10 : 0)));
    const fit = bradleyTerry(wins);
    expect(fit.converged).toBe(true);
    const p = fit.strengths as number[];
    for (let i = 0; i < k; i++) {
      let observed = 0;
      let expected = 0;
      for (let j = 0; j < k; j++) {
        if (i === j) continue;
        observed += wins[i][j] + fit.prior;
        expected += (wins[i][j] + wins[j][i] + 2 * fit.prior) * (p[i] / (p[i] + p[j]));
      }
      expect(Math.abs(observed - expected)).toBeLessThan(1e-7);
    }
    expect(p[0]).toBeGreaterThan(p[1]);
  });

  it('gives null with the reason where no strength can be estimated, and reports the connected groups', () => {
    // C only ever tied (no decisive comparison); D and E met only each other.
    const wins = [
      [0, 3, 0, 0, 0],
      [1, 0, 0, 0, 0],
      [0, 0, 0, 0, 0],
      [0, 0, 0, 0, 2],
      [0, 0, 0, 1, 0],
    ];
    const fit = bradleyTerry(wins);
    expect(fit.groups).toEqual([
      [0, 1],
      [3, 4],
    ]);
    expect(fit.strengths[0]).toBeGreaterThan(1);
    expect(fit.strengths[2]).toBeNull();
    expect(fit.reasons[2]).toBe('no decisive comparison');
    expect(fit.strengths[3]).toBeNull();
    expect(fit.reasons[3]).toMatch(/not compared/);
    expect(
      bradleyTerry([
        [0, 0],
        [0, 0],
      ]).strengths,
    ).toEqual([null, null]);
  });

  it('reports an iteration cap that was hit', () => {
    // Without a prior a player that never lost has no finite maximum.
    const fit = bradleyTerry(
      [
        [0, 5],
        [0, 0],
      ],
      { prior: 0, maxIterations: 20 },
    );
    expect(fit.converged).toBe(false);
    expect(fit.iterations).toBe(20);
    expect(fit.reasons[0]).toMatch(/not converged after 20/);
  });
});

describe('clopperPearson', () => {
  it('matches known exact intervals', () => {
    // scipy.stats.binomtest(5, 10).proportion_ci(method='exact'): (0.187086, 0.812914)
    const half = clopperPearson(5, 10)!;
    expect(half.low).toBeCloseTo(0.187086, 6);
    expect(half.high).toBeCloseTo(0.812914, 6);
    // Closed forms at the ends: k = 0 → [0, 1 − (α/2)^(1/n)], k = n → [(α/2)^(1/n), 1].
    expect(clopperPearson(0, 10)).toEqual({ low: 0, high: expect.closeTo(1 - 0.025 ** (1 / 10), 12) });
    expect(clopperPearson(10, 10)).toEqual({ low: expect.closeTo(0.025 ** (1 / 10), 12), high: 1 });
    // The figures: 56 of 2,000 runs → 2.1–3.6%; 42 of 2,000 → 1.5–2.8%.
    const fpr = clopperPearson(56, 2000)!;
    expect(fpr.low).toBeCloseTo(0.0212, 3);
    expect(fpr.high).toBeCloseTo(0.0362, 3);
    const rank1 = clopperPearson(42, 2000)!;
    expect(rank1.low).toBeCloseTo(0.0152, 3);
    expect(rank1.high).toBeCloseTo(0.0283, 3);
    expect(clopperPearson(0, 0)).toBeNull();
    expect(() => clopperPearson(3, 2)).toThrow(RangeError);
  });

  it('is exact: the lower bound is where P(X ≥ k) = α/2 and the upper where P(X ≤ k) = α/2', () => {
    const binomTail = (k: number, n: number, p: number, upper: boolean) => {
      let s = 0;
      for (let i = 0; i <= n; i++)
        if (upper ? i >= k : i <= k)
          s += Math.exp(
            lnGamma(n + 1) - lnGamma(i + 1) - lnGamma(n - i + 1) + i * Math.log(p) + (n - i) * Math.log(1 - p),
          );
      return s;
    };
    const ci = clopperPearson(7, 40)!;
    expect(binomTail(7, 40, ci.low, true)).toBeCloseTo(0.025, 9);
    expect(binomTail(7, 40, ci.high, false)).toBeCloseTo(0.025, 9);
  });
});

describe('the bootstrap and sign-flip loops step seededRandom in place (issue 29)', () => {
  // The loops as they were, through seededRandom's closure: the in-place generator must draw the same numbers.
  const closureMeans = (xs: number[], iterations: number, seed: string) => {
    const rand = seededRandom(seed);
    const means: number[] = [];
    for (let it = 0; it < iterations; it++) {
      let sum = 0;
      for (let i = 0; i < xs.length; i++) sum += xs[Math.floor(rand() * xs.length)];
      means.push(sum / xs.length);
    }
    return means;
  };
  const scores = (n: number, seed: string) => {
    const rand = seededRandom(seed);
    return Array.from({ length: n }, () => Math.round(rand() * 100 * rand()));
  };

  test('bootstrapMeans draws the resamples seededRandom(seed) draws', () => {
    for (const [n, seed] of [
      [150, 'a'],
      [1200, 'run-seed:Elsa:D3'],
      [7, ''],
    ] as const) {
      const xs = scores(n, `data:${seed}`);
      expect([...bootstrapMeans(xs, 100, seed)]).toEqual(closureMeans(xs, 100, seed));
    }
  });

  test("meanCI's BCa interval and pairedTest's sign-flip p-value are the ones the closure loops give", () => {
    const xs = scores(150, 'bca-data');
    const means = closureMeans(xs, 2000, 'cell').sort((x, y) => x - y);
    // The percentile interval is two quantiles of those means; BCa picks two others of the same means.
    const percentile = meanCI(xs, { seed: 'cell', method: 'percentile' })!;
    expect([percentile.low, percentile.high]).toEqual([quantileSorted(means, 0.025), quantileSorted(means, 0.975)]);
    const bca = meanCI(xs, { seed: 'cell' })!;
    expect(bca.method).toBe('bca');
    expect(bca.low).toBeGreaterThanOrEqual(means[0]);
    expect(bca.high).toBeLessThanOrEqual(means[1999]);
    // The sign flips: rand() < 0.5 negates, over 2,000 draws of 150 differences.
    const a = scores(150, 'pair-a');
    const b = scores(150, 'pair-b').map((y, i) => (i % 3 ? y : a[i] + 1));
    const diffs = a.map((x, i) => b[i] - x);
    const rand = seededRandom('pair:perm');
    const observed = Math.abs(diffs.reduce((s, d) => s + d, 0));
    const slack = 1e-9 * diffs.reduce((s, d) => s + Math.abs(d), 0);
    let extreme = 0;
    for (let it = 0; it < 2000; it++) {
      let sum = 0;
      for (const d of diffs) sum += rand() < 0.5 ? -d : d;
      if (Math.abs(sum) >= observed - slack) extreme++;
    }
    const t = pairedTest(a, b, { seed: 'pair', iterations: 2000 });
    expect(t.pValue).toBe((extreme + 1) / 2001);
    // Without its interval (separability asks for none), the same test.
    expect(pairedTest(a, b, { seed: 'pair', iterations: 2000, ci: false })).toEqual({ ...t, ci95: null });
  });
});
