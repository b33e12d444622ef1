import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { judgeflowHome } from './home';
import { SqliteStudyStore } from './study/sqliteStudyStore';
import type { StudyStore } from './study/types';
import type { LlmCallRecord, Query, StoredJudgment, StoredResponse } from './types';

/**
 * The results store: everything large (queries, responses, rationales) lives here, never in workflow history.
 * Writes are idempotent, keyed by run, query, copilot (and rubric version for judgments), so an activity
 * retried after a crash never creates a second row.
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
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (snapshot_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, parent_id TEXT, meta TEXT NOT NULL, query_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_queries (snapshot_id TEXT NOT NULL, idx INTEGER NOT NULL, query_id TEXT NOT NULL, query TEXT NOT NULL, PRIMARY KEY (snapshot_id, idx));
CREATE UNIQUE INDEX IF NOT EXISTS snapshot_query_ids ON snapshot_queries (snapshot_id, query_id);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, protocol TEXT NOT NULL, snapshot_id TEXT NOT NULL, rubric_version TEXT NOT NULL, judge TEXT NOT NULL, copilots TEXT NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, report_path TEXT, source_run_id TEXT, summary TEXT, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rubrics (rubric_version TEXT PRIMARY KEY, protocol TEXT NOT NULL, content TEXT NOT NULL, stored_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, status TEXT NOT NULL, text TEXT, raw TEXT, html TEXT, adapter TEXT NOT NULL, started_at TEXT, finished_at TEXT, latency_ms REAL, error_kind TEXT, error_message TEXT, conversation_id TEXT, context TEXT, PRIMARY KEY (run_id, query_id, copilot));
CREATE TABLE IF NOT EXISTS judge_units (run_id TEXT NOT NULL, idx INTEGER NOT NULL, unit TEXT NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS judgments (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, rubric_version TEXT NOT NULL, status TEXT NOT NULL, scores TEXT, rationales TEXT, total REAL, rank INTEGER, position INTEGER, error TEXT, judge TEXT NOT NULL, attempts INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, query_id, copilot, rubric_version));
CREATE TABLE IF NOT EXISTS judge_turns (run_id TEXT NOT NULL, query_id TEXT NOT NULL, rubric_version TEXT NOT NULL, turn INTEGER NOT NULL, request TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (run_id, query_id, rubric_version, turn));
CREATE TABLE IF NOT EXISTS judge_cache (cache_key TEXT PRIMARY KEY, answer TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS llm_calls (run_id TEXT NOT NULL, role TEXT NOT NULL, name TEXT NOT NULL, model TEXT, query_id TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, latency_ms REAL NOT NULL, ok INTEGER NOT NULL, error_kind TEXT, at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls (run_id);
`;

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

export class ResultsStore {
  readonly db: Database.Database;
  /** Pairwise preference studies (asynchronous interface). */
  readonly studies: StudyStore;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 10000'); // several worker processes may share one file
    this.db.exec(SCHEMA);
    this.studies = new SqliteStudyStore(this.db);
  }

  close(): void {
    this.db.close();
  }

  // ---- snapshots -------------------------------------------------------------
  putSnapshot(s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): void {
    const insertQuery = this.db.prepare('INSERT OR IGNORE INTO snapshot_queries VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      this.db
        .prepare('INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?, ?)')
        .run(s.snapshotId, s.createdAt, s.parentId, JSON.stringify(s.meta), queries.length);
      queries.forEach((q, i) => insertQuery.run(s.snapshotId, i, q.id, JSON.stringify(q)));
    })();
  }

  getSnapshot(snapshotId: string): SnapshotRecord | null {
    const row = this.db.prepare('SELECT * FROM snapshots WHERE snapshot_id = ?').get(snapshotId) as any;
    return row ? toSnapshot(row) : null;
  }

  listSnapshots(): SnapshotRecord[] {
    return (this.db.prepare('SELECT * FROM snapshots ORDER BY created_at DESC').all() as any[]).map(toSnapshot);
  }

  snapshotQueries(snapshotId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Query[] {
    return (
      this.db
        .prepare('SELECT query FROM snapshot_queries WHERE snapshot_id = ? AND idx >= ? AND idx < ? ORDER BY idx')
        .all(snapshotId, from, to) as Array<{ query: string }>
    ).map((r) => JSON.parse(r.query) as Query);
  }

  snapshotQuery(snapshotId: string, queryId: string): Query {
    const row = this.db.prepare('SELECT query FROM snapshot_queries WHERE snapshot_id = ? AND query_id = ?').get(snapshotId, queryId) as
      | { query: string }
      | undefined;
    if (!row) throw new Error(`query ${queryId} is not in snapshot ${snapshotId}`);
    return JSON.parse(row.query) as Query;
  }

  // ---- runs -------------------------------------------------------------------
  /** Idempotent: a retried activity finds the run already there. */
  createRun(r: Omit<RunRecord, 'status' | 'finishedAt' | 'reportPath' | 'summary'>): void {
    this.db
      .prepare('INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, ?)')
      .run(r.runId, r.protocol, r.snapshotId, r.rubricVersion, JSON.stringify(r.judge), JSON.stringify(r.copilots), 'running', r.startedAt, r.sourceRunId, JSON.stringify(r.config));
  }

  finishRun(runId: string, status: RunRecord['status'], reportPath: string | null, summary: unknown, finishedAt: string): void {
    this.db.prepare('UPDATE runs SET status = ?, report_path = ?, summary = ?, finished_at = ? WHERE run_id = ?').run(status, reportPath, json(summary), finishedAt, runId);
  }

  getRun(runId: string): RunRecord | null {
    const row = this.db.prepare('SELECT * FROM runs WHERE run_id = ?').get(runId) as any;
    return row ? toRun(row) : null;
  }

  listRuns(): RunRecord[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC, run_id DESC').all() as any[]).map(toRun);
  }

  // ---- rubrics ----------------------------------------------------------------
  putRubric(version: string, protocol: string, content: unknown): void {
    this.db.prepare('INSERT OR IGNORE INTO rubrics VALUES (?, ?, ?, ?)').run(version, protocol, JSON.stringify(content), new Date().toISOString());
  }

  getRubric(version: string): { protocol: string; content: unknown } | null {
    const row = this.db.prepare('SELECT protocol, content FROM rubrics WHERE rubric_version = ?').get(version) as any;
    return row ? { protocol: row.protocol, content: JSON.parse(row.content) } : null;
  }

  // ---- responses --------------------------------------------------------------
  /** First write wins: a collect activity retried after it already stored its answer keeps the stored one. */
  putResponse(r: StoredResponse): void {
    this.db
      .prepare('INSERT OR IGNORE INTO responses VALUES (@runId, @queryId, @copilot, @status, @text, @raw, @html, @adapter, @startedAt, @finishedAt, @latencyMs, @errorKind, @errorMessage, @conversationId, @context)')
      .run(r);
  }

  getResponse(runId: string, queryId: string, copilot: string): StoredResponse | null {
    const row = this.db.prepare('SELECT * FROM responses WHERE run_id = ? AND query_id = ? AND copilot = ?').get(runId, queryId, copilot) as any;
    return row ? toResponse(row) : null;
  }

  responses(runId: string): StoredResponse[] {
    return (this.db.prepare('SELECT * FROM responses WHERE run_id = ? ORDER BY query_id, copilot').all(runId) as any[]).map(toResponse);
  }

  /** Re-judging reuses another run's responses: copied rows, zero copilot calls. */
  adoptResponses(fromRunId: string, toRunId: string): number {
    return this.db
      .prepare(
        `INSERT OR IGNORE INTO responses SELECT ?, query_id, copilot, status, text, raw, html, adapter, started_at, finished_at, latency_ms, error_kind, error_message, conversation_id, context FROM responses WHERE run_id = ?`,
      )
      .run(toRunId, fromRunId).changes;
  }

  // ---- judging ----------------------------------------------------------------
  /** The units and the plan they came from (e.g. the presentation design), written together. */
  putJudgeUnits(runId: string, units: JudgeUnit[], plan?: unknown): void {
    const insert = this.db.prepare('INSERT OR IGNORE INTO judge_units VALUES (?, ?, ?)');
    this.db.transaction(() => {
      units.forEach((u, i) => insert.run(runId, i, JSON.stringify(u)));
      if (plan !== undefined) this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run(`plan:${runId}`, JSON.stringify(plan));
    })();
  }

  /** This store's persistent random identity (made on first use); the default task queue is derived from it. */
  storeId(): string {
    this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run('store-id', crypto.randomBytes(16).toString('hex'));
    return (this.db.prepare('SELECT value FROM kv WHERE key = ?').get('store-id') as { value: string }).value;
  }

  runPlan(runId: string): unknown {
    const row = this.db.prepare('SELECT value FROM kv WHERE key = ?').get(`plan:${runId}`) as { value: string } | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  judgeUnits(runId: string, from = 0, to = Number.MAX_SAFE_INTEGER): JudgeUnit[] {
    return (
      this.db.prepare('SELECT unit FROM judge_units WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx').all(runId, from, to) as Array<{ unit: string }>
    ).map((r) => JSON.parse(r.unit) as JudgeUnit);
  }

  putJudgment(j: StoredJudgment): void {
    this.db
      .prepare('INSERT OR IGNORE INTO judgments VALUES (@runId, @queryId, @copilot, @rubricVersion, @status, @scores, @rationales, @total, @rank, @position, @error, @judge, @attempts, @createdAt)')
      .run({ ...j, scores: json(j.scores), rationales: json(j.rationales), judge: JSON.stringify(j.judge) });
  }

  getJudgment(runId: string, queryId: string, copilot: string, rubricVersion: string): StoredJudgment | null {
    const row = this.db
      .prepare('SELECT * FROM judgments WHERE run_id = ? AND query_id = ? AND copilot = ? AND rubric_version = ?')
      .get(runId, queryId, copilot, rubricVersion) as any;
    return row ? toJudgment(row) : null;
  }

  judgments(runId: string, rubricVersion?: string): StoredJudgment[] {
    const rows = rubricVersion
      ? this.db.prepare('SELECT * FROM judgments WHERE run_id = ? AND rubric_version = ? ORDER BY query_id, copilot').all(runId, rubricVersion)
      : this.db.prepare('SELECT * FROM judgments WHERE run_id = ? ORDER BY query_id, copilot').all(runId);
    return (rows as any[]).map(toJudgment);
  }

  /** Turns of a shared judge conversation, so a crashed conversation resumes where it stopped. */
  putJudgeTurn(runId: string, queryId: string, rubricVersion: string, turn: number, request: unknown, answer: string): void {
    this.db.prepare('INSERT OR IGNORE INTO judge_turns VALUES (?, ?, ?, ?, ?, ?)').run(runId, queryId, rubricVersion, turn, JSON.stringify(request), answer);
  }

  judgeTurns(runId: string, queryId: string, rubricVersion: string): Array<{ turn: number; request: unknown; answer: string }> {
    return (
      this.db.prepare('SELECT turn, request, answer FROM judge_turns WHERE run_id = ? AND query_id = ? AND rubric_version = ? ORDER BY turn').all(runId, queryId, rubricVersion) as any[]
    ).map((r) => ({ turn: r.turn, request: JSON.parse(r.request), answer: r.answer }));
  }

  /** Answers keyed by the full judge request, so an unchanged rubric and judge never pay twice. */
  cachedAnswer(key: string): string | null {
    const row = this.db.prepare('SELECT answer FROM judge_cache WHERE cache_key = ?').get(key) as { answer: string } | undefined;
    return row?.answer ?? null;
  }

  cacheAnswer(key: string, answer: string): void {
    this.db.prepare('INSERT OR IGNORE INTO judge_cache VALUES (?, ?, ?)').run(key, answer, new Date().toISOString());
  }

  // ---- cost ---------------------------------------------------------------------
  /** Every request sent is a row (a retried attempt really was sent, and really cost), so this one is not idempotent by design. */
  putLlmCall(c: LlmCallRecord): void {
    this.db
      .prepare('INSERT INTO llm_calls VALUES (@runId, @role, @name, @model, @queryId, @promptTokens, @completionTokens, @cachedTokens, @latencyMs, @ok, @errorKind, @at)')
      .run({ ...c, ok: c.ok ? 1 : 0 });
  }

  llmCalls(runId: string): LlmCallRecord[] {
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
  };
}

/** Default location: $JUDGEFLOW_STORE, else <JUDGEFLOW_HOME or ./.judgeflow>/results.db */
export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.JUDGEFLOW_STORE) return path.resolve(env.JUDGEFLOW_STORE);
  return path.join(judgeflowHome(env), 'results.db');
}

const openStores = new Map<string, ResultsStore>();
/** One connection per file per process. */
export function openStore(file = defaultStorePath()): ResultsStore {
  let store = openStores.get(file);
  if (!store) {
    store = new ResultsStore(file);
    openStores.set(file, store);
  }
  return store;
}
