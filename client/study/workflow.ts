import type { Client } from '@temporalio/client';
import type { StudyRecord } from '../../core/study/types';
import { studyWorkflow } from '../../workflows';
import { closeUpdate, type StudyResult, type StudyWorkflowInput } from '../../contract/study';

export function studyWorkflowInput(study: StudyRecord, extra: Partial<StudyWorkflowInput> = {}): StudyWorkflowInput {
  return { study: study.name, deadline: study.spec.deadline, remindAt: study.spec.remindBefore, ...extra };
}

/** Start the study's long-running workflow; returns its first run id, or null when it was already running. */
export async function startStudyWorkflow(
  client: Client,
  study: StudyRecord,
  taskQueue: string,
  extra: Partial<StudyWorkflowInput> = {},
): Promise<string | null> {
  try {
    return (
      await client.workflow.start(studyWorkflow, {
        workflowId: study.workflowId,
        taskQueue,
        args: [studyWorkflowInput(study, extra)],
      })
    ).firstExecutionRunId;
  } catch (error) {
    if ((error as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw error;
    return null;
  }
}

/**
 * Close the study through its workflow, which only a worker can run: when none polls the workflow's task queue, say so at
 * once, and give up after `waitMs` saying how long it waited (the close stays requested; a worker that starts picks it up).
 */
export async function closeStudyWorkflow(
  client: Client,
  study: StudyRecord,
  options: { waitMs?: number; log?: (line: string) => void } = {},
): Promise<StudyResult> {
  const waitMs = options.waitMs ?? 60_000;
  const handle = client.workflow.getHandle(study.workflowId);
  const update = handle.executeUpdate(closeUpdate);
  update.catch(() => undefined); // abandoned below when no worker answers in time
  const queue = await handle.describe().then(
    (d) => d.taskQueue,
    () => null,
  );
  if (queue && !(await hasWorkflowPollers(client, queue)))
    options.log?.(
      `No worker is polling task queue ${queue} yet; the close waits for one (start judgeflow worker, or judgeflow study serve --worker).`,
    );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `study ${study.name}: no worker ran the close within ${Math.round(waitMs / 1000)} s (task queue ${queue ?? 'unknown'}); start a worker (judgeflow worker, or judgeflow study serve --worker) and run judgeflow study close ${study.name} again`,
          ),
        ),
      waitMs,
    );
  });
  try {
    return await Promise.race([update, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether any worker has polled the queue for workflow tasks lately (as Temporal's task queue description lists them). */
async function hasWorkflowPollers(client: Client, taskQueue: string): Promise<boolean> {
  try {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: 1 /* TASK_QUEUE_TYPE_WORKFLOW */,
    });
    return (pollers ?? []).length > 0;
  } catch {
    return true; // cannot tell: say nothing
  }
}
