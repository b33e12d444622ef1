import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { runItemGroup } from '../../activities/itemGroup';
import type { ItemResult, LaneActivities } from '../support/workflows/lane';
import { uniqueQueue } from '../support/harness';
import { installQuietRuntime } from '../support/quietTemporal';

/**
 * The endpoint lane (workflows/endpointLane.ts) and the judge planner (workflows/judgePlanner.ts) alone, in small test
 * workflows (test/support/workflows/lane.ts) with mocked activities. TestWorkflowEnvironment.createTimeSkipping() would
 * download Temporal's Java test server from GitHub, which this machine cannot reach, and the Temporal CLI's dev server
 * is not that server; so the environment is the dev server jest's globalSetup started (TEMPORAL_ADDRESS), with real
 * time. The mocked calls are tens of milliseconds, so that costs little.
 */

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  installQuietRuntime(); // else the environment's default Runtime prints the workers' INFO lines and webpack's summary
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: process.env.TEMPORAL_ADDRESS });
});
afterAll(async () => {
  await env?.teardown();
});

interface Call {
  key: string;
  attempt: number;
  start: number;
  end: number;
}

/**
 * Mocked activities: `slow*` keys last until every key of `slowOutlasts` has ended (at most 15 s), judge items
 * (`item:*`) 150 ms, others 30 ms; `throttle*` are throttled on their first attempt, `broken*` always fail.
 */
function mocks(judges = 1, slowOutlasts: string[] = []) {
  const calls: Call[] = [];
  const batches: string[][] = [];
  const failures: string[] = [];
  const plans: string[][] = [];
  let planned = 0;
  let outlasted = () => {};
  const othersEnded = new Promise<void>((resolve) => (outlasted = resolve));
  const slowCall = async () => {
    let fallback: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([othersEnded, new Promise((r) => (fallback = setTimeout(r, 15_000)))]);
    clearTimeout(fallback);
  };
  const callOne: LaneActivities['callOne'] = async ({ key, attempt }) => {
    const start = Date.now();
    if (key.startsWith('slow')) await slowCall();
    else await new Promise((r) => setTimeout(r, key.startsWith('item:') ? 150 : 30));
    calls.push({ key, attempt, start, end: Date.now() });
    if (slowOutlasts.every((k) => calls.some((c) => c.key === k))) outlasted();
    if (key.startsWith('broken')) throw ApplicationFailure.nonRetryable(`${key} broke on purpose`);
    const status = key.startsWith('throttle') && attempt === 1 ? 'throttled' : 'ok';
    return { key, status, outcome: status === 'throttled' ? { throttled: true } : {} } satisfies ItemResult;
  };
  const activities: LaneActivities = {
    callOne,
    async callMany({ keys }) {
      batches.push(keys);
      return runItemGroup(
        keys,
        (key) => callOne({ key, attempt: 1 }),
        (r) => r.status === 'throttled',
      );
    },
    async recordFailure({ key }) {
      failures.push(key);
    },
    async planReady({ queryIds }) {
      plans.push(queryIds);
      planned += queryIds.length * judges;
      return planned;
    },
  };
  return { activities, calls, batches, failures, plans };
}

async function run<T>(workflow: string, args: unknown, activities: LaneActivities): Promise<T> {
  const taskQueue = uniqueQueue('lane');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowsPath: path.join(__dirname, '..', 'support', 'workflows', 'lane.ts'),
    activities,
  });
  return worker.runUntil(
    env.client.workflow.execute(workflow, { taskQueue, workflowId: `${taskQueue}-wf`, args: [args] }) as Promise<T>,
  );
}

type LaneResult = { counts: { done: number; failures: number }; counted: Array<[string, string]> };

test('a free place starts the next item at once, whatever else is in flight; never more than the concurrency at a time', async () => {
  // The slow item ends only once the fast ones have (a fixed 800 ms was outrun by four workflow round trips under
  // load); a lane that waited for it would start fast-2 only after its 15 s fallback.
  const m = mocks(1, ['fast-1', 'fast-2', 'fast-3', 'fast-4']);
  const keys = ['slow-1', 'fast-1', 'fast-2', 'fast-3', 'fast-4'];
  const result = await run<LaneResult>('laneWorkflow', { keys, concurrency: 2 }, m.activities);
  expect(result.counts).toMatchObject({ done: 5, failures: 0 });
  const slow = m.calls.find((c) => c.key === 'slow-1')!;
  // The fast items went one after another on the other place while the slow one was still running.
  for (const key of ['fast-2', 'fast-3', 'fast-4'])
    expect(m.calls.find((c) => c.key === key)!.start).toBeLessThan(slow.end);
  const inFlight = (t: number) => m.calls.filter((c) => c.start <= t && t < c.end).length;
  expect(Math.max(...m.calls.map((c) => inFlight(c.start)))).toBeLessThanOrEqual(2);
}, 60_000);

test('a throttled item is asked again (attempt 2); an item whose every attempt fails is recorded and counted as failed; the rest go on', async () => {
  const m = mocks();
  const result = await run<LaneResult>(
    'laneWorkflow',
    { keys: ['throttle-1', 'broken-1', 'fast-1'], concurrency: 1 },
    m.activities,
  );
  expect(m.calls.filter((c) => c.key === 'throttle-1').map((c) => c.attempt)).toEqual([1, 2]);
  expect(m.failures).toEqual(['broken-1']);
  expect(result.counts).toMatchObject({ done: 3, failures: 1 });
  expect(new Map(result.counted)).toEqual(
    new Map([
      ['throttle-1', 'done'],
      ['broken-1', 'failed'],
      ['fast-1', 'done'],
    ]),
  );
}, 60_000);

test('once calls are timed, several items go in one activity; a batch stopped by a throttle leaves the rest to be asked alone', async () => {
  const m = mocks();
  const keys = ['fast-0', 'fast-1', 'fast-2', 'throttle-3', 'fast-4', 'fast-5', 'fast-6', 'fast-7', 'fast-8', 'fast-9'];
  const result = await run<LaneResult>('laneWorkflow', { keys, concurrency: 1 }, m.activities);
  expect(m.batches.length).toBeGreaterThan(0);
  // Nine left on one place: 9 ÷ 1.5 = 6 in the first batch (workflows/limits/itemGroupSize.ts).
  expect(m.batches[0]).toEqual(['fast-1', 'fast-2', 'throttle-3', 'fast-4', 'fast-5', 'fast-6']);
  // Every item counted exactly once; what the batch left (from the throttle on) asked alone, in order. (fast-9 starts
  // on the window's place as soon as the batch gives it back, so where it lands among those is a race, not an order.)
  const counted = result.counted.map(([k]) => k);
  expect([...counted].sort()).toEqual([...keys].sort());
  const leftover = ['throttle-3', 'fast-4', 'fast-5', 'fast-6'];
  expect(counted.filter((k) => leftover.includes(k))).toEqual(leftover);
  expect(m.calls.filter((c) => c.key === 'throttle-3').map((c) => c.attempt)).toEqual([1, 1, 2]); // in the batch, then alone
  expect(result.counts).toMatchObject({ done: 10, failures: 0 });
}, 60_000);

test("a judge's lane fills its batches: with nothing else running, one place takes every item left", async () => {
  const m = mocks();
  const keys = ['fast-0', 'fast-1', 'fast-2', 'fast-3', 'fast-4', 'fast-5', 'fast-6', 'fast-7', 'fast-8', 'fast-9'];
  const result = await run<LaneResult>('laneWorkflow', { keys, concurrency: 1, fillBatches: true }, m.activities);
  // The first goes alone (no call timed yet); the nine left end this place's work in one batch (filledBatchSize),
  // where the share rule above takes six and leaves three.
  expect(m.batches).toEqual([keys.slice(1)]);
  expect(result.counted.map(([k]) => k)).toEqual(keys);
  expect(result.counts).toMatchObject({ done: 10, failures: 0 });
}, 60_000);

test("a judge's lane cuts its place's part into equal batches (the patch even-batches), not into full ones and a remnant", async () => {
  const m = mocks();
  const keys = Array.from({ length: 120 }, (_, i) => `fast-${i}`);
  const result = await run<LaneResult>('laneWorkflow', { keys, concurrency: 1, fillBatches: true }, m.activities);
  // The first alone; the 119 left are this place's part, more than one batch of 50 holds: three of 40, 40 and 39,
  // where cut down they were 50, 50 and 19.
  expect(m.batches.map((b) => b.length)).toEqual([40, 40, 39]);
  expect(result.counted.map(([k]) => k)).toEqual(keys);
  expect(result.counts).toMatchObject({ done: 120, failures: 0 });
}, 60_000);

describe('the judge planner', () => {
  test('plans answers as they arrive, only when a judge runs short of work, and each judge of a panel judges its own items (i mod n) once', async () => {
    const m = mocks(2);
    const waves = Array.from({ length: 12 }, (_, k) => [`q${k}`]);
    const result = await run<{ judged: Array<[number, number]>; counts: { done: number; total: number } }>(
      'plannerWorkflow',
      { waves, concurrencies: [1, 1] },
      m.activities,
    );
    // 12 queries × 2 judges: 24 items, each judged once by judges[i mod 2].
    expect(result.judged.map(([, i]) => i).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    for (const [lane, index] of result.judged) expect(index % 2).toBe(lane);
    expect(result.counts).toMatchObject({ done: 24, total: 24 });
    // Every query planned once; answers that arrived while the judges had work were planned together.
    expect(m.plans.flat().sort()).toEqual(waves.flat().sort());
    expect(m.plans.length).toBeLessThan(waves.length);
  }, 60_000);
});
