import { meanCI } from '../../core/stats/stats';
import { withIntervalsAhead, type IntervalRequest } from '../../core/stats/intervalsAhead';
import { IntervalHelper, intervalHelperEnabled } from '../../worker/intervalHelper';

jest.setTimeout(60_000);

/** Requests of every kind meanCI answers: BCa (n ≥ 100), Student t, constant values, one value (null), other options. */
function requests(): IntervalRequest[] {
  const out: IntervalRequest[] = [];
  for (let k = 0; k < 24; k++) {
    const n = [1, 2, 30, 150, 1200][k % 5];
    out.push({
      values: Array.from({ length: n }, (_, i) => (k % 7 === 3 ? 5 : ((i + 1) * (k + 3)) % 11)),
      seed: `seed:${k}`,
      iterations: 2000,
      level: 0.95,
    });
  }
  out.push({ values: out[3].values, seed: 'p', iterations: 700, level: 0.9, method: 'percentile' });
  return out;
}
const inline = (r: IntervalRequest) => meanCI(r.values, r);

test('the helper thread and this one compute a report’s intervals between them: each is the one meanCI gives here', async () => {
  const helper = new IntervalHelper();
  try {
    const asked = requests();
    const pending = helper.start(asked);
    // This thread reads the rest of the store meanwhile; the helper takes requests from the largest down.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ahead = pending.finish();
    for (const r of asked) expect(ahead.known(r)).toEqual(inline(r));
    // A second report on the same helper: the same again.
    const again = helper.start(asked.slice(0, 10)).finish();
    for (const r of asked.slice(0, 10)) expect(again.known(r)).toEqual(inline(r));
  } finally {
    await helper.close();
  }
});

test('a cancelled report, a report after another took over the helper, and a helper that is gone: what is missing is computed inline, never wrong', async () => {
  const helper = new IntervalHelper();
  const asked = requests();
  try {
    const cancelled = helper.start(asked);
    cancelled.cancel();
    const partial = cancelled.finish();
    withIntervalsAhead(partial, () => {
      for (const r of asked) expect(meanCI(r.values, r)).toEqual(inline(r));
    });
    // A rehearsal's requests the helper had not taken are dropped when the report's arrive.
    const rehearsal = helper.start(asked);
    const report = helper.start(asked.slice(0, 5));
    const ahead = report.finish();
    for (const r of asked.slice(0, 5)) expect(ahead.known(r)).toEqual(inline(r));
    withIntervalsAhead(rehearsal.finish(), () => {
      for (const r of asked) expect(meanCI(r.values, r)).toEqual(inline(r));
    });
  } finally {
    await helper.close();
  }
  // Ended: this thread computes everything itself.
  const alone = helper.start(asked).finish();
  for (const r of asked) expect(alone.known(r)).toEqual(inline(r));
});

test('JUDGEFLOW_REPORT_INTERVAL_THREAD=0 turns the helper off', () => {
  expect(intervalHelperEnabled({ JUDGEFLOW_REPORT_INTERVAL_THREAD: '0' })).toBe(false);
});
