import { intervalSpec, parseAt, spec } from '../../client/commands/schedule';
import { InputError } from '../../core/model/inputError';
import { scheduledRunId } from '../../workflows/refreshSnapshot';

const DAY = 86_400_000;
/** The first firing Temporal makes of an interval spec after `now`: the next epoch + n·every + offset. */
const firstFiring = (s: { every: number; offset: number }, now: Date) =>
  new Date(Math.floor((now.getTime() - s.offset) / s.every) * s.every + s.offset + s.every);

test('--every counts from creation: the first firing is one interval after now, not at an epoch-aligned time', () => {
  const now = new Date('2026-12-01T08:25:35.123Z'); // a Tuesday: epoch-aligned 7-day intervals fall on Thursdays
  expect(firstFiring(intervalSpec(7 * DAY, undefined, now), now).toISOString()).toBe('2026-12-08T08:25:35.123Z');
  expect(firstFiring(intervalSpec(15_000, undefined, now), now).toISOString()).toBe('2026-12-01T08:25:50.123Z');
});

test('--at HH:MM fires at the next such time of day (UTC), then every interval from there', () => {
  const now = new Date('2026-12-01T08:25:35Z');
  const weekly = intervalSpec(7 * DAY, parseAt('06:00'), now);
  const first = firstFiring(weekly, now);
  expect(first.toISOString()).toBe('2026-12-02T06:00:00.000Z');
  expect(firstFiring(weekly, first).toISOString()).toBe('2026-12-09T06:00:00.000Z');
  expect(firstFiring(intervalSpec(DAY, parseAt('23:30'), now), now).toISOString()).toBe('2026-12-01T23:30:00.000Z');
  // --at alone: daily.
  expect(spec({ at: '09:00' }, now)).toEqual({ intervals: [{ every: DAY, offset: 9 * 3_600_000 }] });
  expect(() => parseAt('24:00')).toThrow(InputError);
  expect(() => parseAt('6am')).toThrow(/--at 6am: expected a time of day HH:MM/);
  expect(() => spec({ at: '06:00', cron: '0 6 * * MON' }, now)).toThrow(/--cron "EXPRESSION" alone/);
});

test('a scheduled run id is short and readable: schedule name, UTC date and minute, the random tail of the run id', () => {
  // Two UUIDv7 run ids of one millisecond share their head; the tail tells them apart.
  const id = scheduledRunId('weekly', new Date('2026-12-01T06:00:07Z'), '019ad8f2-77b0-7a57-9d1a-0c6e2d4b8f10');
  expect(id).toBe('weekly-20261201-0600-4b8f10');
  expect(scheduledRunId('weekly', new Date('2026-12-01T06:00:07Z'), '019ad8f2-77b0-7a57-9d1a-0c6e2d91c2e3')).not.toBe(
    id,
  );
  expect(id.length).toBeLessThan(30);
});
