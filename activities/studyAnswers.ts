import { log } from '@temporalio/activity';
import { InputError } from '../core/model/inputError';
import type { ActivityDeps } from './deps';

/** Activities of the study workflow: each records in the results store and returns ids and counts only. */
export function studyActivities(deps: ActivityDeps) {
  const studies = deps.store.studies;
  return {
    /** Apply one stored submission as its assignment's answer. Idempotent: a retried or repeated call records nothing new. */
    async recordStudySubmission({
      submissionId,
    }: {
      submissionId: string;
    }): Promise<{ recorded: boolean; revision: number }> {
      const result = await studies.recordSubmission(submissionId);
      if (!result)
        throw new InputError(
          `submission ${submissionId} is not in the results store ${deps.store.location}; is the app using another JUDGEFLOW_HOME than the worker?`,
        );
      return result;
    },

    async closeStudyRecords({ study, closedAt }: { study: string; closedAt: string }): Promise<{ recorded: number }> {
      const closed = await studies.closeStudy(study, closedAt);
      await studies.addStudyEvent(study, 'closed', { closedAt, recordedAtClose: closed.recorded });
      return closed;
    },

    /** The deadline is near: record who still has work (annotator ids and counts, never tokens) and log it. */
    async remindStudy({ study }: { study: string }): Promise<{ annotatorsBehind: number }> {
      const outstanding: Record<string, number> = {};
      for (const annotator of await studies.annotators(study)) {
        const left = (await studies.annotatorQueue(annotator.annotatorId)).filter((a) => !a.answer).length;
        if (left) outstanding[annotator.label] = left;
      }
      await studies.addStudyEvent(study, 'reminder', { outstanding });
      log.info(`study ${study}: reminder — ${Object.keys(outstanding).length} annotator(s) have assignments left`, {
        outstanding,
      });
      return { annotatorsBehind: Object.keys(outstanding).length };
    },
  };
}
