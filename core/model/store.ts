import type { StudyItem } from '../study/design';
import type { Annotator, Answer, StoredAssignment, StudyRecord, StudyStore, Submission } from '../study/types';
import type { LlmCallRecord, Query, StoredJudgment, StoredResponse } from './types';
import { contentHash } from './hashing';
import type { StoredGroundingCheck } from '../grounding/checks';

/** The rows a retry removes, so the run's next execution (resumed from the store) asks them again. */
export interface ReopenedItems {
  responses: Array<{ queryId: string; copilot: string }>;
  judgments: Array<{ queryId: string; copilot: string } & JudgeSlot>;
  /** Judge conversations of units that must be judged afresh (their answers changed). */
  turns: Array<{ queryId: string } & JudgeSlot>;
}
import type { StoredAgentStep, WorldCall, WorldRecording } from './agentSteps';

/**
 * The results store: everything large (queries, responses, rationales) lives here, never in workflow history.
 * This file is the contract only; implementations live in stores/ (SQLite and PostgreSQL) and must pass test/stores/contract.ts.
 *
 * Rules every implementation keeps:
 * - Writes are idempotent, keyed by run, query, copilot (and rubric version, sample and judge name for judgments and
 *   judge turns): the first write wins, so an
 *   activity retried after a crash never creates a second row and never replaces what an earlier attempt stored.
 * - Several processes (workers, CLI) may use one store at the same time.
 * - Methods that write several rows (`putSnapshot`, `putJudgeUnits`, `putJudgments`) are atomic: all rows or none.
 */

export interface RunRecord {
  runId: string;
  protocol: string;
  snapshotId: string;
  rubricVersion: string;
  judge: { model: string; baseURL: string; temperature: number | null };
  copilots: string[];
  status: 'running' | 'completed' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  reportPath: string | null;
  sourceRunId: string | null;
  summary: unknown;
  config: unknown;
}

export type NewRun = Omit<RunRecord, 'status' | 'finishedAt' | 'reportPath' | 'summary'>;

export interface SnapshotRecord {
  snapshotId: string;
  createdAt: string;
  parentId: string | null;
  meta: Record<string, unknown>;
  queryCount: number;
}

export interface JudgeUnit {
  queryId: string;
  /** LATTICE: one copilot; CryptoAnalystBench: every copilot present, in presentation order. */
  copilots: string[];
  /** Repeated judging: which sample of the unit this work item asks for (absent = 0). */
  sample?: number;
  /** Judge panels: which member judges this work item (absent = the run's single judge, ''). */
  judge?: string;
  /** What the item asks: absent = the protocol's verdict; 'grounding' = the grounding checks of one response (rubrics/grounding). */
  kind?: 'grounding';
}

/**
 * Which verdict of a unit: the sample and the panel member. Judgments and judge turns are keyed by it too, so every
 * sample of every judge is its own row; sample 0 of judge '' is what a run with one judge asked once stores.
 */
export interface JudgeSlot {
  sample: number;
  judge: string;
}

export const FIRST_SLOT: JudgeSlot = { sample: 0, judge: '' };

/** One verdict's rationales, keyed as its judgment row is (judgmentRationales). */
export interface VerdictRationales {
  queryId: string;
  copilot: string;
  sample: number;
  judgeName: string;
  rationales: Record<string, string> | null;
}

/** The slot a planned work item asks for. */
export const slotOf = (unit: Pick<JudgeUnit, 'sample' | 'judge'>): JudgeSlot => ({
  sample: unit.sample ?? 0,
  judge: unit.judge ?? '',
});

/** One finished turn of a shared judge conversation (or an independent call stored like one). */
export interface StoredJudgeTurn {
  turn: number;
  request: unknown;
  answer: string;
}

/** A snapshot made by a scheduled refresh, and the benchmark run it started (if any). */
export interface ScheduleSnapshotRow {
  schedule: string;
  workflowId: string;
  snapshotId: string;
  parentId: string | null;
  createdAt: string;
  runId: string | null;
}

/**
 * A file a run produced besides its results (a browser copilot's failure screenshot), kept in the store with the bytes
 * so that any machine reaching the store can read it, whichever worker made it.
 */
export interface NewArtefact {
  runId: string;
  /** Unique within the run; a file name (exported as such). */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface ArtefactInfo {
  /** Derived from the run and name (artefactIdOf), so a retried write finds its own row. */
  artefactId: string;
  runId: string;
  name: string;
  contentType: string;
  size: number;
  createdAt: string;
}

export type Artefact = ArtefactInfo & { bytes: Buffer };

export const artefactIdOf = (runId: string, name: string): string => contentHash(`${runId}\u0000${name}`, 16);

/** How errors and reports refer to a stored artefact (`judgeflow artefacts RUN --out DIR` writes it out). */
export const artefactRef = (artefactId: string): string => `artefact:${artefactId}`;

/**
 * The file an artefact is exported as: its id, then its stored name reduced to plain characters (the store may hold any
 * text). The id keeps every file of a run distinct and lets `judgeflow view` serve a report's relative links.
 */
export const artefactFileName = (a: Pick<ArtefactInfo, 'artefactId' | 'name'>): string =>
  `${a.artefactId}-${a.name
    .split(/[\\/]/)
    .pop()!
    .replace(/[^A-Za-z0-9_.-]+/g, '_')}`;

/** Everything one study holds, for copying it between stores as a whole. */
export interface StudyDump {
  study: StudyRecord;
  items: StudyItem[];
  assignments: StoredAssignment[];
  annotators: Array<Annotator & { tokenHash: string | null; createdAt: string }>;
  /** In the order they were received; `seq` is the source's and is renumbered by the target. */
  submissions: Submission[];
  /** The answer that counts per assignment, naming the submission it came from by id (seqs differ between stores). */
  annotations: Array<{
    assignmentId: string;
    submissionId: string;
    answer: Answer;
    revision: number;
    submittedAt: string;
    source: 'app' | 'import';
  }>;
  events: Array<{ at: string; kind: string; detail: unknown }>;
}

/**
 * One record of a store's content as `exportRecords` yields it and `importRecords` writes it (`judgeflow store copy`).
 * Built from the domain types, so a field added to e.g. StoredJudgment is copied without touching this list.
 */
export type StoreRecord =
  | { kind: 'snapshot'; snapshot: SnapshotRecord; queries: Query[] }
  | { kind: 'rubric'; version: string; protocol: string; content: unknown; storedAt: string }
  | { kind: 'run'; run: RunRecord }
  | { kind: 'response'; response: StoredResponse }
  | { kind: 'judgeUnits'; runId: string; units: JudgeUnit[]; plan: unknown }
  | { kind: 'judgment'; judgment: StoredJudgment }
  | ({ kind: 'judgeTurn'; runId: string; queryId: string; rubricVersion: string; slot: JudgeSlot } & StoredJudgeTurn)
  /** All of a run's LLM calls: they have no key, so they are written only when the target has none for the run yet. */
  | { kind: 'llmCalls'; runId: string; calls: LlmCallRecord[] }
  | { kind: 'cachedAnswer'; key: string; answer: string; createdAt: string }
  | { kind: 'work'; jobId: string; key: string; value: unknown }
  | { kind: 'scheduleSnapshot'; row: ScheduleSnapshotRow }
  | { kind: 'artefact'; artefact: Artefact }
  | { kind: 'groundingCheck'; check: StoredGroundingCheck }
  | { kind: 'agentStep'; step: StoredAgentStep }
  | { kind: 'worldCall'; recording: string; call: WorldCall }
  /** A whole study; written only when the target has no study of that name. */
  | { kind: 'study'; dump: StudyDump };

export type RecordKind = StoreRecord['kind'];
export type RecordCounts = Partial<Record<RecordKind, number>>;

/** What `migrate` found and did. Versions count from 1; each store keeps its applied versions in `schema_migrations`. */
export interface MigrationReport {
  /** The schema version the store is at now. */
  version: number;
  /** Migrations applied by this call (or by the open that preceded it), oldest first. */
  applied: Array<{ version: number; name: string }>;
}

export interface ResultsStore {
  /** Where the data is, for messages (a file path or a URL; never a credential). */
  readonly location: string;
  /** Pairwise preference studies (their own interface, stored alongside the runs). */
  readonly studies: StudyStore;
  close(): Promise<void>;
  /**
   * Bring the schema up to date. Stores do this by themselves before first use, exactly once even when several processes
   * open a store at the same time; calling it is only needed to say what was done (`judgeflow store migrate`).
   */
  migrate(): Promise<MigrationReport>;

  // ---- copying a whole store (judgeflow store copy) -------------------------------------------------
  /** Every record, in batches of a bounded size (a snapshot with its queries, a page of responses, a study). */
  exportRecords(): AsyncIterable<StoreRecord[]>;
  /** Write one batch atomically; each record is first-write-wins, so importing twice adds nothing. Returns how many were new, by kind. */
  importRecords(batch: StoreRecord[]): Promise<RecordCounts>;

  // ---- snapshots (immutable sets of queries; the id is a content hash) -------------------------
  /** The record and its queries together; a snapshot already stored is kept as it was. */
  putSnapshot(snapshot: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): Promise<void>;
  getSnapshot(snapshotId: string): Promise<SnapshotRecord | null>;
  /** Ids starting with `prefix`, in id order (for `git`-style unique prefixes). */
  snapshotIdsStartingWith(prefix: string): Promise<string[]>;
  /** Newest first. */
  listSnapshots(): Promise<SnapshotRecord[]>;
  /** Queries in snapshot order; `from` inclusive, `to` exclusive (positions). */
  snapshotQueries(snapshotId: string, from?: number, to?: number): Promise<Query[]>;
  /** Rejects when the query is not in the snapshot. */
  snapshotQuery(snapshotId: string, queryId: string): Promise<Query>;

  // ---- runs --------------------------------------------------------------------------------------
  /** Idempotent: a retried activity finds the run already there (and the first record kept). */
  createRun(run: NewRun): Promise<void>;
  finishRun(
    runId: string,
    status: RunRecord['status'],
    reportPath: string | null,
    summary: unknown,
    finishedAt: string,
  ): Promise<void>;
  getRun(runId: string): Promise<RunRecord | null>;
  /**
   * `judgeflow resume --config`: the run's endpoint settings replaced (the caller checks that only those change), with
   * what its record says of its judging (model, endpoint). Everything else of the record is kept.
   */
  replaceRunConfig(runId: string, config: unknown, judge: RunRecord['judge']): Promise<void>;
  /** Newest first (by start time, then run id). */
  listRuns(): Promise<RunRecord[]>;

  // ---- rubrics (keyed by version, a content hash) ------------------------------------------------
  putRubric(version: string, protocol: string, content: unknown): Promise<void>;
  getRubric(version: string): Promise<{ protocol: string; content: unknown } | null>;

  // ---- responses -----------------------------------------------------------------------------------
  /** First write wins: a collect activity retried after it already stored its answer keeps the stored one. */
  putResponse(response: StoredResponse): Promise<void>;
  /** Many responses in one transaction (an import of answers held in files), all or none; each first-write-wins. */
  putResponses(responses: StoredResponse[]): Promise<void>;
  /** `payloads: false` as for `responses`: `raw` and `html` come back null (what a judge reads). */
  getResponse(
    runId: string,
    queryId: string,
    copilot: string,
    opts?: { payloads?: boolean },
  ): Promise<StoredResponse | null>;
  /**
   * Ordered by query id, then copilot. `payloads: false` leaves out what reports never read, the raw provider payload
   * and a browser copilot's page (`raw`, `html` come back null): a large run's report then holds only the answers.
   */
  responses(runId: string, opts?: { payloads?: boolean }): Promise<StoredResponse[]>;
  /**
   * Which answers of these copilots the run holds and how they ended, without their texts (what an import stored
   * already; what the planner decides a query's readiness by). `queryIds`: only those queries' answers.
   */
  responseStatuses(
    runId: string,
    copilots: string[],
    queryIds?: string[],
  ): Promise<Array<Pick<StoredResponse, 'queryId' | 'copilot' | 'status'>>>;
  /** Re-judging reuses another run's responses: copied rows, zero copilot calls. Returns how many were copied. */
  adoptResponses(fromRunId: string, toRunId: string): Promise<number>;
  /**
   * `judgeflow retry --failed`: remove these recorded failures (with an agent answer's steps, and the verdicts and judge
   * turns that depended on them),
   * and mark the run running again, atomically, so the run's next execution asks exactly these again (core/model/retryFailed.ts).
   */
  reopenItems(runId: string, items: ReopenedItems): Promise<void>;

  // ---- judging -------------------------------------------------------------------------------------
  /** The units and the plan they came from (e.g. the presentation design), written together: never units without their plan. */
  putJudgeUnits(runId: string, units: JudgeUnit[], plan?: unknown): Promise<void>;
  /**
   * Runs that judge while they collect: add the units not stored yet (same query and copilots in the same order) after
   * the run's existing units, atomically; returns how many units the run now has. Units already stored keep their place.
   */
  appendJudgeUnits(runId: string, units: JudgeUnit[]): Promise<number>;
  /** This store's persistent random identity (made on first use); the default task queue is derived from it. */
  storeId(): Promise<string>;
  /** What putJudgeUnits stored as the plan; undefined when there is none. */
  runPlan(runId: string): Promise<unknown>;
  /** Units in plan order; `from` inclusive, `to` exclusive. */
  judgeUnits(runId: string, from?: number, to?: number): Promise<JudgeUnit[]>;
  putJudgment(judgment: StoredJudgment): Promise<void>;
  /** Every verdict of one judge unit (e.g. one shared conversation), all or none; each first-write-wins. */
  putJudgments(judgments: StoredJudgment[]): Promise<void>;
  /** The verdict of one slot (default: sample 0 of the single judge). Rows read back always carry `sample` and `judgeName`. */
  getJudgment(
    runId: string,
    queryId: string,
    copilot: string,
    rubricVersion: string,
    slot?: JudgeSlot,
  ): Promise<StoredJudgment | null>;
  /**
   * Every sample of every judge; ordered by query id, copilot, judge name, sample; only one rubric version's when given.
   * `rationales: false`: each row's rationales are not read (null), for a report whose figures do not read them; its
   * drill-down reads them a page of queries at a time (judgmentRationales, issue 35).
   */
  judgments(runId: string, rubricVersion?: string, opts?: { rationales?: boolean }): Promise<StoredJudgment[]>;
  /** The rationales of every verdict (each sample of each judge) of these queries under one rubric version, in no order. */
  judgmentRationales(runId: string, rubricVersion: string, queryIds: string[]): Promise<VerdictRationales[]>;
  /** Turns of a shared judge conversation (one per slot), so a crashed conversation resumes where it stopped. First write wins. */
  putJudgeTurn(
    runId: string,
    queryId: string,
    rubricVersion: string,
    turn: number,
    request: unknown,
    answer: string,
    slot?: JudgeSlot,
  ): Promise<void>;
  /** Ordered by turn number. */
  judgeTurns(runId: string, queryId: string, rubricVersion: string, slot?: JudgeSlot): Promise<StoredJudgeTurn[]>;

  // ---- grounding checks (one per response, grounding rubric version and judge, with every claim) ----------------
  /** The check and its claims together, first write wins: a retried check keeps what the first attempt stored. */
  putGroundingCheck(check: StoredGroundingCheck): Promise<void>;
  getGroundingCheck(
    runId: string,
    queryId: string,
    copilot: string,
    groundingVersion: string,
    judgeName?: string,
  ): Promise<StoredGroundingCheck | null>;
  /** Ordered by query id, copilot, judge name; claims in their order; only one grounding version's when given. */
  groundingChecks(runId: string, groundingVersion?: string): Promise<StoredGroundingCheck[]>;

  // ---- batch judging (activities/judgeBatch.ts): batches sent to a provider's Batch API and their lines ----------
  /**
   * A batch and its lines (status `submitted`), first write wins: a retried submit keeps the first record. A line still
   * waiting in an earlier batch (one a resumed run lost track of) moves to this one; a settled line stays as it is.
   */
  putJudgeBatch(
    batch: StoredJudgeBatch,
    lines: Array<Pick<StoredBatchLine, 'customId' | 'queryId' | 'callName'>>,
  ): Promise<void>;
  /** The provider's id, state and counts as last seen. */
  updateJudgeBatch(
    runId: string,
    key: string,
    update: Pick<StoredJudgeBatch, 'batchId' | 'state' | 'counts'>,
  ): Promise<void>;
  /** Ordered by creation, then key. */
  judgeBatches(runId: string): Promise<StoredJudgeBatch[]>;
  batchLine(runId: string, customId: string): Promise<StoredBatchLine | null>;
  /** The lines of one batch, by custom_id. */
  batchLines(runId: string, batchKey: string): Promise<StoredBatchLine[]>;
  /**
   * Results of lines still `submitted`, each stored with its call record in one step: a line already settled is left
   * as it is and its call not recorded again, so an ingest retried after a crash counts nothing twice. Returns how many
   * lines it settled.
   */
  settleBatchLines(
    runId: string,
    lines: Array<{
      customId: string;
      status: Exclude<StoredBatchLine['status'], 'submitted'>;
      body: Record<string, unknown> | null;
      error: string | null;
      call: LlmCallRecord | null;
    }>,
  ): Promise<number>;

  // ---- answer cache (keyed by the full judge request, so an unchanged rubric and judge never pay twice) ----
  cachedAnswer(key: string): Promise<string | null>;
  cacheAnswer(key: string, answer: string): Promise<void>;

  // ---- cost: every LLM request sent (a retried attempt really was sent, and really cost, so not idempotent by design) ----
  putLlmCall(call: LlmCallRecord): Promise<void>;
  /** Ordered by time. */
  llmCalls(runId: string): Promise<LlmCallRecord[]>;
  /**
   * The run's calls recorded after `cursor` (0: from the first), in the order they were recorded (not by `at`), at most
   * `limit`, and the cursor to pass next: a running total reads each call once (the budget watch's looks).
   */
  llmCallsAfter(runId: string, cursor: number, limit?: number): Promise<{ calls: LlmCallRecord[]; cursor: number }>;

  // ---- pacing shared by every worker of a run (not copied: it is only about calls being sent now) ----
  /**
   * Claim the next send time of a paced endpoint of a run (times in ms since the epoch): the later of `earliest` and
   * the run's next free slot for that endpoint, which then moves `spacingMs` past the slot claimed. Atomic across
   * connections, so workers that pick up late calls at the same moment get slots `spacingMs` apart, not one burst.
   */
  claimSendSlot(runId: string, endpoint: string, earliest: number, spacingMs: number): Promise<number>;
  /**
   * Note that run `runId` is making calls at Temporal priority `priorityKey` (1 first … 5 last) at `at` (ms since the
   * epoch), and return the highest priority (the lowest key) of every run noted within `withinMs` before `at`, this
   * one included: what its workers yield to (activities/priorityGate.ts).
   */
  notePriority(runId: string, priorityKey: number, at: number, withinMs: number): Promise<number>;

  // ---- snapshot jobs: intermediate results of generation/curation, first write wins ---------------
  putWork(jobId: string, key: string, value: unknown): Promise<void>;
  getWork<T>(jobId: string, key: string): Promise<T | null>;

  // ---- artefacts (failure screenshots): bytes in the store, first write wins per run and name ---------
  /** Returns the artefact's id (the same for the same run and name, whether this call stored it or an earlier one did). */
  putArtefact(artefact: NewArtefact): Promise<string>;
  getArtefact(artefactId: string): Promise<Artefact | null>;
  /** A run's artefacts without their bytes, ordered by name. */
  artefacts(runId: string): Promise<ArtefactInfo[]>;

  // ---- agent trajectories (issue 34): each model turn and tool call as it completes; first write wins per seq ------
  putAgentStep(step: StoredAgentStep): Promise<void>;
  /** One item's steps, ordered by seq. */
  agentSteps(runId: string, queryId: string, copilot: string): Promise<StoredAgentStep[]>;
  /** Every step of a run (all items and copilots), ordered by query, copilot and seq. */
  runAgentSteps(runId: string): Promise<StoredAgentStep[]>;

  // ---- world recordings: tool results a run recorded, keyed by the call's canonical key; first write wins ------
  putWorldCalls(recording: string, calls: WorldCall[]): Promise<void>;
  /** A recording's calls, ordered by key; with `key`, only that call (none or one: a tool call asks for its own). */
  worldCalls(recording: string, key?: string): Promise<WorldCall[]>;
  /** Every recording, oldest first. */
  worldRecordings(): Promise<WorldRecording[]>;

  // ---- scheduled refresh lineage -------------------------------------------------------------------
  /** Idempotent per (schedule, workflowId). */
  recordScheduleSnapshot(row: ScheduleSnapshotRow): Promise<void>;
  setScheduleRun(schedule: string, workflowId: string, runId: string): Promise<void>;
  /** Snapshots a schedule made, newest first. */
  scheduleSnapshots(schedule: string): Promise<ScheduleSnapshotRow[]>;
}

/** One batch of judge requests sent to a provider's Batch API (activities/judgeBatch.ts). */
export interface StoredJudgeBatch {
  runId: string;
  /** The run's own name for it (its judge and round, e.g. `judge/3`): known before the provider gives an id. */
  key: string;
  /** The provider's batch id; null until it is created. */
  batchId: string | null;
  api: 'openai' | 'anthropic';
  /** Where it was sent (no secret: the key's variable name). */
  endpoint: { baseURL: string; apiKeyEnv?: string; provider?: string; timeoutMs: number; model: string };
  /** The provider's state as last seen (core/providers/batch: validating, in_progress, completed, expired…). */
  state: string;
  counts: { total: number; succeeded: number; failed: number; pending: number };
  lines: number;
  createdAt: string;
}

/** One request of a judge batch, by its custom_id, and what came back for it. */
export interface StoredBatchLine {
  customId: string;
  batchKey: string;
  /** Whose call it is, for its cost record once answered. */
  queryId: string;
  callName: string;
  status: 'submitted' | 'ok' | 'errored' | 'expired' | 'canceled';
  /** The result line's reply body (a chat completion, or an Anthropic Message), when ok. */
  body: Record<string, unknown> | null;
  /** The provider's words, when not ok. */
  error: string | null;
}
