import path from 'node:path';
import { connectClient, connectWorker, taskQueue } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { SqliteStore } from '../../stores/sqlite';
import { createWorker } from '../../worker/createWorker';
import { benchmarkRun } from '../../workflows';
import { runConfig, tempDir } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { installQuietRuntime } from '../support/quietTemporal';

/** Two checkouts (two stores) and a third directory's worker on one Temporal server: each run is served only by its own store's workers. */

const sim = simServersForFile({ judge: {}, copilots: {} });

test('the default task queue is tied to the store: two stores, three workers, both runs complete, no attempt on the wrong worker', async () => {
  const homes = ['a', 'b', 'c'].map((name) => path.join(tempDir(`jf-checkout-${name}-`), '.judgeflow'));
  const envs = homes.map((home) => ({
    ...process.env,
    JUDGEFLOW_HOME: home,
    JUDGEFLOW_TASK_QUEUE: '',
    JUDGEFLOW_STORE: '',
  }));
  const queues = await Promise.all(envs.map((env) => taskQueue(env)));
  expect(new Set(queues).size).toBe(3);
  expect(await taskQueue(envs[0])).toBe(queues[0]); // persistent: the same store always gives the same queue
  expect(await taskQueue({ ...envs[0], JUDGEFLOW_TASK_QUEUE: 'explicit' })).toBe('explicit');

  installQuietRuntime();
  const { connection, namespace } = await connectWorker();
  const workers = await Promise.all(
    homes.map((home, i) =>
      createWorker({
        connection,
        namespace,
        taskQueue: queues[i],
        store: { kind: 'sqlite', file: path.join(home, 'results.db') },
        env: envs[i],
      }),
    ),
  );
  const client = await connectClient();
  const queries = [1, 2, 3, 4].map((i) => ({
    id: `t2-c${i}`,
    text: `Which L2 has the lowest fees, case ${i}?`,
    task: 'T2',
    category: `C${i}`,
  }));
  try {
    const running = workers.map((w) => w.run());
    const runIds = await Promise.all(
      [0, 1].map(async (i) => {
        const cfg = runConfig(path.dirname(homes[i]), {
          protocol: 'lattice',
          queries,
          judge: { baseURL: sim.judge.url, model: 'sim-judge' },
          copilots: [{ name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' }],
        });
        const runId = `run-queue-${i}-${Date.now()}`;
        await client.workflow.execute(benchmarkRun, {
          taskQueue: queues[i],
          workflowId: runId,
          args: [runInput(cfg, runId)],
        });
        return runId;
      }),
    );
    for (const [i, runId] of runIds.entries()) {
      const store = new SqliteStore(path.join(homes[i], 'results.db'));
      expect((await store.getRun(runId))!.status).toBe('completed');
      expect((await store.responses(runId)).map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      await store.close();
      // Every activity of the run (it collects and judges itself, no child workflows) succeeded at its first attempt:
      // none was taken by another store's worker.
      const events = (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes).length).toBeGreaterThan(8);
      expect(
        events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes),
      ).toEqual([]);
      expect(
        events
          .filter((e) => e.activityTaskStartedEventAttributes)
          .map((e) => e.activityTaskStartedEventAttributes!.attempt),
      ).not.toContain(2);
    }
    const untouched = new SqliteStore(path.join(homes[2], 'results.db'));
    expect(await untouched.listRuns()).toEqual([]);
    await untouched.close();
    workers.forEach((w) => w.shutdown());
    await Promise.all(running);
  } finally {
    await client.connection.close();
    await connection.close();
  }
}, 180_000);
