import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { connectClient, connectWorker } from '../../client/connection';
import { uniqueQueue } from '../support/harness';
import { installQuietRuntime } from '../support/quietTemporal';

/**
 * A task that rejects while the pool waits used to be an unobserved rejection: the workflow task failed and was
 * retried for ever. The snapshot workflows (workflows/snapshotGenerate.ts, snapshotCurate.ts) run the pool with no
 * interval between starts (0); a rate interval (2 s here, longer than the task) is the case that used to wedge.
 */
test.each([0, 2_000])(
  'runPool (interval %i ms): a task failing fast rejects the pool; the workflow completes',
  async (minIntervalMs) => {
    installQuietRuntime();
    const { connection, namespace } = await connectWorker();
    const taskQueue = uniqueQueue('pool');
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      workflowsPath: path.join(__dirname, '..', 'support', 'workflows', 'pool.ts'),
    });
    const client = await connectClient();
    try {
      const outcome = await worker.runUntil(async () => {
        const handle = await client.workflow.start('poolWithFastFailure', {
          taskQueue,
          workflowId: `${taskQueue}-wf`,
          args: [minIntervalMs],
        });
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((r) => (timer = setTimeout(() => r('still running after 20 s'), 20_000)));
        const result = await Promise.race([handle.result() as Promise<string>, timeout]).finally(() =>
          clearTimeout(timer),
        );
        if (result.startsWith('still running')) await handle.terminate('test timed out');
        const history = await handle.fetchHistory();
        const failedTasks = (history.events ?? [])
          .filter((e) => e.workflowTaskFailedEventAttributes)
          .map((e) => e.workflowTaskFailedEventAttributes!.failure?.message);
        return { result, failedTasks };
      });
      expect(outcome).toEqual({ result: 'rejected: task 1 failed fast', failedTasks: [] });
    } finally {
      await client.connection.close();
      await connection.close();
    }
  },
  120_000,
);
