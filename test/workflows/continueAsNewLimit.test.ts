import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { runItemGroup } from '../../activities/itemGroup';
import {
  CONTINUE_AS_NEW_BYTES,
  CONTINUE_AS_NEW_EVENTS,
  SUGGESTION_TAKEN_BELOW_EVENTS,
  historyFull,
} from '../../workflows/historyLimit';
import { uniqueQueue, until } from '../support/harness';
import { installQuietRuntime } from '../support/quietTemporal';
import { oneCopilotRun } from '../support/oneCopilotRun';

/**
 * A run continues as new at its own limit (workflows/historyLimit.ts: 8,192 events or 4 MB), not when the server
 * suggests it (4,096 events on the test server, which has the default): each continue-as-new stalls every lane, so
 * half as many of them is half the stalls. The real benchmarkRun workflow runs with mocked activities that answer at
 * once; its first history is read once it has continued as new.
 */

const WARN_EVENTS = 10_240; // Temporal warns past this many events in one history

const input = oneCopilotRun('run-can-limit');

function activities() {
  const queries = 1_000_000; // never all asked: the test ends the run once its first history has continued as new
  const ask = async () => ({ status: 'ok' as const, outcome: {} });
  return {
    prepareRun: async () => ({ snapshotId: 'snap', rubricVersion: 'rubric', queryCount: queries }),
    planRun: async () => ({ unitTimeoutMs: 60_000, live: ['alpha'], imports: [], answered: false }),
    snapshotQueryIds: async ({ offset, limit }: { offset: number; limit: number }) =>
      Array.from({ length: Math.min(limit, queries - offset) }, (_, i) => `q${offset + i}`),
    askCopilot: async () => ask(),
    askCopilotBatch: async ({ queryIds }: { queryIds: string[] }) =>
      runItemGroup(queryIds, ask, (r) => (r.status as string) === 'throttled'),
    planReadyJudgeWork: async () => ({ planned: 0 }),
    runSpend: async () => ({ usd: 0, tokens: 0, callsWithoutUsage: 0 }),
    markRunFailed: async () => undefined,
  };
}

test('the first history goes past the server suggestion to its own limit, stays under 10,240 events, and replays', async () => {
  installQuietRuntime();
  const address = process.env.TEMPORAL_ADDRESS!;
  const taskQueue = uniqueQueue('can-limit');
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const workflowId = `${input.runId}-${taskQueue}`;
  const workflowBundle = { codePath: process.env.JUDGEFLOW_WORKFLOW_BUNDLE! };
  try {
    const worker = await Worker.create({ connection, taskQueue, workflowBundle, activities: activities() });
    const history = await worker.runUntil(async () => {
      const handle = await client.workflow.start('benchmarkRun', { taskQueue, workflowId, args: [input] });
      const first = client.workflow.getHandle(workflowId, handle.firstExecutionRunId);
      await until(async () => (await first.describe()).status.name === 'CONTINUED_AS_NEW', 300_000);
      await client.workflow.getHandle(workflowId).terminate('test done');
      return first.fetchHistory();
    });
    const events = history.events ?? [];
    // The server suggested continuing as new (at about 4,096 events) long before the history did.
    const suggested = events.find((e) => e.workflowTaskStartedEventAttributes?.suggestContinueAsNew);
    expect(Number(suggested?.eventId)).toBeLessThan(CONTINUE_AS_NEW_EVENTS / 2 + 100);
    expect(events.length).toBeGreaterThanOrEqual(CONTINUE_AS_NEW_EVENTS);
    expect(events.length).toBeLessThan(WARN_EVENTS);
    expect(events[events.length - 1].workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    // The new shape (with its patch marker) replays on the code that recorded it.
    await Worker.runReplayHistory({ workflowBundle, replayName: 'can-limit-replay' }, history, workflowId);
  } finally {
    await connection.close();
    await client.connection.close();
  }
}, 360_000);

test('the rule: its own count or size, or a suggestion that comes before the server default count', () => {
  const at = (historyLength: number, historySize = 0, continueAsNewSuggested = false) =>
    historyFull({ historyLength, historySize, continueAsNewSuggested });
  expect(at(4_200, 800_000, true)).toBe(false); // the server's count suggestion is not taken
  expect(at(CONTINUE_AS_NEW_EVENTS - 1, 1_500_000, true)).toBe(false);
  expect(at(CONTINUE_AS_NEW_EVENTS)).toBe(true);
  expect(at(5_000, CONTINUE_AS_NEW_BYTES)).toBe(true); // large payloads: by size
  expect(at(400, 60_000, true)).toBe(true); // a server set to suggest sooner (or by size) is followed
  expect(at(SUGGESTION_TAKEN_BELOW_EVENTS - 1, 0, true)).toBe(true);
  expect(at(SUGGESTION_TAKEN_BELOW_EVENTS - 1)).toBe(false);
});
