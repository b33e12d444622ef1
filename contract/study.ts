import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** Inputs and results of the study workflow: identifiers and counts only, never texts. */

export interface StudyWorkflowInput {
  study: string;
  /** ISO time at which the study closes itself, if any. */
  deadline: string | null;
  /** ISO time of the reminder (outstanding work per annotator is recorded and logged), if any. */
  remindAt: string | null;
  /** Continue as new once the history has this many events, even before Temporal suggests it (tests force it low). */
  continueAsNewAfterEvents?: number;
  /** State carried across continue-as-new. */
  carried?: { recorded: number; generation: number; reminded: boolean };
}

export interface SubmitInput {
  submissionId: string;
}

export interface SubmitResult {
  recorded: boolean;
  revision: number;
}

export interface StudyStatus {
  study: string;
  open: boolean;
  recorded: number;
  generation: number;
  reminded: boolean;
}

export interface StudyResult extends StudyStatus {
  closedBy: 'command' | 'deadline';
  recordedAtClose: number;
}

/** The study workflow's messages (names are the wire protocol). */
export const submitUpdate = defineUpdate<SubmitResult, [SubmitInput]>('submit');
export const closeUpdate = defineUpdate<StudyResult, []>('close');
export const studyStatusQuery = defineQuery<StudyStatus>('status');
