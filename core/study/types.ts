import type { StudyOptions } from './options';
import type { StudyItem } from './design';
import type { StudySelection } from './active';

/** Records of a pairwise preference study as the results store keeps them. */

export interface StudyRecord {
  name: string;
  runId: string;
  status: 'open' | 'closed';
  createdAt: string;
  closedAt: string | null;
  workflowId: string;
  spec: StudySpec;
}

export interface StudySpec {
  copilots: string[];
  queryIds: string[];
  perItem: number;
  seed: string;
  deadline: string | null;
  remindBefore: string | null;
  options: StudyOptions;
  excluded: { failed: number; missing: number; pairs: number };
  /** How the items were chosen (absent: uniform, for studies made before active selection). */
  selection?: StudySelection;
}

export interface StoredAssignment {
  assignmentId: string;
  study: string;
  itemId: string;
  slot: number;
  left: string;
  right: string;
  annotatorId: string | null;
  order: number | null;
}

export interface Annotator {
  annotatorId: string;
  study: string;
  label: string;
  source: 'app' | 'import';
}

/** What an annotator answers; `choice` is relative to the sides as shown (A = left). */
export interface Answer {
  choice: 'A' | 'B' | 'tie';
  reason: string | null;
  seriousError: boolean;
  errorType: string | null;
  comment: string | null;
}

export interface Submission {
  seq: number;
  submissionId: string;
  study: string;
  assignmentId: string;
  annotatorId: string;
  answer: Answer;
  receivedAt: string;
  status: 'pending' | 'recorded' | 'rejected';
  note: string | null;
}

/** The answer that counts for one assignment (the last recorded submission), with its item and sides. */
export interface RecordedAnnotation extends StoredAssignment {
  annotatorId: string;
  answer: Answer;
  revision: number;
  submittedAt: string;
  source: 'app' | 'import';
}

/**
 * The study part of the results store. Asynchronous, like the rest of the store interface; SQL lives only in the
 * implementation. Every write is idempotent: submissions are keyed by their id, recording a submission twice is a no-op.
 */
export interface StudyStore {
  createStudy(
    study: StudyRecord,
    items: StudyItem[],
    assignments: Array<Omit<StoredAssignment, 'annotatorId' | 'order' | 'study'>>,
  ): Promise<void>;
  getStudy(name: string): Promise<StudyRecord | null>;
  listStudies(): Promise<StudyRecord[]>;
  studyItems(name: string): Promise<StudyItem[]>;
  studyAssignments(name: string): Promise<StoredAssignment[]>;
  /** New annotators with the hash of their token, and the assignments dealt to them, in one transaction. */
  addAnnotators(
    name: string,
    annotators: Array<Annotator & { tokenHash: string }>,
    deal: Array<{ assignmentId: string; annotatorId: string; order: number }>,
  ): Promise<void>;
  annotators(name: string): Promise<Annotator[]>;
  annotatorByTokenHash(tokenHash: string): Promise<Annotator | null>;
  /** The annotator's queue in order, each with the answer that currently counts for it (pending or recorded), if any. */
  annotatorQueue(annotatorId: string): Promise<Array<StoredAssignment & { answer: Answer | null }>>;
  getAssignment(assignmentId: string): Promise<StoredAssignment | null>;
  /** Store-first acknowledgement of an answer; returns the stored row (the first one when the id repeats), or null once the study is closed. */
  putSubmission(s: Omit<Submission, 'seq' | 'status' | 'note'>): Promise<Submission | null>;
  getSubmission(submissionId: string): Promise<Submission | null>;
  pendingSubmissions(limit: number): Promise<Submission[]>;
  /** Apply a submission as the assignment's answer if it is the newest so far; idempotent: `recorded` stays true when asked again, so a retried activity counts it once. */
  recordSubmission(submissionId: string): Promise<{ recorded: boolean; revision: number } | null>;
  rejectSubmission(submissionId: string, note: string): Promise<void>;
  /** Record every pending submission of the study, then mark it closed (atomically with respect to putSubmission). */
  closeStudy(name: string, closedAt: string): Promise<{ recorded: number }>;
  annotations(name: string): Promise<RecordedAnnotation[]>;
  submissions(name: string): Promise<Submission[]>;
  /** Annotations from elsewhere: annotators, assignments and recorded answers written together. */
  importAnnotations(
    name: string,
    rows: Array<{
      annotator: string;
      itemId: string;
      left: string;
      right: string;
      answer: Answer;
      submittedAt: string;
    }>,
  ): Promise<number>;
  addStudyEvent(name: string, kind: string, detail: unknown): Promise<void>;
  studyEvents(name: string): Promise<Array<{ at: string; kind: string; detail: unknown }>>;
}
