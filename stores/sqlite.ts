import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FIRST_SLOT, type JudgeSlot, type JudgeUnit, type NewRun, type ResultsStore, type RunRecord, type ScheduleSnapshotRow, type SnapshotRecord, type StoredJudgeTurn } from '../core/store';
import type { StudyStore } from '../core/study/types';
import type { LlmCallRecord, Query, StoredJudgment, StoredResponse } from '../core/types';
import { SqliteStudyStore } from './sqliteStudies';

/**
 * The results store in one SQLite file (WAL mode, so several worker processes on one machine can share it).
 * better-sqlite3 is synchronous; the methods are async only to meet the ResultsStore contract.
 * Owner-only: the directory is created 0700 and the file (with its -wal/-shm, which SQLite creates with the
 * database file's mode) is 0600, since it holds copilot answers and raw payloads.
 */

/** Judgments and judge turns are keyed by sample and panel judge too (rows from before that are sample 0 of judge ''). */
const JUDGMENT_COLUMNS =
  "run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, rubric_version TEXT NOT NULL, status TEXT NOT NULL, scores TEXT, rationales TEXT, total REAL, rank INTEGER, position INTEGER, error TEXT, judge TEXT NOT NULL, attempts INTEGER NOT NULL, created_at TEXT NOT NULL, sample INTEGER NOT NULL DEFAULT 0, judge_name TEXT NOT NULL DEFAULT '', PRIMARY KEY (run_id, query_id, copilot, rubric_version, sample, judge_name)";
const JUDGE_TURN_COLUMNS =
  "run_id TEXT NOT NULL, query_id TEXT NOT NULL, rubric_version TEXT NOT NULL, turn INTEGER NOT NULL, request TEXT NOT NULL, answer TEXT NOT NULL, sample INTEGER NOT NULL DEFAULT 0, judge_name TEXT NOT NULL DEFAULT '', PRIMARY KEY (run_id, query_id, rubric_version, sample, judge_name, turn)";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (snapshot_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, parent_id TEXT, meta TEXT NOT NULL, query_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_queries (snapshot_id TEXT NOT NULL, idx INTEGER NOT NULL, query_id TEXT NOT NULL, query TEXT NOT NULL, PRIMARY KEY (snapshot_id, idx));
CREATE UNIQUE INDEX IF NOT EXISTS snapshot_query_ids ON snapshot_queries (snapshot_id, query_id);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, protocol TEXT NOT NULL, snapshot_id TEXT NOT NULL, rubric_version TEXT NOT NULL, judge TEXT NOT NULL, copilots TEXT NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, report_path TEXT, source_run_id TEXT, summary TEXT, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rubrics (rubric_version TEXT PRIMARY KEY, protocol TEXT NOT NULL, content TEXT NOT NULL, stored_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, status TEXT NOT NULL, text TEXT, raw TEXT, html TEXT, adapter TEXT NOT NULL, started_at TEXT, finished_at TEXT, latency_ms REAL, error_kind TEXT, error_message TEXT, conversation_id TEXT, context TEXT, PRIMARY KEY (run_id, query_id, copilot));
CREATE TABLE IF NOT EXISTS judge_units (run_id TEXT NOT NULL, idx INTEGER NOT NULL, unit TEXT NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS judgments (${JUDGMENT_COLUMNS});
CREATE TABLE IF NOT EXISTS judge_turns (${JUDGE_TURN_COLUMNS});
CREATE TABLE IF NOT EXISTS judge_cache (cache_key TEXT PRIMARY KEY, answer TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS llm_calls (run_id TEXT NOT NULL, role TEXT NOT NULL, name TEXT NOT NULL, model TEXT, query_id TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, latency_ms REAL NOT NULL, ok INTEGER NOT NULL, error_kind TEXT, at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls (run_id);
CREATE TABLE IF NOT EXISTS snapshot_work (job_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (job_id, key));
CREATE TABLE IF NOT EXISTS schedule_snapshots (schedule TEXT NOT NULL, workflow_id TEXT NOT NULL, snapshot_id TEXT NOT NULL, parent_id TEXT, created_at TEXT NOT NULL, run_id TEXT, PRIMARY KEY (schedule, workflow_id));
`;

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

/** Create the directory owner-only and the database file 0600 before SQLite opens it. */
function prepareFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(f, 0o600); // a store made by an older version, or under a lax umask
    } catch (error) {
      // Missing (no WAL yet), or someone else's shared file: leave it as it is.
      if (!['ENOENT', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  }
}

export class SqliteStore implements ResultsStore {
  private readonly db: Database.Database;
  readonly studies: StudyStore;

  constructor(readonly location: string) {
    prepareFile(location);
    this.db = new Database(location);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 10000'); // several worker processes may share one file
    this.db.exec(SCHEMA);
    addJudgeSlotColumns(this.db);
    this.studies = new SqliteStudyStore(this.db);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  // ---- snapshots -------------------------------------------------------------
  async putSnapshot(s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): Promise<void> {
    const insertQuery = this.db.prepare('INSERT OR IGNORE INTO snapshot_queries VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      const added = this.db
        .prepare('INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?, ?)')
        .run(s.snapshotId, s.createdAt, s.parentId, JSON.stringify(s.meta), queries.length).changes;
      if (added) queries.forEach((q, i) => insertQuery.run(s.snapshotId, i, q.id, JSON.stringify(q)));
    })();
  }

  async getSnapshot(snapshotId: string): Promise<SnapshotRecord | null> {
    const row = this.db.prepare('SELECT * FROM snapshots WHERE snapshot_id = ?').get(snapshotId) as any;
    return row ? toSnapshot(row) : null;
  }

  async snapshotIdsStartingWith(prefix: string): Promise<string[]> {
    return (
      this.db.prepare('SELECT snapshot_id FROM snapshots WHERE substr(snapshot_id, 1, ?) = ? ORDER BY snapshot_id').all(prefix.length, prefix) as Array<{ snapshot_id: string }>
    ).map((r) => r.snapshot_id);
  }

  async listSnapshots(): Promise<SnapshotRecord[]> {
    return (this.db.prepare('SELECT * FROM snapshots ORDER BY created_at DESC').all() as any[]).map(toSnapshot);
  }

  async snapshotQueries(snapshotId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<Query[]> {
    return (
      this.db
        .prepare('SELECT query FROM snapshot_queries WHERE snapshot_id = ? AND idx >= ? AND idx < ? ORDER BY idx')
        .all(snapshotId, from, to) as Array<{ query: string }>
    ).map((r) => JSON.parse(r.query) as Query);
  }

  async snapshotQuery(snapshotId: string, queryId: string): Promise<Query> {
    const row = this.db.prepare('SELECT query FROM snapshot_queries WHERE snapshot_id = ? AND query_id = ?').get(snapshotId, queryId) as
      | { query: string }
      | undefined;
    if (!row) throw new Error(`query ${queryId} is not in snapshot ${snapshotId}`);
    return JSON.parse(row.query) as Query;
  }

  // ---- runs -------------------------------------------------------------------
  async createRun(r: NewRun): Promise<void> {
    this.db
      .prepare('INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, ?)')
      .run(r.runId, r.protocol, r.snapshotId, r.rubricVersion, JSON.stringify(r.judge), JSON.stringify(r.copilots), 'running', r.startedAt, r.sourceRunId, JSON.stringify(r.config));
  }

  async finishRun(runId: string, status: RunRecord['status'], reportPath: string | null, summary: unknown, finishedAt: string): Promise<void> {
    this.db.prepare('UPDATE runs SET status = ?, report_path = ?, summary = ?, finished_at = ? WHERE run_id = ?').run(status, reportPath, json(summary), finishedAt, runId);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const row = this.db.prepare('SELECT * FROM runs WHERE run_id = ?').get(runId) as any;
    return row ? toRun(row) : null;
  }

  async listRuns(): Promise<RunRecord[]> {
    return (this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC, run_id DESC').all() as any[]).map(toRun);
  }

  // ---- rubrics ----------------------------------------------------------------
  async putRubric(version: string, protocol: string, content: unknown): Promise<void> {
    this.db.prepare('INSERT OR IGNORE INTO rubrics VALUES (?, ?, ?, ?)').run(version, protocol, JSON.stringify(content), new Date().toISOString());
  }

  async getRubric(version: string): Promise<{ protocol: string; content: unknown } | null> {
    const row = this.db.prepare('SELECT protocol, content FROM rubrics WHERE rubric_version = ?').get(version) as any;
    return row ? { protocol: row.protocol, content: JSON.parse(row.content) } : null;
  }

  // ---- responses --------------------------------------------------------------
  async putResponse(r: StoredResponse): Promise<void> {
    this.db
      .prepare('INSERT OR IGNORE INTO responses VALUES (@runId, @queryId, @copilot, @status, @text, @raw, @html, @adapter, @startedAt, @finishedAt, @latencyMs, @errorKind, @errorMessage, @conversationId, @context)')
      .run(r);
  }

  async getResponse(runId: string, queryId: string, copilot: string): Promise<StoredResponse | null> {
    const row = this.db.prepare('SELECT * FROM responses WHERE run_id = ? AND query_id = ? AND copilot = ?').get(runId, queryId, copilot) as any;
    return row ? toResponse(row) : null;
  }

  async responses(runId: string): Promise<StoredResponse[]> {
    return (this.db.prepare('SELECT * FROM responses WHERE run_id = ? ORDER BY query_id, copilot').all(runId) as any[]).map(toResponse);
  }

  async adoptResponses(fromRunId: string, toRunId: string): Promise<number> {
    return this.db
      .prepare(
        `INSERT OR IGNORE INTO responses SELECT ?, query_id, copilot, status, text, raw, html, adapter, started_at, finished_at, latency_ms, error_kind, error_message, conversation_id, context FROM responses WHERE run_id = ?`,
      )
      .run(toRunId, fromRunId).changes;
  }

  // ---- judging ----------------------------------------------------------------
  async putJudgeUnits(runId: string, units: JudgeUnit[], plan?: unknown): Promise<void> {
    const insert = this.db.prepare('INSERT OR IGNORE INTO judge_units VALUES (?, ?, ?)');
    this.db.transaction(() => {
      units.forEach((u, i) => insert.run(runId, i, JSON.stringify(u)));
      if (plan !== undefined) this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run(`plan:${runId}`, JSON.stringify(plan));
    })();
  }

  async storeId(): Promise<string> {
    this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run('store-id', crypto.randomBytes(16).toString('hex'));
    return (this.db.prepare('SELECT value FROM kv WHERE key = ?').get('store-id') as { value: string }).value;
  }

  async runPlan(runId: string): Promise<unknown> {
    const row = this.db.prepare('SELECT value FROM kv WHERE key = ?').get(`plan:${runId}`) as { value: string } | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  async judgeUnits(runId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<JudgeUnit[]> {
    return (
      this.db.prepare('SELECT unit FROM judge_units WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx').all(runId, from, to) as Array<{ unit: string }>
    ).map((r) => JSON.parse(r.unit) as JudgeUnit);
  }

  async putJudgment(j: StoredJudgment): Promise<void> {
    this.insertJudgment(j);
  }

  async putJudgments(judgments: StoredJudgment[]): Promise<void> {
    this.db.transaction(() => judgments.forEach((j) => this.insertJudgment(j)))();
  }

  private insertJudgment(j: StoredJudgment): void {
    this.db
      .prepare(
        'INSERT OR IGNORE INTO judgments VALUES (@runId, @queryId, @copilot, @rubricVersion, @status, @scores, @rationales, @total, @rank, @position, @error, @judge, @attempts, @createdAt, @sample, @judgeName)',
      )
      .run({ ...j, scores: json(j.scores), rationales: json(j.rationales), judge: JSON.stringify(j.judge), sample: j.sample ?? 0, judgeName: j.judgeName ?? '' });
  }

  async getJudgment(runId: string, queryId: string, copilot: string, rubricVersion: string, slot: JudgeSlot = FIRST_SLOT): Promise<StoredJudgment | null> {
    const row = this.db
      .prepare('SELECT * FROM judgments WHERE run_id = ? AND query_id = ? AND copilot = ? AND rubric_version = ? AND sample = ? AND judge_name = ?')
      .get(runId, queryId, copilot, rubricVersion, slot.sample, slot.judge) as any;
    return row ? toJudgment(row) : null;
  }

  async judgments(runId: string, rubricVersion?: string): Promise<StoredJudgment[]> {
    const order = 'ORDER BY query_id, copilot, judge_name, sample';
    const rows = rubricVersion
      ? this.db.prepare(`SELECT * FROM judgments WHERE run_id = ? AND rubric_version = ? ${order}`).all(runId, rubricVersion)
      : this.db.prepare(`SELECT * FROM judgments WHERE run_id = ? ${order}`).all(runId);
    return (rows as any[]).map(toJudgment);
  }

  async putJudgeTurn(runId: string, queryId: string, rubricVersion: string, turn: number, request: unknown, answer: string, slot: JudgeSlot = FIRST_SLOT): Promise<void> {
    this.db.prepare('INSERT OR IGNORE INTO judge_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(runId, queryId, rubricVersion, turn, JSON.stringify(request), answer, slot.sample, slot.judge);
  }

  async judgeTurns(runId: string, queryId: string, rubricVersion: string, slot: JudgeSlot = FIRST_SLOT): Promise<StoredJudgeTurn[]> {
    return (
      this.db
        .prepare('SELECT turn, request, answer FROM judge_turns WHERE run_id = ? AND query_id = ? AND rubric_version = ? AND sample = ? AND judge_name = ? ORDER BY turn')
        .all(runId, queryId, rubricVersion, slot.sample, slot.judge) as any[]
    ).map((r) => ({ turn: r.turn, request: JSON.parse(r.request), answer: r.answer }));
  }

  // ---- answer cache -----------------------------------------------------------
  async cachedAnswer(key: string): Promise<string | null> {
    const row = this.db.prepare('SELECT answer FROM judge_cache WHERE cache_key = ?').get(key) as { answer: string } | undefined;
    return row?.answer ?? null;
  }

  async cacheAnswer(key: string, answer: string): Promise<void> {
    this.db.prepare('INSERT OR IGNORE INTO judge_cache VALUES (?, ?, ?)').run(key, answer, new Date().toISOString());
  }

  // ---- cost ---------------------------------------------------------------------
  async putLlmCall(c: LlmCallRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO llm_calls VALUES (@runId, @role, @name, @model, @queryId, @promptTokens, @completionTokens, @cachedTokens, @latencyMs, @ok, @errorKind, @at)')
      .run({ ...c, ok: c.ok ? 1 : 0 });
  }

  async llmCalls(runId: string): Promise<LlmCallRecord[]> {
    return (this.db.prepare('SELECT * FROM llm_calls WHERE run_id = ? ORDER BY at').all(runId) as any[]).map((r) => ({
      runId: r.run_id,
      role: r.role,
      name: r.name,
      model: r.model,
      queryId: r.query_id,
      promptTokens: r.prompt_tokens,
      completionTokens: r.completion_tokens,
      cachedTokens: r.cached_tokens,
      latencyMs: r.latency_ms,
      ok: r.ok === 1,
      errorKind: r.error_kind,
      at: r.at,
    }));
  }

  // ---- snapshot jobs ----------------------------------------------------------
  async putWork(jobId: string, key: string, value: unknown): Promise<void> {
    this.db.prepare('INSERT OR IGNORE INTO snapshot_work VALUES (?, ?, ?)').run(jobId, key, JSON.stringify(value));
  }

  async getWork<T>(jobId: string, key: string): Promise<T | null> {
    const row = this.db.prepare('SELECT value FROM snapshot_work WHERE job_id = ? AND key = ?').get(jobId, key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : null;
  }

  // ---- scheduled refresh lineage ---------------------------------------------
  async recordScheduleSnapshot(row: ScheduleSnapshotRow): Promise<void> {
    this.db.prepare('INSERT OR IGNORE INTO schedule_snapshots VALUES (?, ?, ?, ?, ?, ?)').run(row.schedule, row.workflowId, row.snapshotId, row.parentId, row.createdAt, row.runId);
  }

  async setScheduleRun(schedule: string, workflowId: string, runId: string): Promise<void> {
    this.db.prepare('UPDATE schedule_snapshots SET run_id = ? WHERE schedule = ? AND workflow_id = ?').run(runId, schedule, workflowId);
  }

  async scheduleSnapshots(schedule: string): Promise<ScheduleSnapshotRow[]> {
    return (this.db.prepare('SELECT * FROM schedule_snapshots WHERE schedule = ? ORDER BY created_at DESC, rowid DESC').all(schedule) as any[]).map((r) => ({
      schedule: r.schedule,
      workflowId: r.workflow_id,
      snapshotId: r.snapshot_id,
      parentId: r.parent_id,
      createdAt: r.created_at,
      runId: r.run_id,
    }));
  }
}

function toSnapshot(row: any): SnapshotRecord {
  return { snapshotId: row.snapshot_id, createdAt: row.created_at, parentId: row.parent_id, meta: JSON.parse(row.meta), queryCount: row.query_count };
}

function toRun(row: any): RunRecord {
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

function toResponse(row: any): StoredResponse {
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
  };
}

function toJudgment(row: any): StoredJudgment {
  return {
    runId: row.run_id,
    queryId: row.query_id,
    copilot: row.copilot,
    rubricVersion: row.rubric_version,
    status: row.status,
    scores: parse(row.scores),
    rationales: parse(row.rationales),
    total: row.total,
    rank: row.rank,
    position: row.position,
    error: row.error,
    judge: JSON.parse(row.judge),
    attempts: row.attempts,
    createdAt: row.created_at,
    sample: row.sample,
    judgeName: row.judge_name,
  };
}

/**
 * Stores made before repeated judging and panels key judgments and judge turns without sample and judge name: rebuild
 * those two tables with the wider key, their rows becoming sample 0 of judge ''. One immediate transaction, re-checked
 * inside, so several processes opening an old store at once migrate it once.
 */
function addJudgeSlotColumns(db: Database.Database): void {
  const hasSample = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((c) => c.name === 'sample');
  if (hasSample('judgments') && hasSample('judge_turns')) return;
  db.transaction(() => {
    for (const [table, columns] of [
      ['judgments', JUDGMENT_COLUMNS],
      ['judge_turns', JUDGE_TURN_COLUMNS],
    ]) {
      if (hasSample(table)) continue;
      db.exec(`CREATE TABLE ${table}_slots (${columns}); INSERT INTO ${table}_slots SELECT *, 0, '' FROM ${table}; DROP TABLE ${table}; ALTER TABLE ${table}_slots RENAME TO ${table};`);
    }
  }).immediate();
}
