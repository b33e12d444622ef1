import type { StoredAgentStep, WorldCall, WorldRecording } from '../core/model/agentSteps';
import type {
  Artefact,
  ArtefactInfo,
  ResultsStore,
  RunRecord,
  ScheduleSnapshotRow,
  SnapshotRecord,
  StoreRecord,
  StudyDump,
  StoredJudgeBatch,
  StoredBatchLine,
  VerdictRationales,
} from '../core/model/store';
import type { Annotator, StoredAssignment, StudyRecord, StudyStore, Submission } from '../core/study/types';
import type { LlmCallRecord, StoredJudgment, StoredResponse } from '../core/model/types';
import type { StoredGroundingCheck } from '../core/grounding/checks';

/**
 * What both store implementations share: rows (snake_case columns, JSON as text) to domain records, and the export of
 * every record for `store copy`. The tables are the same in both; only the SQL dialect differs.
 */

/** Rows per batch when exporting (bounds memory when copying a large store). */
export const EXPORT_PAGE = 500;

export const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
export const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

export function toSnapshot(row: any): SnapshotRecord {
  return {
    snapshotId: row.snapshot_id,
    createdAt: row.created_at,
    parentId: row.parent_id,
    meta: JSON.parse(row.meta),
    queryCount: row.query_count,
  };
}

export function toRun(row: any): RunRecord {
  return {
    runId: row.run_id,
    protocol: row.protocol,
    snapshotId: row.snapshot_id,
    rubricVersion: row.rubric_version,
    judge: JSON.parse(row.judge),
    copilots: JSON.parse(row.copilots),
    status: row.status,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    reportPath: row.report_path,
    sourceRunId: row.source_run_id,
    summary: parse(row.summary),
    config: JSON.parse(row.config),
  };
}

/** The responses table's columns but the payloads (`raw`, `html`): ResultsStore.responses with `payloads: false`. */
export const RESPONSE_COLUMNS_WITHOUT_PAYLOADS =
  'run_id, query_id, copilot, status, text, NULL AS raw, NULL AS html, adapter, started_at, finished_at, latency_ms, ' +
  'error_kind, error_message, conversation_id, context, sources';

export function toResponse(row: any): StoredResponse {
  return {
    runId: row.run_id,
    queryId: row.query_id,
    copilot: row.copilot,
    status: row.status,
    text: row.text,
    raw: row.raw,
    html: row.html,
    adapter: row.adapter,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    latencyMs: row.latency_ms,
    errorKind: row.error_kind,
    errorMessage: row.error_message,
    conversationId: row.conversation_id,
    context: row.context,
    // Only when there are some: a response without sources reads back exactly as it was written.
    ...(row.sources ? { sources: JSON.parse(row.sources) } : {}),
  };
}

/** A grounding check row and its claim rows (in index order) as one record. */
export function toGroundingCheck(row: any, claims: any[]): StoredGroundingCheck {
  return {
    runId: row.run_id,
    queryId: row.query_id,
    copilot: row.copilot,
    groundingVersion: row.grounding_version,
    judgeName: row.judge_name,
    status: row.status,
    label: row.label,
    error: row.error,
    judge: JSON.parse(row.judge),
    attempts: row.attempts,
    createdAt: row.created_at,
    // Only when the judge was asked: a check stored before reads back as it was written.
    ...(row.stated ? { stated: JSON.parse(row.stated) } : {}),
    claims: claims.map((c) => ({
      index: c.idx,
      text: c.text,
      status: c.status,
      excerpt: c.excerpt,
      entity: c.entity,
      metric: c.metric,
      value: c.value === null ? null : Number(c.value),
      unit: c.unit,
      citation: c.citation === null ? null : { source: c.cited_source, verdict: c.citation },
    })),
  };
}

/** Checks and their claims, both ordered by key (claims by index within a check), joined. */
export function groupClaims(checks: any[], claims: any[]): StoredGroundingCheck[] {
  const key = (r: any) => [r.query_id, r.copilot, r.grounding_version, r.judge_name].join('\u0000');
  const byCheck = new Map<string, any[]>();
  for (const c of claims) byCheck.set(key(c), [...(byCheck.get(key(c)) ?? []), c]);
  return checks.map((row) => toGroundingCheck(row, byCheck.get(key(row)) ?? []));
}

/** The claim rows of a check, as both stores insert them (columns in table order). */
export function groundingClaimRows(g: StoredGroundingCheck): unknown[][] {
  return g.claims.map((c) => [
    g.runId,
    g.queryId,
    g.copilot,
    g.groundingVersion,
    g.judgeName,
    c.index,
    c.text,
    c.status,
    c.excerpt,
    c.entity,
    c.metric,
    c.value,
    c.unit,
    c.citation?.source ?? null,
    c.citation?.verdict ?? null,
  ]);
}

/** The check row, as both stores insert it (columns in table order). */
export function groundingCheckRow(g: StoredGroundingCheck): unknown[] {
  return [
    g.runId,
    g.queryId,
    g.copilot,
    g.groundingVersion,
    g.judgeName,
    g.status,
    g.label,
    g.error,
    JSON.stringify(g.judge),
    g.attempts,
    g.createdAt,
    g.stated ? JSON.stringify(g.stated) : null,
  ];
}

/**
 * A run's rows as records, for reads of a whole run (reports): the values most rows repeat (the run id, copilot,
 * status, rubric version, judge stamp) are held once and shared instead of once per row, which is most of a large
 * run's judgments in memory besides their rationales. The records are read-only; nothing changes a shared stamp.
 */
export function sharingRepeats<R>(rows: any[], toRecord: (row: any, stamp: (json: string) => any) => R): R[] {
  const stamps = new Map<string, unknown>();
  const stamp = (json: string) => {
    let parsed = stamps.get(json);
    if (parsed === undefined) stamps.set(json, (parsed = JSON.parse(json)));
    return parsed;
  };
  const held = new Map<string, string>();
  const once = (value: unknown) => {
    if (typeof value !== 'string' || value.length > 64) return value;
    const same = held.get(value);
    if (same !== undefined) return same;
    held.set(value, value);
    return value;
  };
  return rows.map((row) => {
    for (const column of REPEATED_COLUMNS) if (column in row) row[column] = once(row[column]);
    return toRecord(row, stamp);
  });
}

/** Columns whose values repeat across a run's rows (see sharingRepeats). */
const REPEATED_COLUMNS = ['run_id', 'copilot', 'status', 'rubric_version', 'judge_name', 'adapter', 'error_kind'];

/** Every column of a judgment row but its rationales (read apart, a page at a time: judgmentRationales). */
export const JUDGMENT_COLUMNS_BUT_RATIONALES =
  'run_id, query_id, copilot, rubric_version, status, scores, total, rank, position, error, judge, attempts, created_at, sample, judge_name';

export function toVerdictRationales(row: any): VerdictRationales {
  return {
    queryId: row.query_id,
    copilot: row.copilot,
    sample: row.sample,
    judgeName: row.judge_name,
    rationales: parse(row.rationales),
  };
}

export function toJudgment(row: any, stamp: (json: string) => any = JSON.parse): StoredJudgment {
  return {
    runId: row.run_id,
    queryId: row.query_id,
    copilot: row.copilot,
    rubricVersion: row.rubric_version,
    status: row.status,
    scores: parse(row.scores),
    rationales: parse(row.rationales ?? null),
    total: row.total,
    rank: row.rank,
    position: row.position,
    error: row.error,
    judge: stamp(row.judge),
    attempts: row.attempts,
    createdAt: row.created_at,
    sample: row.sample,
    judgeName: row.judge_name,
  };
}

export function toScheduleSnapshot(r: any): ScheduleSnapshotRow {
  return {
    schedule: r.schedule,
    workflowId: r.workflow_id,
    snapshotId: r.snapshot_id,
    parentId: r.parent_id,
    createdAt: r.created_at,
    runId: r.run_id,
  };
}

export function toLlmCall(r: any): LlmCallRecord {
  return {
    runId: r.run_id,
    role: r.role,
    name: r.name,
    model: r.model,
    queryId: r.query_id,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    cachedTokens: r.cached_tokens,
    latencyMs: r.latency_ms,
    ok: Boolean(r.ok), // SQLite keeps 0/1, PostgreSQL a boolean
    errorKind: r.error_kind,
    at: r.at,
    ...(r.via_batch ? { batch: true } : {}),
    ...(r.reused ? { reused: true } : {}),
    // Calls recorded before migration 7 have no sizes.
    ...(r.request_chars !== null && r.request_chars !== undefined ? { requestChars: r.request_chars } : {}),
    ...(r.reply_chars !== null && r.reply_chars !== undefined ? { replyChars: r.reply_chars } : {}),
  };
}

export function toJudgeBatch(r: any): StoredJudgeBatch {
  return {
    runId: r.run_id,
    key: r.key,
    batchId: r.batch_id,
    api: r.api,
    endpoint: JSON.parse(r.endpoint),
    state: r.state,
    counts: JSON.parse(r.counts),
    lines: r.lines,
    createdAt: r.created_at,
  };
}

export function toBatchLine(r: any): StoredBatchLine {
  return {
    customId: r.custom_id,
    batchKey: r.batch_key,
    queryId: r.query_id,
    callName: r.call_name,
    status: r.status,
    body: r.body === null ? null : JSON.parse(r.body),
    error: r.error,
  };
}

/** Columns of `artefacts` without the bytes, with their size. */
export const ARTEFACT_INFO_COLUMNS = 'artefact_id, run_id, name, content_type, created_at';

export function toArtefactInfo(r: any): ArtefactInfo {
  return {
    artefactId: r.artefact_id,
    runId: r.run_id,
    name: r.name,
    contentType: r.content_type,
    size: Number(r.size),
    createdAt: r.created_at,
  };
}

export const toArtefact = (r: any): Artefact => ({
  ...toArtefactInfo({ ...r, size: r.bytes.length }),
  bytes: Buffer.from(r.bytes),
});

export const toStudy = (r: any): StudyRecord => ({
  name: r.name,
  runId: r.run_id,
  status: r.status,
  createdAt: r.created_at,
  closedAt: r.closed_at,
  workflowId: r.workflow_id,
  spec: JSON.parse(r.spec),
});
export const toAssignment = (r: any): StoredAssignment => ({
  assignmentId: r.assignment_id,
  study: r.study,
  itemId: r.item_id,
  slot: r.slot,
  left: r.left_copilot,
  right: r.right_copilot,
  annotatorId: r.annotator_id,
  order: r.ord,
});
export const toSubmission = (r: any): Submission => ({
  seq: r.seq,
  submissionId: r.submission_id,
  study: r.study,
  assignmentId: r.assignment_id,
  annotatorId: r.annotator_id,
  answer: JSON.parse(r.answer),
  receivedAt: r.received_at,
  status: r.status,
  note: r.note,
});
export const toAnnotator = (r: any): Annotator => ({
  annotatorId: r.annotator_id,
  study: r.study,
  label: r.label,
  source: r.source,
});

/**
 * A whole study for copying: what the study interface reads, plus rows only the implementation can list, each in the
 * order they were inserted (assignments and annotators with their raw columns; annotations joined to their submission's id).
 */
export async function studyDump(
  studies: StudyStore,
  name: string,
  rows: { assignments: any[]; annotators: any[]; annotations: any[] },
): Promise<StudyDump> {
  const study = await studies.getStudy(name);
  if (!study) throw new Error(`no study ${name}`);
  return {
    study,
    items: await studies.studyItems(name),
    assignments: rows.assignments.map(toAssignment),
    annotators: rows.annotators.map((r) => ({ ...toAnnotator(r), tokenHash: r.token_hash, createdAt: r.created_at })),
    submissions: await studies.submissions(name),
    annotations: rows.annotations.map((r) => ({
      assignmentId: r.assignment_id,
      submissionId: r.submission_id,
      answer: JSON.parse(r.answer),
      revision: r.revision,
      submittedAt: r.submitted_at,
      source: r.source,
    })),
    events: await studies.studyEvents(name),
  };
}

/** How an implementation reads its own tables for the export. */
export interface TableReader {
  /** The rows of `sql` (a SELECT ending in ORDER BY), EXPORT_PAGE at a time. */
  pages(sql: string): AsyncIterable<any[]>;
  /** The first column of every row of `sql`. */
  column(sql: string): Promise<string[]>;
  /** The column that orders rows as they were inserted (SQLite's rowid, an identity column in PostgreSQL). */
  insertionOrder: string;
  studyDump(name: string): Promise<StudyDump>;
}

/** Every record of a store, table by table, in batches of at most EXPORT_PAGE rows (a snapshot, a run's LLM calls and a study go whole). */
export async function* exportRecords(store: ResultsStore, read: TableReader): AsyncIterable<StoreRecord[]> {
  async function* mapped(sql: string, toRecord: (row: any) => StoreRecord): AsyncIterable<StoreRecord[]> {
    for await (const rows of read.pages(sql)) yield rows.map(toRecord);
  }
  for (const snapshot of await store.listSnapshots())
    yield [{ kind: 'snapshot', snapshot, queries: await store.snapshotQueries(snapshot.snapshotId) }];
  yield* mapped('SELECT * FROM rubrics ORDER BY rubric_version', (r) => ({
    kind: 'rubric',
    version: r.rubric_version,
    protocol: r.protocol,
    content: JSON.parse(r.content),
    storedAt: r.stored_at,
  }));
  yield* mapped('SELECT * FROM responses ORDER BY run_id, query_id, copilot', (r) => ({
    kind: 'response',
    response: toResponse(r),
  }));
  const planned = new Set([
    ...(await read.column('SELECT DISTINCT run_id FROM judge_units')),
    ...(await read.column("SELECT key FROM kv WHERE key LIKE 'plan:%'")).map((k) => k.slice('plan:'.length)),
  ]);
  for (const runId of [...planned].sort())
    yield [{ kind: 'judgeUnits', runId, units: await store.judgeUnits(runId), plan: await store.runPlan(runId) }];
  yield* mapped(
    'SELECT * FROM judgments ORDER BY run_id, query_id, copilot, rubric_version, sample, judge_name',
    (r) => ({ kind: 'judgment', judgment: toJudgment(r) }),
  );
  yield* mapped(
    'SELECT * FROM judge_turns ORDER BY run_id, query_id, rubric_version, sample, judge_name, turn',
    (r) => ({
      kind: 'judgeTurn',
      runId: r.run_id,
      queryId: r.query_id,
      rubricVersion: r.rubric_version,
      slot: { sample: r.sample, judge: r.judge_name },
      turn: r.turn,
      request: JSON.parse(r.request),
      answer: r.answer,
    }),
  );
  for (const runId of await read.column('SELECT DISTINCT run_id FROM llm_calls ORDER BY run_id'))
    yield [{ kind: 'llmCalls', runId, calls: await store.llmCalls(runId) }];
  yield* mapped('SELECT * FROM judge_cache ORDER BY cache_key', (r) => ({
    kind: 'cachedAnswer',
    key: r.cache_key,
    answer: r.answer,
    createdAt: r.created_at,
  }));
  yield* mapped('SELECT * FROM snapshot_work ORDER BY job_id, key', (r) => ({
    kind: 'work',
    jobId: r.job_id,
    key: r.key,
    value: JSON.parse(r.value),
  }));
  yield* mapped(`SELECT * FROM schedule_snapshots ORDER BY ${read.insertionOrder}`, (r) => ({
    kind: 'scheduleSnapshot',
    row: toScheduleSnapshot(r),
  }));
  for (const runId of await read.column('SELECT DISTINCT run_id FROM grounding_checks ORDER BY run_id'))
    yield (await store.groundingChecks(runId)).map((check): StoreRecord => ({ kind: 'groundingCheck', check }));
  yield* mapped('SELECT * FROM agent_steps ORDER BY run_id, query_id, copilot, seq', (r) => ({
    kind: 'agentStep',
    step: toAgentStep(r),
  }));
  yield* mapped('SELECT * FROM world_calls ORDER BY recording, key', (r) => ({
    kind: 'worldCall',
    recording: r.recording,
    call: toWorldCall(r),
  }));
  // One artefact per batch: their bytes may be megabytes each.
  for (const id of await read.column('SELECT artefact_id FROM artefacts ORDER BY artefact_id'))
    yield [{ kind: 'artefact', artefact: (await store.getArtefact(id))! }];
  // Run records after everything a run needs (responses, units, judgments, calls, artefacts): a copy interrupted before
  // the end leaves no run in the target that lists as completed with nothing behind it; run again, it completes.
  yield* mapped('SELECT * FROM runs ORDER BY run_id', (r) => ({ kind: 'run', run: toRun(r) }));
  for (const name of await read.column('SELECT name FROM studies ORDER BY name'))
    yield [{ kind: 'study', dump: await read.studyDump(name) }];
}

/** An agent_steps row as the domain type. */
export function toAgentStep(row: any): StoredAgentStep {
  return { runId: row.run_id, queryId: row.query_id, copilot: row.copilot, step: JSON.parse(row.step) };
}

/** A world_calls row as the domain type (is_error is 0/1 in SQLite, a boolean in PostgreSQL). */
export function toWorldCall(row: any): WorldCall {
  return {
    key: row.key,
    tool: row.tool,
    arguments: row.arguments,
    result: row.result,
    isError: Boolean(row.is_error),
    recordedAt: row.recorded_at,
  };
}

/** A grouped world_calls query's row as a recording summary. */
export function toWorldRecording(row: any): WorldRecording {
  return { recording: row.recording, calls: Number(row.calls), firstAt: row.first_at, lastAt: row.last_at };
}
