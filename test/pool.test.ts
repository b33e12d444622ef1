import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { connectClient, connectWorker } from '../client/connection';
import { uniqueQueue } from './support/harness';
import { Limiter } from '../workflows/pool';

/**
 * A task that rejects while its lane waits out the rate interval used to be an unobserved rejection: the workflow task
 * failed and was retried for ever. (The benchmark workflow's own use is covered end to end in runControl.e2e.test.ts.)
 */
test('runPool: a task failing during the rate-limit sleep rejects the pool; the workflow completes', async () => {
  const { connection, namespace } = await connectWorker();
  const taskQueue = uniqueQueue('pool');
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath: path.join(__dirname, 'support', 'workflows', 'pool.ts') });
  const client = await connectClient();
  try {
    const outcome = await worker.runUntil(async () => {
      const handle = await client.workflow.start('poolWithFastFailure', { taskQueue, workflowId: `${taskQueue}-wf`, args: [2_000] });
      const timeout = new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000));
      const result = await Promise.race([handle.result() as Promise<string>, timeout]);
      if (result.startsWith('still running')) await handle.terminate('test timed out');
      const history = await handle.fetchHistory();
      const failedTasks = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes!.failure?.message);
      return { result, failedTasks };
    });
    expect(outcome).toEqual({ result: 'rejected: task 1 failed fast', failedTasks: [] });
  } finally {
    await client.connection.close();
    await connection.close();
  }
}, 120_000);

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
    return 'waitMs' in r ? start(limiter, now + r.waitMs) : r;
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

  test('fast calls against a low limit: a throttle caps the start rate below the rate just measured, and it grows back with time', () => {
    const limiter = new Limiter({ concurrency: 1 });
    // One call at a time, each taking 100 ms: 10 starts a second, and the endpoint throttles.
    for (let k = 0; k < 20; k++) limiter.release(start(limiter, k * 100), {}, k * 100 + 100);
    limiter.release(start(limiter, 2_000), { throttled: true }, 2_100);
    // 0.85 × the rate started over the last 2 s (19 starts: 9.5 a second); the bucket is empty after a throttle.
    expect(limiter.startRate(2_100)).toBeCloseTo(0.85 * 9.5, 5);
    expect((limiter.tryStart(2_100) as { waitMs: number }).waitMs).toBeCloseTo(1_000 / (0.85 * 9.5), 5);
    // 3% of the measured rate per second without a throttle: back to it after 5 s.
    expect(limiter.startRate(7_100)).toBeCloseTo(9.5, 5);
    // A late timer starts the calls that were due together (up to one second's worth).
    expect(limiter.tryStart(3_100)).toEqual({ startedAt: 3_100 });
    expect(limiter.tryStart(3_100)).toBe('full');
  });

  test('its state survives continue-as-new', () => {
    const limiter = new Limiter({ concurrency: 8, tokensPerMinute: 10_000 });
    limiter.release(start(limiter, 0), { throttled: true, retryAfterMs: 5_000, tokens: 50 }, 100);
    const copy = new Limiter({ concurrency: 8, tokensPerMinute: 10_000 }, JSON.parse(JSON.stringify(limiter.state(200))));
    expect(copy.allowed).toBe(4);
    expect(copy.tryStart(200)).toEqual({ waitMs: 4_900 });
    expect(copy.state(200).recentTokens).toEqual([[100, 50]]);
  });
});
