import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { StudyActivities } from '../activities';
import {
  closeUpdate,
  studyStatusQuery,
  submitUpdate,
  type StudyResult,
  type StudyStatus,
  type StudyWorkflowInput,
  type SubmitInput,
} from '../contract/study';
// Re-exported: code written before contract/ existed imports the study's messages from here.
export { closeUpdate, studyStatusQuery, submitUpdate } from '../contract/study';

const { recordStudySubmission, closeStudyRecords, remindStudy } = proxyActivities<StudyActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', nonRetryableErrorTypes: ['InputError'] },
});

const SUBMISSION_ID = /^[A-Za-z0-9_-]{8,100}$/;

/**
 * A human preference study, open for as long as people annotate (weeks). The annotation app stores each answer first
 * and then sends its id here as an Update; the handler records it in the results store through an activity (ids in
 * history, texts never). The workflow closes on `close`, or at its deadline (a durable timer), and continues as new
 * whenever Temporal suggests it, so its history stays small however many answers arrive.
 */
export async function studyWorkflow(input: StudyWorkflowInput): Promise<StudyResult> {
  const carried = input.carried ?? { recorded: 0, generation: 0, reminded: false };
  const status: StudyStatus = {
    study: input.study,
    open: true,
    recorded: carried.recorded,
    generation: carried.generation,
    reminded: carried.reminded,
  };
  let closeRequested: StudyResult['closedBy'] | null = null;
  let result: StudyResult | null = null;
  // Not allHandlersFinished(): a pending `close` update is itself a handler in flight until the study has closed.
  let submitsInFlight = 0;

  setHandler(studyStatusQuery, () => status);
  setHandler(
    submitUpdate,
    async ({ submissionId }) => {
      submitsInFlight++;
      try {
        const recorded = await recordStudySubmission({ submissionId });
        if (recorded.recorded) status.recorded++;
        return recorded;
      } finally {
        submitsInFlight--;
      }
    },
    {
      validator: (arg: SubmitInput) => {
        if (!arg || typeof arg.submissionId !== 'string' || !SUBMISSION_ID.test(arg.submissionId))
          throw new Error('submit: submissionId must be 8-100 letters, digits, "_" or "-"');
        if (closeRequested) throw new Error(`study ${input.study} is closed`);
      },
    },
  );
  setHandler(closeUpdate, async () => {
    closeRequested ??= 'command';
    await condition(() => result !== null);
    return result!;
  });

  const at = (iso: string | null) => (iso ? Date.parse(iso) : null);
  const deadline = at(input.deadline);
  const remindAt = at(input.remindAt);
  const forced = () =>
    input.continueAsNewAfterEvents !== undefined && workflowInfo().historyLength >= input.continueAsNewAfterEvents;

  for (;;) {
    const nextTimer = [!status.reminded ? remindAt : null, deadline]
      .filter((t): t is number => t !== null)
      .sort((a, b) => a - b)[0];
    const wake = () => closeRequested !== null || workflowInfo().continueAsNewSuggested || forced();
    const woke =
      nextTimer !== undefined
        ? await condition(wake, Math.max(1, nextTimer - Date.now()))
        : (await condition(wake), true);
    if (!woke && remindAt !== null && !status.reminded && Date.now() >= remindAt) {
      await remindStudy({ study: input.study });
      status.reminded = true;
      continue;
    }
    if (!woke && deadline !== null && Date.now() >= deadline) closeRequested ??= 'deadline';
    if (closeRequested) {
      // Answers already admitted finish first; the close activity then records anything the app stored but could not deliver.
      await condition(() => submitsInFlight === 0);
      const closed = await closeStudyRecords({ study: input.study, closedAt: new Date(Date.now()).toISOString() });
      status.open = false;
      result = { ...status, closedBy: closeRequested, recordedAtClose: closed.recorded };
      await condition(allHandlersFinished);
      return result;
    }
    if (workflowInfo().continueAsNewSuggested || forced()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof studyWorkflow>({
        ...input,
        carried: { recorded: status.recorded, generation: status.generation + 1, reminded: status.reminded },
      });
    }
  }
}
