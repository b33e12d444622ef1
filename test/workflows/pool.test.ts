import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { connectClient, connectWorker } from '../../client/connection';
import { uniqueQueue } from '../support/harness';

/**
 * A task that rejects while its lane waits out the rate interval used to be an unobserved rejection: the workflow task
 * failed and was retried for ever. (The benchmark workflow's own use is covered end to end in runControl.e2e.test.ts.)
 */
test('runPool: a task failing during the rate-limit sleep rejects the pool; the workflow completes', async () => {
  const { connection, namespace } = await connectWorker();
  const taskQueue = uniqueQueue('pool');
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath: path.join(__dirname, '..', 'support', 'workflows', 'pool.ts') });
  const client = await connectClient();
  try {
    const outcome = await worker.runUntil(async () => {
      const handle = await client.workflow.start('poolWithFastFailure', { taskQueue, workflowId: `${taskQueue}-wf`, args: [2_000] });
      const timeout = new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000));
      const result = await Promise.race([handle.result() as Promise<string>, timeout]);
      if (result.startsWith('still running')) await handle.terminate('test timed out');
      const history = await handle.fetchHistory();
      const failedTasks = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes!.failure?.message);
      return { result, failedTasks };
    });
    expect(outcome).toEqual({ result: 'rejected: task 1 failed fast', failedTasks: [] });
  } finally {
    await client.connection.close();
    await connection.close();
  }
}, 120_000);
