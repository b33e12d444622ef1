import { intraclassCorrelation, kendallTauB, krippendorffAlpha, withinUnitSpread } from '../../../core/stats/agreement';

describe('krippendorffAlpha', () => {
  // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example: 4 coders,
  // 12 units, missing values; published alpha: nominal 0.743, interval 0.849.
  const _ = null;
  const coders = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
  ];
  const units = coders[0].map((_v, u) => coders.map((c) => c[u]));

  it('matches the published worked example', () => {
    expect(krippendorffAlpha(units, 'nominal')).toBeCloseTo(0.743, 3);
    expect(krippendorffAlpha(units, 'interval')).toBeCloseTo(0.849, 3);
  });

  it('is 1 for perfect agreement, negative when units disagree more than chance, NaN with nothing to disagree about', () => {
    expect(
      krippendorffAlpha([
        [1, 1, 1],
        [5, 5, 5],
        [3, 3, null],
      ]),
    ).toBe(1);
    expect(
      krippendorffAlpha([
        [2, 2],
        [2, 2],
      ]),
    ).toBeNaN();
    expect(krippendorffAlpha([[1], [2]])).toBeNaN();
    // Each unit holds every value once: all disagreement is within units, alpha < 0.
    expect(
      krippendorffAlpha([
        [1, 2, 3],
        [1, 2, 3],
        [1, 2, 3],
      ]),
    ).toBeLessThan(0);
  });
});

describe('intraclassCorrelation', () => {
  // Shrout & Fleiss (1979), Table 2: 6 targets × 4 judges; ICC(1,1) = .17, ICC(2,1) = .29, ICC(3,1) = .71.
  const table = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
  ];

  it('matches Shrout & Fleiss', () => {
    const icc = intraclassCorrelation(table);
    expect(icc.icc1).toBeCloseTo(0.166, 3);
    expect(icc.icc2).toBeCloseTo(0.29, 2);
    expect(icc.icc3).toBeCloseTo(0.715, 3);
    expect(icc.units).toBe(6);
    expect(icc.raters).toBe(4);
  });

  it('gives 1 for identical raters and drops incomplete units', () => {
    const icc = intraclassCorrelation([
      [1, 1],
      [4, 4],
      [7, 7],
      [2, null],
    ]);
    expect(icc.units).toBe(3);
    expect(icc.icc1).toBeCloseTo(1, 12);
    expect(icc.icc2).toBeCloseTo(1, 12);
  });

  it('separates consistency from absolute agreement: a constant offset', () => {
    const icc = intraclassCorrelation([
      [1, 3],
      [4, 6],
      [7, 9],
      [2, 4],
    ]);
    expect(icc.icc3).toBeCloseTo(1, 12);
    expect(icc.icc2).toBeLessThan(0.9);
  });
});

describe('kendallTauB', () => {
  it('matches a hand computation with ties', () => {
    // Pairs: C = 3, D = 1, one tie in x only, one in y only: (3 − 1) / √(5 · 5) = 0.4.
    expect(kendallTauB([1, 2, 2, 3], [1, 3, 2, 2])).toBeCloseTo(0.4, 12);
  });

  it('is ±1 for the same and reversed orders, NaN for a constant', () => {
    expect(kendallTauB([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(kendallTauB([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
    expect(kendallTauB([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(() => kendallTauB([1], [1, 2])).toThrow(RangeError);
  });
});

describe('withinUnitSpread', () => {
  it('pools within-unit variance and counts disagreements', () => {
    // Unit 1: [4, 6] → SS 2, df 1; unit 2: [5, 5, 8] → mean 6, SS 1 + 1 + 4 = 6, df 2; unit 3 has one value.
    const s = withinUnitSpread([[4, 6], [5, 5, 8], [7]], 2);
    expect(s.sd).toBeCloseTo(Math.sqrt(8 / 3), 12);
    expect(s.disagreeShare).toBe(1);
    expect(s.units).toBe(2);
    expect(
      withinUnitSpread(
        [
          [4, 5],
          [5, 5, 8],
        ],
        2,
      ).disagreeShare,
    ).toBe(0.5);
    expect(withinUnitSpread([[1], [2]]).sd).toBeNaN();
  });
});
