import { MockActivityEnvironment } from '@temporalio/testing';
import { heldWithin, runItemGroup } from '../../activities/itemGroup';

/** runItemGroup runs inside an activity (it heartbeats and watches the activity's cancellation): here, a mocked one. */
const inActivity = <T>(fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment().run(fn) as Promise<T>;

describe('runItemGroup: several work items of one endpoint asked in a row in one activity', () => {
  const ok = (key: string) => ({ key, throttled: false, outcome: { tokens: 10 } });
  test('runItemGroup: every item in order, tokens summed and the latest rate-limit headers kept', async () => {
    const asked: string[] = [];
    const result = await inActivity(() =>
      runItemGroup(
        ['a', 'b', 'c'],
        async (key) => {
          asked.push(key);
          return { ...ok(key), outcome: { tokens: 10, rateLimit: { remainingRequests: 100 - asked.length } } };
        },
        (r) => r.throttled,
      ),
    );
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b', 'c']);
    expect(result.sentAt).toHaveLength(3);
    expect(result.outcome).toEqual({ tokens: 30, rateLimit: { remainingRequests: 97 } });
    expect(result.stoppedBy).toBeUndefined();
  });

  test('runItemGroup: stops at a throttle (no later call goes) and at an error; the finished prefix comes back', async () => {
    const asked: string[] = [];
    const throttled = await inActivity(() =>
      runItemGroup(
        ['a', 'b', 'c', 'd'],
        async (key) => {
          asked.push(key);
          return key === 'b'
            ? { key, throttled: true, outcome: { throttled: true, retryAfterMs: 1_500, tokens: 0 } }
            : ok(key);
        },
        (r) => r.throttled,
      ),
    );
    expect(asked).toEqual(['a', 'b']);
    expect(throttled.results.map((r) => r.key)).toEqual(['a']);
    expect(throttled.sentAt).toHaveLength(2); // the refused call was sent too
    expect(throttled.outcome).toMatchObject({ throttled: true, retryAfterMs: 1_500, tokens: 10 });
    expect(throttled.stoppedBy).toBe('throttle');

    const failed = await inActivity(() =>
      runItemGroup(
        ['a', 'b', 'c'],
        async (key) => {
          if (key === 'b') throw new Error('judge answered HTTP 400');
          return ok(key);
        },
        (r) => r.throttled,
      ),
    );
    expect(failed.results.map((r) => r.key)).toEqual(['a']);
    expect(failed.stoppedBy).toBe('judge answered HTTP 400');
  });

  test('runItemGroup: a cancelled activity stops before its next call', async () => {
    const env = new MockActivityEnvironment();
    const asked: string[] = [];
    const batch = env.run(() =>
      runItemGroup(
        ['a', 'b', 'c'],
        async (key) => {
          asked.push(key);
          if (key === 'a') env.cancel();
          return ok(key);
        },
        (r) => r.throttled,
      ),
    );
    await expect(batch).rejects.toBeTruthy();
    expect(asked).toEqual(['a']);
  });

  test('runItemGroup: once the run is paused no later item of the batch starts; the rest come back as stopped by the pause', async () => {
    const asked: string[] = [];
    let paused = false;
    const result = await inActivity(() =>
      runItemGroup(
        ['a', 'b', 'c', 'd', 'e'],
        async (key) => {
          asked.push(key);
          if (key === 'b') paused = true; // the pause is recorded while b is in flight: b finishes, c never starts
          return ok(key);
        },
        (r) => r.throttled,
        async () => paused,
      ),
    );
    expect(asked).toEqual(['a', 'b']);
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b']);
    expect(result.stoppedBy).toBe('paused');
  });

  test('runItemGroup: the held look before the next item is asked during the call before it, so a slow query does not wait between calls', async () => {
    // A look that takes 200 ms, calls of 300 ms, on jest's fake clock (a loaded machine stretches real timers unevenly,
    // which moved the looks of an earlier version of this test out of their calls). Asked only after each call, each
    // look would sit between two calls; asked ahead, timed from the previous call's own 300 ms, the looks before c and
    // d start while the call before them is in flight. Timed from send to send (300 ms call + 200 ms look), the look
    // for b's successor would be set 350 ms into b's 300 ms call, and missed.
    jest.useFakeTimers();
    try {
      const answers = new Map();
      const lookStarts: number[] = [];
      const calls: Array<{ key: string; start: number; end: number }> = [];
      const slowAsk = () => {
        lookStarts.push(Date.now());
        return new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200));
      };
      const group = inActivity(() =>
        runItemGroup(
          ['a', 'b', 'c', 'd'],
          async (key) => {
            const start = Date.now();
            await new Promise((resolve) => setTimeout(resolve, 300));
            calls.push({ key, start, end: Date.now() });
            return ok(key);
          },
          (r) => r.throttled,
          (freshMs) => heldWithin('run-look', slowAsk, freshMs ?? 250, Date.now, answers),
        ),
      );
      await jest.advanceTimersByTimeAsync(5_000);
      const result = await group;
      expect(result.results.map((r) => r.key)).toEqual(['a', 'b', 'c', 'd']);
      // The looks before c and d: each started inside the call before it (b's and c's).
      for (const before of calls.slice(1, 3))
        expect(lookStarts.some((at) => at > before.start && at < before.end)).toBe(true);
      // And the calls follow each other without a 200 ms look between b and c, or c and d (the answer is in flight).
      expect(calls[2].start - calls[1].end).toBeLessThan(200);
      expect(calls[3].start - calls[2].end).toBeLessThan(200);
    } finally {
      jest.useRealTimers();
    }
  });

  test("runItemGroup: two batches of one run out of phase share the run's held answers, and no look waits for a query between calls", async () => {
    // Calls of 300 ms, queries of 20 ms, on jest's fake clock; batch B starts 130 ms after batch A. A's look ahead asks
    // at 150 ms; B's, at 280 ms, would find that answer fresh (130 ms old) and take it, but by B's look at 430 ms it is
    // 280 ms old, stale: B would wait 20 ms for a query between two calls, and so on all the way. A look ahead only
    // takes an answer that will still be fresh at its look.
    jest.useFakeTimers();
    try {
      const answers = new Map();
      let queries = 0;
      const ask = () => {
        queries++;
        return new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20));
      };
      const held = (freshMs?: number) => heldWithin('run-phases', ask, freshMs ?? 250, Date.now, answers);
      const calls: Record<string, Array<{ start: number; end: number }>> = { warm: [], A: [], B: [] };
      const group = (name: string, n: number) =>
        inActivity(() =>
          runItemGroup(
            Array.from({ length: n }, (_, i) => `${name}${i}`),
            async (key) => {
              const start = Date.now();
              await new Promise((resolve) => setTimeout(resolve, 300));
              calls[name].push({ start, end: Date.now() });
              return ok(key);
            },
            (r) => r.throttled,
            held,
          ),
        );
      // One call first, so this worker's latest call time (the first item's look ahead) is 300 ms.
      const warm = group('warm', 1);
      await jest.advanceTimersByTimeAsync(400);
      await warm;
      const a = group('A', 6);
      await jest.advanceTimersByTimeAsync(130);
      const b = group('B', 6);
      await jest.advanceTimersByTimeAsync(5_000);
      await Promise.all([a, b]);
      for (const name of ['A', 'B'])
        for (let i = 1; i < calls[name].length; i++)
          expect(calls[name][i].start - calls[name][i - 1].end).toBeLessThan(20);
      expect(queries).toBeLessThanOrEqual(10 + 1); // about one per look ahead, not one per look
    } finally {
      jest.useRealTimers();
    }
  });

  test('runItemGroup: with the look asked ahead a pause still stops the batch within HELD_FRESH_MS (250 ms)', async () => {
    // Calls of 300 ms, the look answered at once, on jest's fake clock: the look ahead for c is asked 150 ms before b
    // is expected to end, the pause is recorded 100 ms later while b is still in flight, and c must still not start
    // more than 250 ms after it: the look before c finds the early answer fresh and lets c go (50 ms after the pause,
    // within the bound); the look ahead during c sees the pause, and d does not start.
    jest.useFakeTimers();
    try {
      const answers = new Map();
      let paused = false;
      let pausedAt = 0;
      const starts: Array<[string, number]> = [];
      const group = inActivity(() =>
        runItemGroup(
          ['a', 'b', 'c', 'd', 'e'],
          async (key) => {
            starts.push([key, Date.now()]);
            if (key === 'b')
              setTimeout(() => {
                paused = true;
                pausedAt = Date.now();
              }, 250);
            await new Promise((resolve) => setTimeout(resolve, 300));
            return ok(key);
          },
          (r) => r.throttled,
          (freshMs) => heldWithin('run-stale', async () => paused, freshMs ?? 250, Date.now, answers),
        ),
      );
      await jest.advanceTimersByTimeAsync(5_000);
      const result = await group;
      expect(result.stoppedBy).toBe('paused');
      // c starts or not by whether an answer asked during b is still fresh when b ends, which turns on whether this
      // worker timed a call before this group (a's look ahead): either way within the bound, and d never starts.
      expect(starts.map(([k]) => k)).not.toContain('d');
      expect(result.results.map((r) => r.key)).toEqual(starts.map(([k]) => k));
      for (const [, at] of starts.filter(([, at]) => at > pausedAt)) expect(at - pausedAt).toBeLessThanOrEqual(250);
    } finally {
      jest.useRealTimers();
    }
  });

  test('runItemGroup: outside a workflow that answers the held query (here a mocked activity) the batch goes on', async () => {
    const result = await inActivity(() =>
      runItemGroup(
        ['a', 'b'],
        async (key) => ok(key),
        (r) => r.throttled,
      ),
    );
    expect(result.results.map((r) => r.key)).toEqual(['a', 'b']);
  });

  test('heldWithin: an answer already back and still fresh is taken at once while a newer query (a look ahead) is on its way; then the newer one', async () => {
    let clock = 1_000;
    const answers = new Map();
    let answerSecond!: (held: boolean) => void;
    const asks = [
      async () => false,
      () => new Promise<boolean>((resolve) => (answerSecond = resolve)), // the look ahead's query, still in flight
    ];
    let asked = 0;
    const ask = () => asks[asked++]();
    const held = (freshMs?: number) => heldWithin('run-1', ask, freshMs ?? 250, () => clock, answers);
    expect(await held()).toBe(false); // asked at 1000
    clock = 1_150;
    const ahead = held(100); // 150 ms old is too old for a look ahead: it asks again, and waits
    expect(asked).toBe(2);
    clock = 1_160;
    // The look before an item takes the answer asked at 1000 (160 ms old) at once, not the query in flight.
    const settled = await Promise.race([held(), new Promise((r) => setTimeout(() => r('waited'), 50))]);
    expect(settled).toBe(false);
    answerSecond(true);
    expect(await ahead).toBe(true);
    clock = 1_170;
    expect(await held()).toBe(true); // the newer answer once it is back
    clock = 1_260; // the answer of 1000 is stale; the one asked at 1150 is not
    expect(await held()).toBe(true);
    expect(asked).toBe(2);
  });

  test('heldWithin: one held query per run while its answer is fresh, shared by concurrent askers; asked again once it is older; a failed query is "not held"', async () => {
    let clock = 1_000;
    let asked = 0;
    let paused = false;
    const answers = new Map();
    const ask = async () => {
      asked++;
      return paused;
    };
    const held = () => heldWithin('run-1', ask, 250, () => clock, answers);
    expect(await Promise.all([held(), held(), held()])).toEqual([false, false, false]);
    expect(asked).toBe(1);
    paused = true;
    clock += 249; // within the window: the answer asked at 1000 stands
    expect(await held()).toBe(false);
    expect(asked).toBe(1);
    clock += 1; // 250 ms after it was asked: asked again, and the pause is seen
    expect(await held()).toBe(true);
    expect(asked).toBe(2);
    expect(await heldWithin('run-2', ask, 250, () => clock, answers)).toBe(true); // another run has its own answer
    expect(asked).toBe(3);
    clock += 250;
    expect(
      await heldWithin(
        'run-1',
        async () => {
          throw new Error('no such query');
        },
        250,
        () => clock,
        answers,
      ),
    ).toBe(false);
  });
});
