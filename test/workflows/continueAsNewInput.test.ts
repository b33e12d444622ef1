import { spawn, type ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { runItemGroup } from '../../activities/itemGroup';
import { freePort, isServerUp } from '../../client/temporalServer';
import { QUERY_PAGE, QueryPages } from '../../workflows/queryPages';
import { uniqueQueue, until } from '../support/harness';
import { installQuietRuntime } from '../support/quietTemporal';
import { oneCopilotRun } from '../support/oneCopilotRun';

/**
 * A run's continue-as-new input carries where it stands, not its queries: at 100,000 queries with ids of 30 characters
 * (3.5 MB of ids, past Temporal's 2 MB payload limit), the input a run carries into its next history stays small, and
 * the continued history asks on from the query where the first stopped. The real benchmarkRun workflow runs with
 * mocked activities against a dev server of its own that suggests continuing as new after 400 events (the test
 * server's default is 4,096), so the run continues as new within seconds.
 */

const QUERIES = 100_000;
const idOf = (i: number) => `query-${'x'.repeat(16)}-${String(i).padStart(6, '0')}`;

let server: ChildProcess | undefined;
let address = '';
beforeAll(async () => {
  installQuietRuntime();
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  // Started here and stopped by its pid in afterAll.
  server = spawn(
    process.env.TEMPORAL_CLI!,
    [
      ...['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', '--log-level', 'error'],
      ...['--ui-port', String(await freePort())],
      ...['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=400'],
    ],
    { stdio: 'ignore' },
  );
  await until(() => isServerUp(address), 60_000);
}, 90_000);
afterAll(() => {
  server?.kill('SIGTERM');
});

function mocks() {
  const asked: string[] = [];
  // The history (run id) each query was asked in: the last one is terminated with batches in flight, so only the
  // histories that continued as new must have asked a gapless stretch.
  const askedIn: string[] = [];
  const pages: Array<[number, number]> = [];
  // The pages each history (by its run id) read: the last history may continue as new once more before the test
  // terminates it, and a read retried under load is the same page, so counting reads against histories seen would race.
  const pagesPerHistory = new Map<string, Set<number>>();
  const ask = async (queryId: string) => {
    asked.push(queryId);
    askedIn.push(Context.current().info.workflowExecution?.runId ?? '');
    await new Promise((r) => setTimeout(r, 2));
    return { status: 'ok' as const, outcome: {} };
  };
  const activities = {
    prepareRun: async () => ({ snapshotId: 'snap', rubricVersion: 'rubric', queryCount: QUERIES }),
    planRun: async () => ({ unitTimeoutMs: 60_000, live: ['alpha'], imports: [], answered: false }),
    snapshotQueryIds: async ({ offset, limit }: { offset: number; limit: number }) => {
      pages.push([offset, limit]);
      const history = Context.current().info.workflowExecution?.runId ?? '';
      pagesPerHistory.set(history, (pagesPerHistory.get(history) ?? new Set()).add(offset));
      return Array.from({ length: Math.min(limit, QUERIES - offset) }, (_, i) => idOf(offset + i));
    },
    askCopilot: async ({ queryId }: { queryId: string }) => ask(queryId),
    askCopilotBatch: async ({ queryIds }: { queryIds: string[] }) =>
      runItemGroup(queryIds, ask, (r) => (r.status as string) === 'throttled'),
    planReadyJudgeWork: async () => ({ planned: 0 }),
    runSpend: async () => ({ usd: 0, tokens: 0, callsWithoutUsage: 0 }),
    markRunFailed: async () => undefined,
  };
  return { activities, asked, askedIn, pages, pagesPerHistory };
}

const input = oneCopilotRun('run-can');

test('at 100,000 queries the continue-as-new input stays under 64 KB and the next history asks on where the last stopped', async () => {
  const { activities, asked, askedIn, pages, pagesPerHistory } = mocks();
  let runs: string[] = [];
  let histories = 0;
  const taskQueue = uniqueQueue('can-input');
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: process.env.JUDGEFLOW_WORKFLOW_BUNDLE! },
    activities,
  });
  try {
    await worker.runUntil(async () => {
      const handle = await client.workflow.start('benchmarkRun', { taskQueue, workflowId: input.runId, args: [input] });
      runs = [handle.firstExecutionRunId];
      // Continues-as-new until the queries asked cross a page boundary (about 500 queries a history at 400 events);
      // each history's input is looked at.
      while (asked.length <= QUERY_PAGE + 100) {
        const run = client.workflow.getHandle(input.runId, runs[runs.length - 1]);
        await until(async () => (await run.describe()).status.name === 'CONTINUED_AS_NEW', 120_000);
        const events = (await run.fetchHistory()).events ?? [];
        const continued = events.find(
          (e) => e.workflowExecutionContinuedAsNewEventAttributes,
        )!.workflowExecutionContinuedAsNewEventAttributes!;
        const bytes = (continued.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0);
        expect(bytes).toBeGreaterThan(0);
        expect(bytes).toBeLessThan(64 * 1024);
        const carried = Buffer.from(continued.input!.payloads![0].data!).toString('utf8');
        expect(carried).not.toContain(idOf(QUERY_PAGE + 1)); // no query id past the ones being asked
        expect(carried).toContain(`"queryCount":${QUERIES}`);
        runs.push(continued.newExecutionRunId!);
      }
      histories = runs.length;
      await client.workflow.getHandle(input.runId).terminate('test done');
    });
  } finally {
    await connection.close();
    await client.connection.close();
  }
  // Each query asked once; the histories that continued as new asked the queries from the first on without a gap,
  // and the later ones (terminated with up to 16 batches part-way) asked only past them; only the pages reached were read.
  const positions = asked.map((q) => Number(q.slice(-6))).sort((a, b) => a - b);
  expect(new Set(positions).size).toBe(positions.length);
  const continued = new Set(runs.slice(0, -1)); // the last seen may have continued once more before the terminate
  const done = asked.filter((_, i) => continued.has(askedIn[i])).map((q) => Number(q.slice(-6)));
  done.sort((a, b) => a - b);
  expect(done.length).toBeGreaterThan(0);
  expect(done).toEqual(done.map((_, i) => i));
  const tail = asked.filter((_, i) => !continued.has(askedIn[i])).map((q) => Number(q.slice(-6)));
  for (const position of tail) expect(position).toBeGreaterThanOrEqual(done.length);
  expect(positions.length).toBeGreaterThan(QUERY_PAGE);
  expect(pages.every(([offset, limit]) => offset % QUERY_PAGE === 0 && limit === QUERY_PAGE)).toBe(true);
  // A history reads the pages of the queries it asks and the next one, no further ahead than one page past the last
  // query it asked. (How many pages a history spans depends on its batches: 400 events carried 500 queries in batches
  // of five, up to about 2,000 in batches of 25, so a history may cross two page boundaries: four pages, not three.)
  const read = [...pagesPerHistory.values()];
  const pageOf = (position: number) => Math.floor(position / QUERY_PAGE) * QUERY_PAGE;
  for (const [history, offsets] of pagesPerHistory) {
    const own = asked.filter((_, i) => askedIn[i] === history).map((q) => pageOf(Number(q.slice(-6))));
    if (!own.length) continue;
    const [first, last] = [Math.min(...own), Math.max(...own)];
    for (const offset of offsets) expect(offset).toBeGreaterThanOrEqual(first);
    for (const offset of offsets) expect(offset).toBeLessThanOrEqual(last + QUERY_PAGE);
  }
  expect(read.length).toBeGreaterThanOrEqual(histories - 1);
  const lastPage = Math.floor(Math.max(...positions) / QUERY_PAGE) * QUERY_PAGE;
  expect(Math.max(...pages.map(([offset]) => offset))).toBeLessThanOrEqual(lastPage + QUERY_PAGE);
}, 480_000);

test('query pages: held ids are sliced across pages; an unread page is neither available nor sliced', () => {
  const ids = Array.from({ length: QUERY_PAGE * 2 + 7 }, (_, i) => idOf(i));
  const held = QueryPages.held(ids);
  expect(held.complete).toBe(true);
  expect(held.heldFrom(QUERY_PAGE - 3)).toBe(ids.length - QUERY_PAGE + 3);
  expect(held.slice(QUERY_PAGE - 2, QUERY_PAGE + 2)).toEqual(ids.slice(QUERY_PAGE - 2, QUERY_PAGE + 2));
  expect(held.slice(0, ids.length)).toEqual(ids);
  const unread = QueryPages.of({ snapshotId: 's', rubricVersion: 'r', queryCount: ids.length }, async () => []);
  expect(unread.complete).toBe(false);
  expect(unread.heldFrom(0)).toBe(0);
  expect(() => unread.slice(0, 1)).toThrow(/query page 0 is not read yet/);
  // An older run's prepared input, with its ids: held from the start, nothing to read.
  expect(QueryPages.of({ snapshotId: 's', rubricVersion: 'r', queryIds: ids }, async () => []).complete).toBe(true);
});
