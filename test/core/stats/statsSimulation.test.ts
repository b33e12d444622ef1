import {
  activeSelection,
  disagreementModel,
  disagreementProbabilities,
  gapCuts,
  gapStrata,
  inclusionProbabilities,
  squaredDisagreement,
  uncertaintyScores,
} from '../../../core/study/active';
import { calibratedWinRates, MIN_ANNOTATED_QUERIES } from '../../../core/study/calibrated';
import { clopperPearson, clusteredWilsonInterval, signFlipLessPValue, wilsonInterval } from '../../../core/stats/stats';
import {
  BIASED_JUDGE,
  UNINFORMATIVE_JUDGE,
  budgetForWidth,
  calibratedCoverage,
  gateAtBoundary,
  groundingCoverage,
  ppiWidths,
  selectionCurve,
  selfPreferenceFlagRate,
  stabilityFalseDrift,
  trueWinRate,
} from '../../../core/stats/statsSimulation';
import { describeAgainstTarget, simulatedRate, targetVerdict } from '../../../core/stats/simulation';

// Small, seeded versions of the bench's simulations (judgeflow bench --only stats): each checks a property that fails
// on the methods they replaced, at a fixed seed.

test('calibrated interval: no interval below the minimum of annotated queries; at 10 it covers the truth ≥ 90% of 120 runs', () => {
  const truth = trueWinRate(BIASED_JUDGE, 'Z');
  const few = calibratedCoverage(BIASED_JUDGE, {
    annotatedQueries: MIN_ANNOTATED_QUERIES - 1,
    sims: 5,
    seed: 'few',
    copilot: 'Z',
    truth,
  });
  expect(few.coverage).toBeNull();
  expect(few.noInterval).toBe(5);
  const ten = calibratedCoverage(BIASED_JUDGE, { annotatedQueries: 10, sims: 120, seed: 'ten', copilot: 'Z', truth });
  // The plain linearisation with a tuned λ covered 89.8% here (400 runs); a rate of 95% gives ≥ 108 of 120 with probability ≈ 98%.
  expect(ten.coverage!.k).toBeGreaterThanOrEqual(108);
});

test('PPI++: with an uninformative judge the tuned interval is narrower than plain PPI and near the annotators alone', () => {
  const truth = trueWinRate(UNINFORMATIVE_JUDGE, 'X');
  const r = ppiWidths(UNINFORMATIVE_JUDGE, { annotatedQueries: 100, sims: 6, seed: 'ppi', copilot: 'X', truth });
  expect(r.tuned).toBeLessThan(r.plain * 0.85);
  expect(r.tuned).toBeLessThanOrEqual(r.human * 1.05);
  // From 50 annotated queries on, a tuned λ whose variance exceeds the annotators' alone gives way to λ = 0: never wider.
  expect(r.notWider.k).toBe(r.notWider.n);
});

test('self-preference: a lenient judge (+4 on every copilot) is not flagged at 10, 20 and 40 queries', () => {
  // The offset-free model of before flagged it in 11.5% of runs at 10 queries; a flag needs a positive term now.
  const runs = { 10: 60, 20: 30, 40: 20 } as const;
  for (const queries of [10, 20, 40] as const) {
    const r = selfPreferenceFlagRate('lenient', { queries, sims: runs[queries], seed: `held-out-lenient:${queries}` });
    expect(r.judge.k).toBeLessThanOrEqual(1);
    expect(r.panel.k).toBeLessThanOrEqual(4);
  }
});

test('self-preference: a 1.3× stretched judge whose family copilot is best is not flagged; a +6 own-family bonus is, at 40 queries', () => {
  // The offset-only model flagged the stretched judge in 92.5% of runs.
  const stretched = selfPreferenceFlagRate('stretched', { queries: 40, sims: 20, seed: 'stretch' });
  expect(stretched.judge.k).toBeLessThanOrEqual(2);
  expect(stretched.panel.k).toBeGreaterThanOrEqual(stretched.judge.k);
  expect(
    selfPreferenceFlagRate('own-family +6', { queries: 40, sims: 10, seed: 'bonus' }).judge.k,
  ).toBeGreaterThanOrEqual(9);
});

test('grounding: 40 of 40 verified has an interval reaching below 1; coverage at rate 0.95 over 10 queries ≥ 93% of 400 runs', () => {
  const all = clusteredWilsonInterval(Array.from({ length: 10 }, () => ({ k: 4, n: 4 })))!;
  expect(all.low).toBeLessThan(0.95);
  expect(all.high).toBe(1);
  expect(
    clusteredWilsonInterval([
      { k: 0, n: 5 },
      { k: 0, n: 3 },
    ])!.high,
  ).toBeGreaterThan(0.1);
  // Clustering widens: the same 30 of 40 in lumpy clusters gives a wider interval than 30 of 40 independent claims.
  const lumpy = clusteredWilsonInterval([
    { k: 10, n: 10 },
    { k: 10, n: 10 },
    { k: 10, n: 10 },
    { k: 0, n: 10 },
  ])!;
  expect(lumpy.designEffect).toBeGreaterThan(5);
  expect(lumpy.high - lumpy.low).toBeGreaterThan(wilsonInterval(30, 40)!.high - wilsonInterval(30, 40)!.low);
  const g = groundingCoverage({ queries: 10, rate: 0.95, sims: 400, seed: 'ground' });
  expect(g.points).toBe(0);
  expect(g.coverage.k).toBeGreaterThanOrEqual(372);
});

test('gate at the allowed drop: the one-sided test of shifted differences fails ≤ 8% of 150 gates, the old rule about half', () => {
  const r = gateAtBoundary({ queries: 30, maxDrop: 2, sims: 150, seed: 'gate' });
  expect(r.gate.k).toBeLessThanOrEqual(12);
  expect(r.old.k).toBeGreaterThan(45);
  // The test itself: symmetric differences around 0 are not "below", a clear shift is.
  expect(signFlipLessPValue([1, -1, 2, -2, 3, -3])).toBeGreaterThan(0.4);
  expect(signFlipLessPValue([-1, -2, -1.5, -3, -0.5, -2, -1, -2.5])).toBeLessThan(0.01);
});

test('stability: pure judge noise reads as drift in ≤ 8% of 400 runs at 5 queries, also when one sample was lost', () => {
  // The "ratio > 2" rule read noise as drift 17% of the time here.
  expect(stabilityFalseDrift({ queries: 5, sims: 400, seed: 'stab' }).k).toBeLessThanOrEqual(32);
  expect(stabilityFalseDrift({ queries: 5, sims: 400, seed: 'stab-lost', lostSample: true }).k).toBeLessThanOrEqual(32);
});

test('active selection: probabilities sum to the budget, stay ≥ the uniform floor and ≤ 1, and follow the uncertainty', () => {
  const u = [1, 0.5, 0.01, 0.01, 0.2, 0.9, 0.001, 0.3];
  const p = inclusionProbabilities(u, 4);
  expect(p.reduce((s, x) => s + x, 0)).toBeCloseTo(4, 9);
  for (const x of p) expect(x).toBeLessThanOrEqual(1);
  expect(Math.min(...p)).toBeGreaterThanOrEqual((0.3 * 4) / 8 - 1e-12);
  expect(p[0]).toBeGreaterThan(p[2]);
  expect(() => inclusionProbabilities(u, 9)).toThrow(/budget/);
  // Close judge totals, or samples that disagree, are uncertain; a wide, consistent gap is not.
  const items = [
    { itemId: 'close', queryId: 'q1', first: 'A', second: 'B' },
    { itemId: 'clear', queryId: 'q2', first: 'A', second: 'B' },
    { itemId: 'noisy', queryId: 'q3', first: 'A', second: 'B' },
  ];
  const samples: Record<string, number[]> = {
    'q1|A': [50, 51],
    'q1|B': [50, 49],
    'q2|A': [80, 81],
    'q2|B': [40, 41],
    'q3|A': [70, 40],
    'q3|B': [50, 52],
  };
  const [close, clear, noisy] = uncertaintyScores(items, (q, c) => samples[`${q}|${c}`]);
  expect(close).toBeGreaterThan(0.5);
  expect(clear).toBeLessThan(0.01);
  expect(noisy).toBeGreaterThan(clear);
  const sel = activeSelection(items, (q, c) => samples[`${q}|${c}`], 2, 'seed');
  expect(sel.selection.method).toBe('active');
  for (const it of sel.items)
    expect(sel.selection.method === 'active' && sel.selection.probabilities[it.itemId]).toBeGreaterThan(0);
});

test('calibrated with an active design: weights by 1/π; every item selected with π = 1 is the annotators over all items', () => {
  const copilots = ['A', 'B'];
  const queryIds = Array.from({ length: 12 }, (_, i) => `q${i}`);
  const scores = new Map(
    queryIds.flatMap(
      (q, i) =>
        [
          [`${q}|A`, { total: 60 + (i % 3), rationales: null }],
          [`${q}|B`, { total: 50, rationales: null }],
        ] as const,
    ),
  );
  const items = queryIds.map((q) => ({ itemId: `${q}|A|B`, queryId: q, first: 'A', second: 'B' }));
  // Annotators prefer B on a third of the queries; the judge always prefers A.
  const annotations = items.map((it, i) => ({
    itemId: it.itemId,
    left: 'A',
    right: 'B',
    answer: {
      choice: (i % 3 === 0 ? 'B' : 'A') as 'A' | 'B',
      reason: null,
      seriousError: false,
      errorType: null,
      comment: null,
    },
  }));
  const all = calibratedWinRates({
    copilots,
    queryIds,
    studyItems: items,
    annotations,
    judge: { judgeRunId: 'r', scores },
    tieMargin: 0,
    design: { kind: 'active', probabilities: Object.fromEntries(items.map((it) => [it.itemId, 1])) },
  });
  expect(all.copilots.A.winRate!).toBeCloseTo(8 / 12, 9);
  expect(all.copilots.A.ci95!.low).toBeLessThan(8 / 12);
  expect(clopperPearson(8, 12)).not.toBeNull();
  // An annotated item without a probability in an active design is an error, not a silent weight of 1.
  expect(() =>
    calibratedWinRates({
      copilots,
      queryIds,
      studyItems: items,
      annotations,
      judge: { judgeRunId: 'r', scores },
      tieMargin: 0,
      design: { kind: 'active', probabilities: {} },
    }),
  ).toThrow(/inclusion probability/);
});

test('disagreement model: strata by the judge gap per pair, probabilities follow the disagreement and sum to the budget', () => {
  const items = Array.from({ length: 8 }, (_, i) => ({ itemId: `i${i}`, queryId: `q${i}`, first: 'A', second: 'B' }));
  const gaps = [-30, -20, -10, -5, 5, 10, 20, 30];
  const gap = (it: { itemId: string }) => gaps[Number(it.itemId.slice(1))];
  const cuts = gapCuts(items, gap, 4);
  expect(cuts.get('A|B')).toEqual([-10, 5, 20]);
  expect(gapStrata(items, gap, cuts)).toEqual(['A|B#0', 'A|B#0', 'A|B#1', 'A|B#1', 'A|B#2', 'A|B#2', 'A|B#3', 'A|B#3']);
  expect(squaredDisagreement(-1, 12)).toBe(4);
  expect(squaredDisagreement(1 / 3, 0.5)).toBeCloseTo(4 / 9, 12);
  // The earlier study disagreed only where the judge's gap was small and positive (a judge leaning to A).
  const model = disagreementModel(items, gap, (it) => (gap(it) > 0 && gap(it) < 15 ? 4 : 0));
  expect(model.overall).toBe(1);
  expect(model.byStratum.get('A|B#2')).toBeCloseTo((8 + 2) / 4, 12);
  expect(model.byStratum.get('A|B#0')).toBeCloseTo(2 / 4, 12);
  const p = disagreementProbabilities(items, gap, model, 4);
  expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(4, 9);
  expect(p[4]).toBeGreaterThan(p[0]);
  expect(Math.min(...p)).toBeGreaterThanOrEqual((0.3 * 4) / 8 - 1e-12);
  expect(() => disagreementModel([], gap, () => 0)).toThrow(/no annotated item/);
});

test('active selection reaches the width uniform selection has at 120 labels with fewer labels, 16 held-out studies per point', () => {
  const truth = trueWinRate(BIASED_JUDGE, 'Z');
  const curve = selectionCurve(BIASED_JUDGE, {
    budgets: [90, 120],
    sims: 16,
    seed: 'held-out-width',
    copilot: 'Z',
    truth,
  });
  const widths = (sel: 'uniform' | 'disagreement model') =>
    curve.map((c) => ({ budget: c.budget, width: c[sel]!.width }));
  const target = curve[1].uniform!.width;
  expect(budgetForWidth(widths('uniform'), target)).toBe(120);
  const active = budgetForWidth(widths('disagreement model'), target);
  expect(active).not.toBeNull();
  expect(active!).toBeLessThan(120 * 0.95);
});

test('selection by a disagreement model: a narrower interval than uniform selection for the same labels, biased judge, 24 held-out studies', () => {
  const truth = trueWinRate(BIASED_JUDGE, 'Z');
  const [c] = selectionCurve(BIASED_JUDGE, { budgets: [90], sims: 24, seed: 'select', copilot: 'Z', truth });
  const model = c['disagreement model']!;
  const uniform = c.uniform!;
  expect(Math.abs(model.labels - uniform.labels)).toBeLessThan(5);
  expect(model.width).toBeLessThan(uniform.width * 0.97);
  expect(model.coverage.k).toBeGreaterThanOrEqual(20);
});

test("a row's target: an interval inside it passes, one straddling it is not shown, one beyond it fails; α sits at α", () => {
  expect(targetVerdict(simulatedRate(10, 1000), { atMost: 0.05 })).toBe('PASS');
  expect(targetVerdict(simulatedRate(45, 1000), { atMost: 0.05 })).toBe('NOT SHOWN');
  expect(targetVerdict(simulatedRate(80, 1000), { atMost: 0.05 })).toBe('FAIL');
  expect(targetVerdict(simulatedRate(950, 1000), { atLeast: 0.93 })).toBe('PASS');
  expect(targetVerdict(simulatedRate(900, 1000), { atLeast: 0.93 })).toBe('FAIL');
  // An exact 5% test: 5.2% of 4,000 runs is its α within simulation error (the interval reaches 5%), 6.5% is not.
  expect(targetVerdict(simulatedRate(208, 4000), { level: 0.05 })).toBe('PASS');
  expect(targetVerdict(simulatedRate(260, 4000), { level: 0.05 })).toBe('FAIL');
  expect(describeAgainstTarget(simulatedRate(195, 4000), { level: 0.05 })).toMatch(
    /^4\.9% \(195 of 4000; 95% CI 4\.2–5\.6%\), target ≤ 5\.0%, the test's own α .* PASS$/,
  );
});
