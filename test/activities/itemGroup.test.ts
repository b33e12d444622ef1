import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runBatch } from '../../activities/itemGroup';

/** runBatch runs inside an activity (it heartbeats and watches the activity's cancellation): here, a mocked one. */
const inActivity = <T>(fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment().run(fn) as Promise<T>;

describe('runBatch: several work items of one endpoint asked in a row in one activity', () => {
  const ok = (key: string) => ({ key, throttled: false, outcome: { tokens: 10 } });
  test('runBatch: every item in order, tokens summed and the latest rate-limit headers kept', async () => {
    const asked: string[] = [];
    const result = await inActivity(() => runBatch(
      ['a', 'b', 'c'],
      async (key) => {
        asked.push(key);
        return { ...ok(key), outcome: { tokens: 10, rateLimit: { remainingRequests: 100 - asked.length } } };
      },
      (r) => r.throttled,
    ));
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b', 'c']);
    expect(result.sentAt).toHaveLength(3);
    expect(result.outcome).toEqual({ tokens: 30, rateLimit: { remainingRequests: 97 } });
    expect(result.stoppedBy).toBeUndefined();
  });

  test('runBatch: stops at a throttle (no later call goes) and at an error; the finished prefix comes back', async () => {
    const asked: string[] = [];
    const throttled = await inActivity(() => runBatch(
      ['a', 'b', 'c', 'd'],
      async (key) => {
        asked.push(key);
        return key === 'b' ? { key, throttled: true, outcome: { throttled: true, retryAfterMs: 1_500, tokens: 0 } } : ok(key);
      },
      (r) => r.throttled,
    ));
    expect(asked).toEqual(['a', 'b']);
    expect(throttled.results.map((r) => r.key)).toEqual(['a']);
    expect(throttled.sentAt).toHaveLength(2); // the refused call was sent too
    expect(throttled.outcome).toMatchObject({ throttled: true, retryAfterMs: 1_500, tokens: 10 });
    expect(throttled.stoppedBy).toBe('throttle');

    const failed = await inActivity(() => runBatch(
      ['a', 'b', 'c'],
      async (key) => {
        if (key === 'b') throw new Error('judge answered HTTP 400');
        return ok(key);
      },
      (r) => r.throttled,
    ));
    expect(failed.results.map((r) => r.key)).toEqual(['a']);
    expect(failed.stoppedBy).toBe('judge answered HTTP 400');
  });


  test('runBatch: a cancelled activity stops before its next call', async () => {
    const env = new MockActivityEnvironment();
    const asked: string[] = [];
    const batch = env.run(() =>
      runBatch(
        ['a', 'b', 'c'],
        async (key) => {
          asked.push(key);
          if (key === 'a') env.cancel();
          return ok(key);
        },
        (r) => r.throttled,
      ),
    );
    // Cancellation reaches the activity as Temporal's CancelledFailure, not as some other error on the way.
    await expect(batch).rejects.toBeInstanceOf(CancelledFailure);
    expect(asked).toEqual(['a']);
  });

  test('runBatch: once the run is paused no later item of the batch starts; the rest come back as stopped by the pause', async () => {
    const asked: string[] = [];
    let paused = false;
    const result = await inActivity(() => runBatch(
      ['a', 'b', 'c', 'd', 'e'],
      async (key) => {
        asked.push(key);
        if (key === 'b') paused = true; // the pause is recorded while b is in flight: b finishes, c never starts
        return ok(key);
      },
      (r) => r.throttled,
      async () => paused,
    ));
    expect(asked).toEqual(['a', 'b']);
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b']);
    expect(result.stoppedBy).toBe('paused');
  });

  test('runBatch: outside a workflow that answers the held query (here a mocked activity) the batch goes on', async () => {
    const result = await inActivity(() => runBatch(['a', 'b'], async (key) => ok(key), (r) => r.throttled));
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b']);
  });
});
