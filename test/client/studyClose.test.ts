import { connectClient } from '../../client/connection';
import { closeStudyWorkflow } from '../../client/study/workflow';
import type { StudyRecord } from '../../core/study/types';
import { uniqueQueue } from '../support/harness';

test('study close with no worker says at once that none is polling, and gives up saying how long it waited', async () => {
  const client = await connectClient();
  const workflowId = `study-close-nobody-${Date.now()}`;
  const taskQueue = uniqueQueue('no-worker');
  try {
    await client.workflow.start('studyWorkflow', { taskQueue, workflowId, args: [{ study: 'lonely' }] });
    const log: string[] = [];
    const started = Date.now();
    const closing = closeStudyWorkflow(client, { name: 'lonely', workflowId } as StudyRecord, {
      waitMs: 3_000,
      log: (l) => log.push(l),
    });
    await expect(closing).rejects.toThrow(
      `study lonely: no worker ran the close within 3 s (task queue ${taskQueue}); start a worker`,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(log).toEqual([
      `No worker is polling task queue ${taskQueue} yet; the close waits for one (start judgeflow worker, or judgeflow study serve --worker).`,
    ]);
  } finally {
    await client.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await client.connection.close();
  }
});
