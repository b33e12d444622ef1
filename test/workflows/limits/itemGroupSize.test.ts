import { batchSize, CallTimes } from '../../../workflows/limits/itemGroupSize';
import { Limiter } from '../../../workflows/limits/limiter';

describe('batch sizes: several work items of one endpoint in one activity, only while the window alone limits it', () => {
  test('batchSize: one until calls are timed; then as many as fit in 20 s, up to 25, keeping the tail for every place of the window', () => {
    expect(batchSize({ remaining: 100, allowed: 4 })).toBe(1);
    // While many remain: the items left ÷ (places × 1.5), within 20 s of calls and 25 items.
    expect(batchSize({ remaining: 100, allowed: 4, callMs: 400 })).toBe(16);
    expect(batchSize({ remaining: 1_200, allowed: 12, callMs: 400 })).toBe(25);
    expect(batchSize({ remaining: 1_200, allowed: 12, callMs: 1_000 })).toBe(20);
    // A CryptoAnalystBench conversation (five 400 ms turns) goes in eights: no workflow round trip between most of them.
    expect(batchSize({ remaining: 198, allowed: 3, callMs: 2_400 })).toBe(8);
    expect(batchSize({ remaining: 100, allowed: 4, callMs: 5_000 })).toBe(4);
    expect(batchSize({ remaining: 100, allowed: 4, callMs: 30_000 })).toBe(1); // a very slow unit goes alone
    // Near the end: five while every place still has five left, then the share.
    expect(batchSize({ remaining: 25, allowed: 4, callMs: 400 })).toBe(5);
    expect(batchSize({ remaining: 11, allowed: 4, callMs: 400 })).toBe(2);
    expect(batchSize({ remaining: 3, allowed: 4, callMs: 400 })).toBe(1);
  });

  test("batchSize with the others' work (filled): this place's part of all the work left, so every place ends together", () => {
    // Nothing else running: the items left spread over the places (1,188 ÷ 12 = 99), within 20 s of calls and 50.
    expect(batchSize({ remaining: 1_188, allowed: 12, callMs: 400, busyMs: 0 })).toBe(50);
    expect(batchSize({ remaining: 1_188, allowed: 12, callMs: 1_000, busyMs: 0 })).toBe(20);
    // Eleven places busy for 8 s each more (20 calls' worth): (400 items + 220 calls of work) ÷ 12 places = 51 → 50.
    expect(batchSize({ remaining: 400, allowed: 12, callMs: 400, busyMs: 11 * 8_000 })).toBe(50);
    // Near the end: 30 items left, the others 2 s (5 calls) from done: (30 + 55) ÷ 12 = 7 for this place.
    expect(batchSize({ remaining: 30, allowed: 12, callMs: 400, busyMs: 11 * 2_000 })).toBe(7);
    // The others nearly done and a few items left: they go one at a time to whichever place frees first.
    expect(batchSize({ remaining: 5, allowed: 12, callMs: 400, busyMs: 11 * 100 })).toBe(1);
    // Never more than remain, nor than the lane's cap (a budgeted run's five).
    expect(batchSize({ remaining: 3, allowed: 1, callMs: 400, busyMs: 0 })).toBe(3);
    expect(batchSize({ remaining: 1_188, allowed: 12, callMs: 400, busyMs: 0, max: 5 })).toBe(5);
    // Still one until the calls are timed.
    expect(batchSize({ remaining: 1_188, allowed: 12, busyMs: 0 })).toBe(1);
  });

  test("batchSize even (the patch even-batches): the place's part cut into equal batches, taken up to a whole item from within a quarter", () => {
    const even = (remaining: number, callMs: number, busyMs = 0, max?: number) =>
      batchSize({ remaining, allowed: 12, callMs, busyMs, even: true, ...(max ? { max } : {}) });
    // A part of 99 with 600 ms a call (a fresh worker's first singles): 33 a batch fit in 20 s, so three of 33. Cut
    // down it is 33 now as well; what differs is the next batches, each cut from what the others left (see below).
    expect(even(1_188, 600)).toBe(33);
    expect(batchSize({ remaining: 1_188, allowed: 12, callMs: 600, busyMs: 0 })).toBe(33);
    // 405 ms a call: 49 fit in 20 s, 50 within 5% more; two batches of 50 and 49, not three of 33.
    expect(even(1_188, 405)).toBe(50);
    // A part of 66 at 400 ms: two of 33, where cut down it was 50 and then 16.
    expect(even(792, 400)).toBe(33);
    expect(batchSize({ remaining: 792, allowed: 12, callMs: 400, busyMs: 0 })).toBe(50);
    // Within a quarter of the next item: 35 items over 12 places is a part of 3 (2.92), so no item is left for a
    // thirteenth start; 32 items (2.67) are still 2 a place, the rest left to whichever place frees first.
    expect(even(35, 400)).toBe(3);
    expect(batchSize({ remaining: 35, allowed: 12, callMs: 400, busyMs: 0 })).toBe(2);
    expect(even(32, 400)).toBe(2);
    // The lane's cap (a budgeted run's five) is never stretched, and never more than remain or less than one.
    expect(even(1_188, 400, 0, 5)).toBe(5);
    expect(batchSize({ remaining: 3, allowed: 1, callMs: 400, busyMs: 0, even: true })).toBe(3);
    expect(even(4, 400)).toBe(1);
    // A slow call (2.4 s, a conversation): 8 fit in 20 s; a part of 20 is three batches of 7, not 8 + 8 + 4.
    expect(even(240, 2_400)).toBe(7);
  });

  test('batchSize even keeps the places in step: every place makes the same starts and calls, where cut down they do not', () => {
    // Twelve places, 1,200 items of 400 ms, 33 ms a start and 5 ms between the calls of one batch; each place's first
    // call goes alone and comes back 100–200 ms late (a fresh worker), as EndpointLane times them.
    const model = (even: boolean) => {
      const places = 12;
      const times = new CallTimes();
      const free = Array.from({ length: places }, (_, p) => 400 + 100 + (100 * p) / places);
      const running = free.map(() => ({ at: 0, items: 1 }));
      const starts = free.map(() => 1);
      const items = free.map(() => 1);
      let remaining = 1_200 - places;
      while (remaining > 0) {
        const place = free.indexOf(Math.min(...free));
        const now = free[place];
        times.note('judge', now - running[place].at, running[place].items);
        const callMs = (even ? times.ofBatches('judge') : times.of('judge'))!;
        let busyMs = 0;
        running.forEach((r, p) => p !== place && (busyMs += Math.max(0, r.at + r.items * callMs - now)));
        const n = Math.min(remaining, batchSize({ remaining, allowed: places, callMs, busyMs, even }));
        remaining -= n;
        starts[place]++;
        items[place] += n;
        running[place] = { at: now, items: n };
        free[place] = now + 33 + n * 400 + (n - 1) * 5;
      }
      return {
        starts: new Set(starts).size,
        items: new Set(items).size,
        spreadMs: Math.max(...free) - Math.min(...free),
      };
    };
    const even = model(true);
    expect(even).toEqual({ starts: 1, items: 1, spreadMs: expect.any(Number) });
    expect(even.spreadMs).toBeLessThan(150);
    const cutDown = model(false);
    expect(cutDown.starts + cutDown.items).toBeGreaterThan(2);
    expect(cutDown.spreadMs).toBeGreaterThan(even.spreadMs);
  });

  test('CallTimes: a running average per endpoint of the time per call', () => {
    const times = new CallTimes();
    expect(times.of('judge')).toBeUndefined();
    times.note('judge', 800, 2);
    expect(times.of('judge')).toBe(400);
    times.note('judge', 1_000, 1);
    expect(times.of('judge')).toBeCloseTo(0.7 * 400 + 0.3 * 1_000, 9);
    times.note('judge', 500, 0); // a batch that made no call says nothing
    expect(times.of('judge')).toBeCloseTo(580, 9);
    expect(times.of('copilot:A')).toBeUndefined();
  });

  test("CallTimes.ofBatches: the singles' average until a batch comes back, then the batches' alone", () => {
    const times = new CallTimes();
    expect(times.ofBatches('judge')).toBeUndefined();
    times.note('judge', 600, 1); // a fresh worker's first call: a whole start and its warm-up
    times.note('judge', 550, 1);
    expect(times.ofBatches('judge')).toBeCloseTo(0.7 * 600 + 0.3 * 550, 9);
    times.note('judge', 33 * 405, 33);
    expect(times.ofBatches('judge')).toBe(405);
    times.note('judge', 500, 1); // a single later on does not move it
    expect(times.ofBatches('judge')).toBe(405);
    times.note('judge', 50 * 401, 50);
    expect(times.ofBatches('judge')).toBeCloseTo(0.7 * 405 + 0.3 * 401, 9);
    // The plain average still takes every call (runs started before the patch even-batches replay it).
    expect(times.of('judge')).not.toBeCloseTo(times.ofBatches('judge')!, 0);
  });

  test('Limiter.windowOnly: batches only while nothing but the window limits the endpoint', () => {
    expect(new Limiter({ concurrency: 4 }).windowOnly(0)).toBe(true);
    expect(new Limiter({ concurrency: 4, requestsPerMinute: 600 }).windowOnly(0)).toBe(false);
    expect(new Limiter({ concurrency: 4, tokensPerMinute: 10_000 }).windowOnly(0)).toBe(false);
    // A throttle sets a start rate (and holds starts for its Retry-After): from then on every start is its own.
    const throttled = new Limiter({ concurrency: 4 });
    const ticket = throttled.tryStart(0) as { startedAt: number };
    throttled.release(ticket, { throttled: true, retryAfterMs: 1_000 }, 10);
    expect(throttled.windowOnly(20)).toBe(false);
    expect(throttled.windowOnly(60_000)).toBe(false);
    // Headers with few requests left: paced; with plenty left: the window alone.
    const few = new Limiter({ concurrency: 4 });
    few.release(
      few.tryStart(0) as { startedAt: number },
      { rateLimit: { remainingRequests: 10, resetRequestsMs: 60_000 } },
      10,
    );
    expect(few.windowOnly(20)).toBe(false);
    const plenty = new Limiter({ concurrency: 4 });
    plenty.release(
      plenty.tryStart(0) as { startedAt: number },
      { rateLimit: { remainingRequests: 5_000, resetRequestsMs: 60_000 } },
      10,
    );
    expect(plenty.windowOnly(20)).toBe(true);
  });

  test("Limiter.noteStarts: a batch's later calls count in the rate a throttle measures", () => {
    const measure = (batched: boolean) => {
      const limiter = new Limiter({ concurrency: 2 });
      const tickets = [limiter.tryStart(0), limiter.tryStart(0)] as Array<{ startedAt: number }>;
      // Each place made 5 calls in a row, 200 ms apart; the last one was refused.
      if (batched) limiter.noteStarts([200, 400, 600, 800, 200, 400, 600, 800]);
      limiter.release(tickets[0], {}, 1_000);
      limiter.release({ startedAt: 800 }, { throttled: true }, 1_000);
      return limiter.startRate(1_000)!;
    };
    // 10 starts, one refused, over 0.8 s: 9 / 0.8 s admitted, paced at 0.9 of that; unbatched it would look like 1 / 0.8 s.
    expect(measure(true)).toBeCloseTo(0.9 * (9 / 0.8), 5);
    expect(measure(false)).toBeLessThan(measure(true) / 5);
    // A start from a clock ahead of the workflow's is not taken for one sent ahead (that would free its place early).
    const limiter = new Limiter({ concurrency: 1 });
    limiter.tryStart(0);
    limiter.noteStarts([5_000], 200);
    expect(limiter.tryStart(300)).toBe('full');
  });
});
