import { meanCI } from '../../../core/stats/stats';
import { intervalRequestsOf, precomputedIntervals, withIntervalsAhead } from '../../../core/stats/intervalsAhead';

const xs = Array.from({ length: 120 }, (_, i) => (i * 7) % 11);

test("intervalRequestsOf records each meanCI call with meanCI's defaults filled in, and computes none", () => {
  const values = xs.slice();
  const asked = intervalRequestsOf(() => {
    expect(meanCI(values, { seed: 'a' })).toBeNull();
    expect(meanCI([1, 2, 3], { seed: 'b', iterations: 500, level: 0.9, method: 'percentile' })).toBeNull();
    expect(meanCI([4, 5])).toBeNull();
  });
  values[0] = 99; // recorded as they were asked for
  expect(asked).toEqual([
    { values: xs, seed: 'a', iterations: 2000, level: 0.95 },
    { values: [1, 2, 3], seed: 'b', iterations: 500, level: 0.9, method: 'percentile' },
    { values: [4, 5], seed: 'judgeflow', iterations: 2000, level: 0.95 },
  ]);
  // Outside, meanCI computes again.
  expect(meanCI(xs, { seed: 'a' })).toMatchObject({ n: 120, method: 'bca' });
});

test('an interval known ahead is used only for the very request it was computed for; any other is computed', () => {
  const real = meanCI(xs, { seed: 'a' })!;
  const mark = { low: -1, high: -2, n: 120, method: 'bca' as const };
  const ahead = precomputedIntervals([[{ values: xs, seed: 'a', iterations: 2000, level: 0.95 }, mark]]);
  withIntervalsAhead(ahead, () => {
    expect(meanCI(xs.slice(), { seed: 'a' })).toEqual(mark);
    expect(meanCI(xs, { seed: 'a', method: 'auto' })).toEqual(mark);
    const changed = xs.slice();
    changed[119] += 1;
    expect(meanCI(changed, { seed: 'a' })).toEqual(meanCI(changed, { seed: 'a', iterations: 2000 }));
    expect(meanCI(changed, { seed: 'a' })).not.toEqual(mark);
    expect(meanCI(xs, { seed: 'b' })?.low).not.toBe(-1);
    expect(meanCI(xs, { seed: 'a', iterations: 1999 })?.low).not.toBe(-1);
    expect(meanCI(xs, { seed: 'a', level: 0.9 })?.low).not.toBe(-1);
    expect(meanCI(xs, { seed: 'a', method: 'percentile' })?.low).not.toBe(-1);
    expect(meanCI(xs.slice(1), { seed: 'a' })?.low).not.toBe(-1);
  });
  // A null known ahead (fewer than two values) is returned as null; the set is gone once the function returns or throws.
  const none = precomputedIntervals([[{ values: [3], seed: 'c', iterations: 2000, level: 0.95 }, null]]);
  expect(withIntervalsAhead(none, () => meanCI([3], { seed: 'c' }))).toBeNull();
  expect(() =>
    withIntervalsAhead(ahead, () => {
      throw new Error('report failed');
    }),
  ).toThrow('report failed');
  expect(meanCI(xs, { seed: 'a' })).toEqual(real);
});
