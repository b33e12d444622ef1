import { Limiter } from '../../../workflows/limits/limiter';

describe('Limiter: one endpoint adapted like TCP (AIMD), with hard caps', () => {
  // The decisions only (tryStart/release at given times); acquire() wraps them in workflow conditions and timers.
  const start = (limiter: Limiter, now: number) => {
    const r = limiter.tryStart(now);
    if (r === 'full' || 'waitMs' in r) throw new Error(`could not start at ${now}: ${JSON.stringify(r)}`);
    return r;
  };
  /** Start at the first moment the limiter allows from `now` on (after a throttle the start rate spaces starts). */
  const startWhenAllowed = (limiter: Limiter, now: number) => {
    const r = limiter.tryStart(now);
    if (r === 'full') throw new Error(`no place free at ${now}`);
    return 'waitMs' in r ? start(limiter, now + r.waitMs + 1e-6) : r; // (a hair over: float sums)
  };

  test('the window halves once per burst of throttles, grows by one per window of successes, and stays within [1, concurrency]', () => {
    const limiter = new Limiter({ concurrency: 8 });
    const burst = Array.from({ length: 8 }, () => start(limiter, 0));
    expect(limiter.tryStart(0)).toBe('full');
    // Every call of the burst is refused: one halving, not eight.
    for (const ticket of burst) limiter.release(ticket, { throttled: true }, 10);
    expect(limiter.allowed).toBe(4);
    // A call started after the halving and throttled halves again.
    let t = 20;
    let ticket = startWhenAllowed(limiter, t);
    limiter.release(ticket, { throttled: true }, (t = ticket.startedAt + 10));
    expect(limiter.allowed).toBe(2);
    for (let k = 0; k < 10; k++) {
      ticket = startWhenAllowed(limiter, t);
      limiter.release(ticket, { throttled: true }, (t = ticket.startedAt + 10));
    }
    expect(limiter.allowed).toBe(1);
    const succeed = () => {
      ticket = startWhenAllowed(limiter, t);
      limiter.release(ticket, {}, (t = ticket.startedAt + 10));
    };
    // Additive increase: +1 after a window's worth of successes.
    succeed();
    expect(limiter.allowed).toBe(2);
    succeed();
    succeed();
    expect(limiter.allowed).toBe(3);
    for (let k = 0; k < 100; k++) succeed();
    expect(limiter.allowed).toBe(8);
  });

  test('Retry-After and exhausted rate-limit headers hold every start until then', () => {
    const throttled = new Limiter({ concurrency: 32 });
    const tickets = Array.from({ length: 20 }, () => start(throttled, 0));
    tickets.slice(1).forEach((ticket) => throttled.release(ticket, {}, 50));
    throttled.release(tickets[0], { throttled: true, retryAfterMs: 2_000 }, 100);
    expect(throttled.tryStart(1_000)).toEqual({ waitMs: 1_100 });
    start(throttled, 2_100);
    const limiter = new Limiter({ concurrency: 4 });
    const ticket = start(limiter, 2_100);
    limiter.release(ticket, { rateLimit: { remainingRequests: 0, resetRequestsMs: 700 } }, 2_200);
    expect(limiter.tryStart(2_200)).toEqual({ waitMs: 700 });
    // Two requests left, but one call started after the reporting one (perhaps not counted yet): one more start, then none until the reset.
    const budget = new Limiter({ concurrency: 8 });
    const reporting = start(budget, 10_000);
    start(budget, 10_050);
    budget.release(reporting, { rateLimit: { remainingRequests: 2, resetRequestsMs: 900 } }, 10_100);
    start(budget, 10_100);
    expect(budget.tryStart(10_100)).toEqual({ waitMs: 900 });
    expect(budget.tryStart(11_000)).toEqual({ startedAt: 11_000 });
    // Requests left for every call in flight and the next: no hold.
    const a = start(limiter, 3_000);
    limiter.release(start(limiter, 3_000), { rateLimit: { remainingRequests: 5, resetRequestsMs: 60_000 } }, 3_100);
    expect(limiter.tryStart(3_100)).toEqual({ startedAt: 3_100 });
    limiter.release(a, {}, 3_200);
  });

  test('requestsPerMinute spaces starts; tokensPerMinute keeps the last minute under the cap', () => {
    const rpm = new Limiter({ concurrency: 4, requestsPerMinute: 120 });
    start(rpm, 0);
    expect(rpm.tryStart(100)).toEqual({ waitMs: 400 });
    start(rpm, 500);

    const tpm = new Limiter({ concurrency: 4, tokensPerMinute: 1_000 });
    tpm.release(start(tpm, 0), { tokens: 400 }, 1_000);
    tpm.release(start(tpm, 1_000), { tokens: 400 }, 2_000);
    // 800 used, a call of the average size (400) would exceed 1,000: wait until the first call's tokens leave the minute.
    expect(tpm.tryStart(2_000)).toEqual({ waitMs: 59_000 });
    expect('startedAt' in (tpm.tryStart(61_000) as object)).toBe(true);
  });

  test('a throttle paces starts at 0.9 × the rate the endpoint admitted (span + Retry-After), back to it along a cubic in 10 s', () => {
    const limiter = new Limiter({ concurrency: 8 });
    // A sliding window of 12 a second (2 s): 8 start at once, then 4 more at 100 ms of which one is refused and says
    // when it would be allowed (1.9 s on); 3 still in flight.
    for (const ticket of Array.from({ length: 8 }, () => start(limiter, 0))) limiter.release(ticket, {}, 100);
    const second = Array.from({ length: 4 }, () => start(limiter, 100));
    expect(limiter.startRate(100)).toBeUndefined(); // nothing learnt before a throttle
    limiter.release(second[3], { throttled: true, retryAfterMs: 1_900 }, 110);
    // Admitted up to the refused one: 11 starts from 0 to its start (0.1 s) + its Retry-After (1.9 s); that holds every start.
    expect(limiter.startRate(110)).toBeCloseTo(0.9 * (11 / 2), 5);
    expect(limiter.tryStart(200)).toEqual({ waitMs: 1_810 });
    // The cubic: flat around the admitted rate at 10 s, above it later (in case the limit was underestimated).
    expect(limiter.startRate(5_110)!).toBeGreaterThan(0.98 * (11 / 2));
    expect(limiter.startRate(10_110)).toBeCloseTo(11 / 2, 5);
    expect(limiter.startRate(15_110)!).toBeLessThan(1.02 * (11 / 2));
    expect(limiter.startRate(30_110)!).toBeGreaterThan(1.5 * (11 / 2));
    // Refused calls of the same burst (started before the decrease) do not decrease it again, but they were counted as
    // admitted: the measure is taken again with them (10 admitted up to 0.1 s + 1.85 s).
    limiter.release(second[2], { throttled: true, retryAfterMs: 1_850 }, 120);
    expect(limiter.allowed).toBe(4);
    expect(limiter.startRate(110)).toBeCloseTo(0.9 * (10 / 1.95), 5);
    // Paced: one start at a time, spaced by the rate.
    const rate = limiter.startRate(2_010)!;
    const first = startWhenAllowed(limiter, 2_010);
    const next = limiter.tryStart(first.startedAt) as { waitMs: number };
    expect(next.waitMs).toBeCloseTo(1_000 / rate, 0);
    // Throttled again while paced: the limit is just below the pace that call started at (as CUBIC takes the window at
    // a loss), not the admitted rate over a span that held the Retry-After's idle time.
    const paceThen = limiter.startRate(first.startedAt)!;
    limiter.release(first, { throttled: true, retryAfterMs: 100 }, first.startedAt + 20);
    expect(limiter.startRate(first.startedAt + 20)).toBeCloseTo(0.9 * paceThen, 5);
  });

  test('headers that say the requests are used up give the rate: starts are paced below it, not held for the whole reset', () => {
    const limiter = new Limiter({ concurrency: 8 });
    const tickets = Array.from({ length: 4 }, () => start(limiter, 0));
    // 6 a second: none remain, and the limit is back to its initial state in 1 s.
    limiter.release(tickets[0], { rateLimit: { limitRequests: 6, remainingRequests: 0, resetRequestsMs: 1_000 } }, 200);
    expect(limiter.startRate(200)).toBeCloseTo(0.96 * 6, 5);
    // Not held until the reset (1,200): the next start is one interval of the pace away.
    expect((limiter.tryStart(200) as { waitMs: number }).waitMs).toBeCloseTo(1_000 / (0.96 * 6), 5);
    // A sliding window's reset is at most its window: the longest of the last minute counts.
    limiter.release(tickets[1], { rateLimit: { limitRequests: 6, remainingRequests: 0, resetRequestsMs: 800 } }, 210);
    const rate = 6;
    expect(limiter.startRate(210)).toBeCloseTo(0.96 * rate, 5);
    // Never more than the limit within that window: 6 started since 0, so the 7th waits for the first to leave it.
    const fifth = startWhenAllowed(limiter, 210);
    const sixth = startWhenAllowed(limiter, fifth.startedAt);
    expect(sixth.startedAt + 1_000 / (0.96 * rate)).toBeLessThan(1_000);
    expect((limiter.tryStart(sixth.startedAt) as { waitMs: number }).waitMs).toBeCloseTo(1_000 - sixth.startedAt, 5);
    // A throttle while so paced widens the margin below the headers' rate (3%), which then grows back slowly.
    limiter.release(tickets[2], { throttled: true, retryAfterMs: 100 }, 220);
    expect(limiter.startRate(220)).toBeCloseTo(0.96 * 0.97 * rate, 5);
    expect(limiter.startRate(40_220)).toBeCloseTo(0.96 * rate, 5);
    // Without a limit header there is no rate to pace by: exhausted headers hold starts until the reset, as before.
    const unpaced = new Limiter({ concurrency: 4 });
    unpaced.release(start(unpaced, 0), { rateLimit: { remainingRequests: 0, resetRequestsMs: 700 } }, 100);
    expect(unpaced.tryStart(100)).toEqual({ waitMs: 700 });
    expect(unpaced.startRate(100)).toBeUndefined();
  });

  test('paced by the headers, late sends are kept apart so that limit + 1 of them never fit in the window', () => {
    const limiter = new Limiter({ concurrency: 8 });
    const first = start(limiter, 0);
    // 6 a second in a sliding one-second window, as the bench's copilot endpoints.
    limiter.release(first, { rateLimit: { limitRequests: 6, remainingRequests: 0, resetRequestsMs: 1_000 } }, 200);
    const ticket = startWhenAllowed(limiter, 200);
    // Late calls claim slots this far apart (activities/heartbeat.ts): 7 in a row span 6 spacings, past the window by
    // 4% of it, what arrival jitter may take from late sends in a row (after a stall, at 2% it took it).
    expect(6 * ticket.spacingMs!).toBeGreaterThanOrEqual(1_040 - 1e-9);
    // Still under the pace's interval, so calls sent late catch up with the pace.
    expect(ticket.spacingMs!).toBeLessThan(1_000 / limiter.startRate(ticket.startedAt)!);
  });

  /** Paced by the headers at 96% of 6 a second in a sliding one-second window (the bench's copilots), and `n` starts so paced. */
  const pacedBy6 = (n: number) => {
    const limiter = new Limiter({ concurrency: 8 });
    limiter.release(
      start(limiter, 0),
      { rateLimit: { limitRequests: 6, remainingRequests: 0, resetRequestsMs: 1_000 } },
      200,
    );
    const tickets = [startWhenAllowed(limiter, 200)];
    while (tickets.length < n) tickets.push(startWhenAllowed(limiter, tickets[tickets.length - 1].startedAt));
    return { limiter, tickets, interval: 1_000 / (0.96 * 6) };
  };

  test('a call that left late counts when it left: the limit + 1st start keeps a window from the late send', () => {
    const { limiter, tickets, interval } = pacedBy6(6);
    const [late] = tickets;
    // The first left 100 ms after its time (a busy worker's timer): sent at late.startedAt + 100, answered 200 ms on.
    limiter.release(late, { sentLateMs: 100 }, late.startedAt + 300);
    // Six sends in flight or sent since; the seventh goes a window after the late one *left*, past the pace's own time
    // (late.startedAt + 6 intervals = 1,041.7 ms), so the endpoint never sees seven in one second.
    const seventh = startWhenAllowed(limiter, tickets[5].startedAt);
    expect(6 * interval).toBeLessThan(1_100);
    expect(seventh.startedAt).toBeGreaterThanOrEqual(late.startedAt + 100 + 1_000);
    // Its own start, moved to when it left, is not one of the starts after it the headers' count leaves out: one
    // request left, none started since, so the headers do not read as used up (no pace from them yet).
    const fresh = new Limiter({ concurrency: 8 });
    const call = start(fresh, 0);
    fresh.release(
      call,
      { sentLateMs: 50, rateLimit: { limitRequests: 6, remainingRequests: 1, resetRequestsMs: 900 } },
      300,
    );
    expect(fresh.startRate(300)).toBeUndefined();
    // A send on time (or one not saying) counts at its time, as before.
    const { limiter: onTime, tickets: calls } = pacedBy6(6);
    onTime.release(calls[0], {}, calls[0].startedAt + 200);
    expect(startWhenAllowed(onTime, calls[5].startedAt).startedAt).toBeCloseTo(calls[0].startedAt + 6 * interval, 3);
  });

  test('a throttle that another send’s lateness explains does not widen the headers’ margin; one it does not explain does', () => {
    const rate = 6;
    // The first send left 40 ms late (more than 2% of the window, nearly all the 41.7 ms six of the pace's intervals
    // leave over it); the seventh was refused. The pace was right: the margin stays.
    const explained = pacedBy6(7);
    const [first, , , , , , seventh] = explained.tickets;
    explained.limiter.release(first, { sentLateMs: 40 }, first.startedAt + 240);
    explained.limiter.release(seventh, { throttled: true, retryAfterMs: 100 }, seventh.startedAt + 10);
    expect(explained.limiter.startRate(seventh.startedAt + 10)).toBeCloseTo(0.96 * rate, 5);
    // Another explained refusal within 5 s widens it all the same (refusals that often are the pace's).
    for (const t of explained.tickets.slice(1, 6)) explained.limiter.release(t, {}, seventh.startedAt + 10);
    const again = startWhenAllowed(explained.limiter, seventh.startedAt + 110);
    explained.limiter.release(again, { sentLateMs: 30 }, again.startedAt + 200);
    const next = startWhenAllowed(explained.limiter, again.startedAt + 200);
    explained.limiter.release(next, { throttled: true }, next.startedAt + 10);
    expect(explained.limiter.startRate(next.startedAt + 10)).toBeCloseTo(0.96 * 0.97 * rate, 5);

    // Sends on time, or late by less than 2% of the window, or late but more than 1.02 windows before the refused call
    // left (itself 60 ms late), or only the refused call late: the margin widens.
    for (const [firstLateMs, refusedLateMs] of [
      [0, 0],
      [15, 0],
      [30, 60],
      [0, 60],
    ]) {
      const { limiter, tickets } = pacedBy6(7);
      limiter.release(tickets[0], firstLateMs ? { sentLateMs: firstLateMs } : {}, tickets[0].startedAt + 400);
      const refused = tickets[6];
      limiter.release(
        refused,
        { throttled: true, retryAfterMs: 100, ...(refusedLateMs ? { sentLateMs: refusedLateMs } : {}) },
        refused.startedAt + 220,
      );
      expect(limiter.startRate(refused.startedAt + 220)).toBeCloseTo(0.96 * 0.97 * rate, 5);
    }
  });

  test('a start due within `aheadMs` is taken now for then (one at a time, outside the window): the ticket says when to send', () => {
    const limiter = new Limiter({ concurrency: 2, requestsPerMinute: 300 }); // one every 200 ms
    start(limiter, 0);
    expect(limiter.tryStart(50)).toEqual({ waitMs: 150 });
    expect(limiter.tryStart(50, 1_000)).toEqual({ startedAt: 200 });
    // One is taken ahead already: the next waits for its own time. The window of 2 still has room (that one is not sent).
    expect(limiter.tryStart(50, 1_000)).toEqual({ waitMs: 350 });
    // Once it is due it counts: two in flight fill the window.
    expect(limiter.tryStart(250, 1_000)).toBe('full');
  });

  test('its state survives continue-as-new', () => {
    const limiter = new Limiter({ concurrency: 8, tokensPerMinute: 10_000 });
    limiter.release(start(limiter, 0), { throttled: true, retryAfterMs: 5_000, tokens: 50 }, 100);
    const copy = new Limiter(
      { concurrency: 8, tokensPerMinute: 10_000 },
      JSON.parse(JSON.stringify(limiter.state(200))),
    );
    expect(copy.allowed).toBe(4);
    expect(copy.tryStart(200)).toEqual({ waitMs: 4_900 });
    expect(copy.state(200).recentTokens).toEqual([[100, 50]]);
  });

  test('new limits (judgeflow tune) apply at once and keep the adaptive state: a lower concurrency lets calls in flight finish and starts none beyond it', () => {
    const limiter = new Limiter({ concurrency: 8 });
    const tickets = [0, 1, 2, 3, 4, 5].map((t) => start(limiter, t));
    limiter.setLimits({ concurrency: 2 });
    expect(limiter.allowed).toBe(2);
    expect(limiter.tryStart(10)).toBe('full'); // six in flight, two allowed
    for (const t of tickets.slice(0, 4)) limiter.release(t, {}, 20);
    expect(limiter.tryStart(20)).toBe('full'); // two still in flight
    limiter.release(tickets[4], {}, 30);
    start(limiter, 30);

    // A throttle halved the window: raising the ceiling keeps that (it grows back by successes), unthrottled it opens at once.
    const throttled = new Limiter({ concurrency: 8 });
    throttled.release(start(throttled, 0), { throttled: true }, 10);
    throttled.setLimits({ concurrency: 16 });
    expect(throttled.allowed).toBe(4);
    expect(throttled.startRate(10)).toBeDefined(); // the start rate it learnt is kept
    const open = new Limiter({ concurrency: 2 });
    open.setLimits({ concurrency: 6 });
    expect(open.allowed).toBe(6);

    // requestsPerMinute: the next start is spaced from the last by the new cap, not the old one.
    const rpm = new Limiter({ concurrency: 4, requestsPerMinute: 6 });
    start(rpm, 0);
    expect(rpm.tryStart(100)).toEqual({ waitMs: 9_900 });
    rpm.setLimits({ concurrency: 4, requestsPerMinute: 60 });
    expect(rpm.tryStart(100)).toEqual({ waitMs: 900 });
    rpm.setLimits({ concurrency: 4 });
    expect('startedAt' in (rpm.tryStart(100) as object)).toBe(true);
    // tokensPerMinute: the last minute's tokens count against a new cap.
    const tpm = new Limiter({ concurrency: 4 });
    tpm.release(start(tpm, 0), { tokens: 400 }, 1_000);
    tpm.setLimits({ concurrency: 4, tokensPerMinute: 500 });
    expect(tpm.tryStart(1_000)).toEqual({ waitMs: 60_000 });
  });
});
