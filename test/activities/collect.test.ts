import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { collectActivities } from '../../activities/collect';
import { runActivities } from '../../activities/run';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { SqliteStore } from '../../stores/sqlite';
import { runConfig, tempDir } from '../support/harness';
import { quietActivityEnvironment } from '../support/quietTemporal';

/**
 * activities/collect.ts inside a mocked activity (MockActivityEnvironment: its attempt, heartbeats and cancellation),
 * against the simulator: a query whose text says `throttle…` gets 429 + Retry-After, `broken` an HTTP 500, `slow` an
 * answer after 3 s.
 */

let sim: SimServer;
let store: SqliteStore;
let runId: string;
const deps = () => ({ store, env: process.env });
const queries = [
  'fine',
  'throttle',
  'throttle-again',
  'broken',
  'slow',
  'batch-1',
  'batch-2',
  'batch-3',
  'paced',
  'paced-late',
].map((word, k) => ({ id: word, text: `Question ${k} (${word}): should I stake ETH?`, task: 'T1', category: 'C1' }));

beforeAll(async () => {
  sim = await startSimServer({
    handler: async (body) => {
      const text = String(body.messages?.[body.messages.length - 1]?.content ?? '');
      if (text.includes('(throttle'))
        return {
          status: 429,
          headers: { 'retry-after': '2' },
          body: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_exceeded' } }),
        };
      if (text.includes('(broken)'))
        return { status: 500, body: JSON.stringify({ error: { message: 'the copilot broke', type: 'server_error' } }) };
      // Unref'd: the slow reply still waiting when the file ends must not hold the jest worker.
      if (text.includes('(slow)')) await new Promise((r) => setTimeout(r, 3_000).unref());
      return undefined;
    },
  });
  const dir = tempDir('jf-collect-');
  store = new SqliteStore(path.join(dir, 'results.db'));
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: sim.url, model: 'sim-judge' },
    copilots: [{ name: 'A', type: 'openai', baseURL: sim.url, model: 'sim-thorough' }],
  });
  runId = `run-collect-${Date.now()}`;
  await runActivities(deps()).prepareRun(runInput(config, runId));
});
afterAll(async () => {
  await store?.close();
  await sim?.close();
});

const inActivity = <T>(fn: () => Promise<T>, env = quietActivityEnvironment()): Promise<T> => env.run(fn) as Promise<T>;
const ask = (queryId: string, attempt = 1, maxAttempts = 3) =>
  inActivity(() => collectActivities(deps()).askCopilot({ runId, queryId, copilot: 'A', attempt, maxAttempts }));
const asked = (word: string) => sim.requests.filter((r) => JSON.stringify(r.body).includes(`(${word})`)).length;

test('askCopilot stores the answer and reports its tokens; asked again, it answers from the store without a call', async () => {
  const first = await ask('fine');
  expect(first.status).toBe('ok');
  expect(first.outcome.tokens).toBeGreaterThan(0);
  expect((await store.getResponse(runId, 'fine', 'A'))?.status).toBe('ok');
  expect(await ask('fine')).toEqual({ status: 'ok', outcome: {} });
  expect(asked('fine')).toBe(1);
});

test('a paced call reads the store before its send time and leaves at it; it tells the limiter how late it left', async () => {
  // The store's calls in order: after the slot's claim, none may come before the request (each would make it late).
  const calls: string[] = [];
  const watched = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  const pacedAsk = (queryId: string, at: number) =>
    inActivity(() =>
      collectActivities({ store: watched, env: process.env }).askCopilot({
        runId,
        queryId,
        copilot: 'A',
        attempt: 1,
        maxAttempts: 3,
        send: { at, spacingMs: 50, endpoint: 'copilot:A' },
      }),
    );
  const at = Date.now() + 300;
  const paced = await pacedAsk('paced', at);
  expect(paced.status).toBe('ok');
  const claim = calls.indexOf('claimSendSlot');
  expect(claim).toBeGreaterThan(calls.indexOf('getResponse'));
  expect(claim).toBeGreaterThan(calls.indexOf('getRun'));
  expect(claim).toBeGreaterThan(calls.indexOf('snapshotQuery'));
  expect(calls.slice(claim + 1, calls.indexOf('putLlmCall'))).toEqual([]);
  const arrived = sim.requests.find((r) => JSON.stringify(r.body).includes('(paced)'))!.at;
  expect(arrived).toBeGreaterThanOrEqual(at);
  // Picked up 500 ms after the limiter's time: it says so.
  const late = await pacedAsk('paced-late', Date.now() - 500);
  expect(late.outcome.sentLateMs).toBeGreaterThanOrEqual(500);
  // An answer stored already is not asked again, and claims no send slot.
  calls.length = 0;
  expect(await pacedAsk('paced', Date.now())).toEqual({ status: 'ok', outcome: {} });
  expect(calls).not.toContain('claimSendSlot');
});

test('a throttle comes back to the workflow before the last attempt (nothing stored); on the last one it is stored as failed', async () => {
  expect(await ask('throttle', 1, 3)).toEqual({
    status: 'throttled',
    outcome: { throttled: true, retryAfterMs: 2_000, cause: 'HTTP 429' },
  });
  expect(await store.getResponse(runId, 'throttle', 'A')).toBeNull();
  const last = await ask('throttle', 3, 3);
  expect(last.status).toBe('failed');
  expect(await store.getResponse(runId, 'throttle', 'A')).toMatchObject({
    status: 'failed',
    errorKind: 'rate_limited',
  });
});

test("an HTTP 500 goes back to Temporal as a retryable failure; the activity's own last attempt stores it as failed", async () => {
  const thrown = await ask('broken', 1, 2).catch((e: unknown) => e);
  expect(thrown).toBeInstanceOf(ApplicationFailure);
  expect((thrown as ApplicationFailure).nonRetryable).toBe(false);
  expect(await store.getResponse(runId, 'broken', 'A')).toBeNull();
  // Temporal's second attempt of an activity asked with attempt 1 of 2 is the last one.
  const env = quietActivityEnvironment({ attempt: 2 });
  expect(
    (
      await inActivity(
        () =>
          collectActivities(deps()).askCopilot({ runId, queryId: 'broken', copilot: 'A', attempt: 1, maxAttempts: 2 }),
        env,
      )
    ).status,
  ).toBe('failed');
  expect(await store.getResponse(runId, 'broken', 'A')).toMatchObject({ status: 'failed', errorKind: 'http' });
});

test('a cancelled activity aborts the call in flight and stores nothing', async () => {
  const env = quietActivityEnvironment();
  const call = inActivity(
    () => collectActivities(deps()).askCopilot({ runId, queryId: 'slow', copilot: 'A', attempt: 1, maxAttempts: 3 }),
    env,
  );
  setTimeout(() => env.cancel(), 300);
  // The call in flight is aborted and the activity ends as cancelled, not as a failed call.
  await expect(call).rejects.toBeInstanceOf(CancelledFailure);
  expect(await store.getResponse(runId, 'slow', 'A')).toBeNull();
});

test('askCopilotBatch asks several queries in a row and stops at a throttle, leaving it and the rest to the workflow', async () => {
  const batch = await inActivity(() =>
    collectActivities(deps()).askCopilotBatch({
      runId,
      copilot: 'A',
      queryIds: ['batch-1', 'throttle-again', 'batch-2'],
    }),
  );
  expect(batch.results).toEqual([{ status: 'ok' }]);
  expect(batch.stoppedBy).toBe('throttle');
  expect(batch.sentAt).toHaveLength(2);
  expect(await store.getResponse(runId, 'batch-2', 'A')).toBeNull();
});

test('recordAnswerFailure stores the item as failed with the reason, so the run goes on', async () => {
  await inActivity(() =>
    collectActivities(deps()).recordAnswerFailure({
      runId,
      queryId: 'batch-3',
      copilot: 'A',
      reason: 'every attempt crashed',
    }),
  );
  expect(await store.getResponse(runId, 'batch-3', 'A')).toMatchObject({
    status: 'failed',
    errorKind: 'activity',
    errorMessage: 'every attempt crashed',
  });
});
