import { isStoreConnectionError, STORE_UNREACHABLE_CODE, toAdapterError } from '../../activities/adapters/errors';
import { outageTolerantStore } from '../../activities/storeOutage';
import type { ResultsStore } from '../../core/model/store';

const refused = () =>
  Object.assign(new Error('cannot use the results store postgres://x: connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });

/** A store whose calls fail with `failures` (in order) before they answer. */
function flakyStore(failures: Error[]) {
  const calls: string[] = [];
  const store = {
    location: 'postgres://judgeflow@127.0.0.1/x',
    async getRun(runId: string) {
      calls.push('getRun');
      const failure = failures.shift();
      if (failure) throw failure;
      return { runId, config: { storeOutageMinutes: 0.001 } };
    },
    async putResponse(r: { runId: string }) {
      calls.push('putResponse');
      const failure = failures.shift();
      if (failure) throw failure;
      return r.runId;
    },
  };
  return { store: store as unknown as ResultsStore, calls };
}

describe('outageTolerantStore', () => {
  const sleeps: number[] = [];
  const options = { sleep: async (ms: number) => void sleeps.push(ms), defaultOutageMs: 60_000 };
  beforeEach(() => (sleeps.length = 0));

  test('a store call refused while the server is down is made again until it succeeds, with growing pauses', async () => {
    const { store, calls } = flakyStore([
      refused(),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    ]);
    const wrapped = outageTolerantStore(store, options);
    await expect(wrapped.putResponse({ runId: 'r1' } as never)).resolves.toBe('r1');
    expect(calls).toEqual(['putResponse', 'putResponse', 'putResponse', 'putResponse']);
    expect(sleeps).toEqual([250, 500, 1000]);
  });

  test('any other error is the caller’s at once (a bad statement is not retried)', async () => {
    const { store, calls } = flakyStore([Object.assign(new Error('duplicate key'), { code: '23505' })]);
    await expect(outageTolerantStore(store, options).putResponse({ runId: 'r1' } as never)).rejects.toThrow(
      'duplicate key',
    );
    expect(calls).toHaveLength(1);
  });

  test('past the run’s storeOutageMinutes the call fails as "store unreachable", which no copilot or judge is charged for', async () => {
    const { store } = flakyStore([]);
    const wrapped = outageTolerantStore(store, { ...options, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    await wrapped.getRun('r1'); // learns the run's bound: 0.001 minutes = 60 ms
    const failing = flakyStore(Array.from({ length: 100 }, refused)).store;
    Object.assign(store, { putResponse: failing.putResponse });
    const error = await wrapped.putResponse({ runId: 'r1' } as never).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).toBe(STORE_UNREACHABLE_CODE);
    expect(error?.message).toMatch(
      /could not be reached for 0 minute\(s\) \(storeOutageMinutes\), during putResponse: .*ECONNREFUSED/,
    );
    expect(toAdapterError(error, 'copilot A').kind).toBe('store_busy');
  });
});

test('isStoreConnectionError: server down or restarting, not a failed statement', () => {
  expect(isStoreConnectionError(refused())).toBe(true);
  expect(
    isStoreConnectionError(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ),
  ).toBe(true);
  expect(isStoreConnectionError(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(true);
  expect(isStoreConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
  expect(isStoreConnectionError(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
  expect(isStoreConnectionError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(false);
});
