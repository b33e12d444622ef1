import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { LOOK_FRESH_MS, runBatch } from '../../activities/itemGroup';

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

describe('runBatch: the look at the pause is sent while a call is in flight, timed to be answered as it ends', () => {
  /** Each test its own run (workflow id): the timings are kept per run. */
  const inRun = <T>(workflowId: string, fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment({ workflowExecution: { workflowId, runId: workflowId } }).run(fn) as Promise<T>;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const ok = (key: string) => ({ key, throttled: false, outcome: {} });

  test('runBatch: once calls and looks are timed, the next call leaves as the previous ends (no look in between), one look per item', async () => {
    const sent: number[] = [];
    const ended: number[] = [];
    let looks = 0;
    const held = async () => {
      looks++;
      await sleep(150); // a slow look, as under load
      return false;
    };
    await inRun('timed-looks', () =>
      runBatch(
        ['a', 'b', 'c', 'd', 'e', 'f'],
        async (key) => {
          sent.push(Date.now());
          await sleep(400);
          ended.push(Date.now());
          return ok(key);
        },
        (r) => r.throttled,
        held,
      ),
    );
    expect(sent).toHaveLength(6);
    // a → b: nothing timed yet, the look goes after the call (150 ms). From b on it rides along with the call; the
    // bound leaves room for a loaded machine's late timers, well under the look's own 150 ms.
    expect(sent[1] - ended[0]).toBeGreaterThanOrEqual(140);
    const gaps = [2, 3, 4, 5].map((i) => sent[i] - ended[i - 1]);
    expect(Math.max(...gaps)).toBeLessThan(100);
    expect(looks).toBe(5); // one per item after the first: every timed look stood
  });

  test('runBatch: a pause recorded while a call is in flight, before its look is answered, stops the batch before the next item', async () => {
    const asked: string[] = [];
    let paused = false;
    const result = await inRun('timed-pause', () =>
      runBatch(
        ['a', 'b', 'c', 'd', 'e'],
        async (key) => {
          asked.push(key);
          if (key === 'c') setTimeout(() => (paused = true), 50); // early in c's 200 ms: its look leaves later
          await sleep(200);
          return ok(key);
        },
        (r) => r.throttled,
        async () => {
          await sleep(40);
          return paused;
        },
      ),
    );
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(result.stoppedBy).toBe('paused');
  });

  test(`runBatch: a look answered more than LOOK_FRESH_MS (${LOOK_FRESH_MS} ms) before the call ended does not stand: the batch looks again and sees a later pause`, async () => {
    const asked: string[] = [];
    let paused = false;
    let lookMs = 120; // looks are slow while a and b are timed, then answer at once: the timed look comes back early
    const result = await inRun('stale-look', () =>
      runBatch(
        ['a', 'b', 'c', 'd', 'e'],
        async (key) => {
          asked.push(key);
          if (key === 'c') {
            lookMs = 0;
            setTimeout(() => (paused = true), 150); // after c's look was answered (about 55 ms in), 50 ms before c ends
          }
          await sleep(200);
          return ok(key);
        },
        (r) => r.throttled,
        async () => {
          const answer = paused;
          await sleep(lookMs);
          return answer;
        },
      ),
    );
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(result.stoppedBy).toBe('paused');
  });
});
