import type { Client } from '@temporalio/client';
import type { StudyRecord } from '../../core/study/types';
import { closeUpdate, studyWorkflow } from '../../workflows/study';
import type { StudyResult, StudyWorkflowInput } from '../../workflows/studyTypes';

export function studyWorkflowInput(study: StudyRecord, extra: Partial<StudyWorkflowInput> = {}): StudyWorkflowInput {
  return { study: study.name, deadline: study.spec.deadline, remindAt: study.spec.remindBefore, ...extra };
}

/** Start the study's long-running workflow; returns its first run id, or null when it was already running. */
export async function startStudyWorkflow(client: Client, study: StudyRecord, taskQueue: string, extra: Partial<StudyWorkflowInput> = {}): Promise<string | null> {
  try {
    return (await client.workflow.start(studyWorkflow, { workflowId: study.workflowId, taskQueue, args: [studyWorkflowInput(study, extra)] })).firstExecutionRunId;
  } catch (error) {
    if ((error as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw error;
    return null;
  }
}

export async function closeStudyWorkflow(client: Client, study: StudyRecord): Promise<StudyResult> {
  return client.workflow.getHandle(study.workflowId).executeUpdate(closeUpdate);
}
