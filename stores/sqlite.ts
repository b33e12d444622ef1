import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  artefactIdOf,
  FIRST_SLOT,
  type Artefact,
  type ArtefactInfo,
  type JudgeSlot,
  type JudgeUnit,
  type MigrationReport,
  type NewRun,
  type RecordCounts,
  type ResultsStore,
  type RunRecord,
  type ScheduleSnapshotRow,
  type SnapshotRecord,
  type NewArtefact,
  type StoredJudgeTurn,
  type StoreRecord,
  type StoredJudgeBatch,
  type StoredBatchLine,
  type VerdictRationales,
} from '../core/model/store';
import type { LlmCallRecord, Query, StoredJudgment, StoredResponse } from '../core/model/types';
import type { StoredGroundingCheck } from '../core/grounding/checks';
import type { ReopenedItems } from '../core/model/retryFailed';
import { migrateSqlite, SQLITE_MIGRATIONS } from './sqliteSchema';
import { olderStoreProblem } from './migrations';
import {
  toGroundingCheck,
  toJudgeBatch,
  toBatchLine,
  RESPONSE_COLUMNS_WITHOUT_PAYLOADS,
  JUDGMENT_COLUMNS_BUT_RATIONALES,
  sharingRepeats,
  toVerdictRationales,
} from './rows';
import { SqliteStudyStore } from './sqliteStudies';
import {
  ARTEFACT_INFO_COLUMNS,
  EXPORT_PAGE,
  exportRecords,
  groupClaims,
  groundingCheckRow,
  groundingClaimRows,
  json,
  toArtefact,
  toArtefactInfo,
  toJudgment,
  toLlmCall,
  toResponse,
  toRun,
  toScheduleSnapshot,
  toSnapshot,
  toAgentStep,
  toWorldCall,
  toWorldRecording,
} from './rows';
import type { StoredAgentStep, WorldCall, WorldRecording } from '../core/model/agentSteps';

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

/** Distinct SQL texts kept compiled per connection; queries built with varying text beyond that are compiled afresh. */
const STATEMENT_CACHE = 500;

/**
 * better-sqlite3 compiles a statement on every prepare(); a worker asks the same few dozen queries for every LLM call, so
 * each connection keeps its statements compiled (about 0.8 ms of worker CPU per call). A cached statement is handed out
 * with pluck() off, so one caller's pluck() does not change what the next one reads.
 */
function reuseStatements(db: Database.Database): void {
  const compile = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE) statements.clear();
      statements.set(sql, (statement = compile(sql)));
    } else if (statement.reader) statement.pluck(false);
    return statement;
  }) as typeof db.prepare;
}

/**
 * The results store in one SQLite file (WAL mode, so several worker processes on one machine can share it).
 * better-sqlite3 is synchronous; the methods are async only to meet the ResultsStore contract.
 * Owner-only: the directory is created 0700 and the file (with its -wal/-shm, which SQLite creates with the
 * database file's mode) is 0600, since it holds copilot answers and raw payloads.
 */
export class SqliteStore implements ResultsStore {
  private readonly db: Database.Database;
  readonly studies: SqliteStudyStore;
  /** What opening the file applied (migrations run on open, since better-sqlite3 is synchronous). */
  private readonly migrated: MigrationReport;

  constructor(readonly location: string) {
    prepareFile(location);
    this.db = new Database(location);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 10000'); // several worker processes may share one file
    reuseStatements(this.db);
    this.migrated = migrateSqlite(this.db, location);
    this.studies = new SqliteStudyStore(this.db);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  async migrate(): Promise<MigrationReport> {
    const now = migrateSqlite(this.db, this.location);
    return { version: now.version, applied: [...this.migrated.applied, ...now.applied] };
  }

  // ---- snapshots -------------------------------------------------------------
  async putSnapshot(s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): Promise<void> {
    this.db.transaction(() => this.insertSnapshot(s, queries))();
  }

  private insertSnapshot(s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): number {
    const insertQuery = this.db.prepare('INSERT OR IGNORE INTO snapshot_queries VALUES (?, ?, ?, ?)');
    const added = this.db
      .prepare('INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?, ?)')
      .run(s.snapshotId, s.createdAt, s.parentId, JSON.stringify(s.meta), queries.length).changes;
    if (added) queries.forEach((q, i) => insertQuery.run(s.snapshotId, i, q.id, JSON.stringify(q)));
    return added;
  }

  async getSnapshot(snapshotId: string): Promise<SnapshotRecord | null> {
    const row = this.db.prepare('SELECT * FROM snapshots WHERE snapshot_id = ?').get(snapshotId) as any;
    return row ? toSnapshot(row) : null;
  }

  async snapshotIdsStartingWith(prefix: string): Promise<string[]> {
    return (
      this.db
        .prepare('SELECT snapshot_id FROM snapshots WHERE substr(snapshot_id, 1, ?) = ? ORDER BY snapshot_id')
        .all(prefix.length, prefix) as Array<{ snapshot_id: string }>
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
    const row = this.db
      .prepare('SELECT query FROM snapshot_queries WHERE snapshot_id = ? AND query_id = ?')
      .get(snapshotId, queryId) as { query: string } | undefined;
    if (!row) throw new Error(`query ${queryId} is not in snapshot ${snapshotId}`);
    return JSON.parse(row.query) as Query;
  }

  // ---- runs -------------------------------------------------------------------
  async createRun(r: NewRun): Promise<void> {
    this.insertRun({ ...r, status: 'running', finishedAt: null, reportPath: null, summary: null });
  }

  private insertRun(r: RunRecord): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(
        r.runId,
        r.protocol,
        r.snapshotId,
        r.rubricVersion,
        JSON.stringify(r.judge),
        JSON.stringify(r.copilots),
        r.status,
        r.startedAt,
        r.finishedAt,
        r.reportPath,
        r.sourceRunId,
        json(r.summary),
        JSON.stringify(r.config),
      ).changes;
  }

  async finishRun(
    runId: string,
    status: RunRecord['status'],
    reportPath: string | null,
    summary: unknown,
    finishedAt: string,
  ): Promise<void> {
    this.db
      .prepare('UPDATE runs SET status = ?, report_path = ?, summary = ?, finished_at = ? WHERE run_id = ?')
      .run(status, reportPath, json(summary), finishedAt, runId);
  }

  async replaceRunConfig(runId: string, config: unknown, judge: RunRecord['judge']): Promise<void> {
    this.db.prepare('UPDATE runs SET config = ?, judge = ? WHERE run_id = ?').run(json(config), json(judge), runId);
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
    this.insertRubric(version, protocol, content, new Date().toISOString());
  }

  private insertRubric(version: string, protocol: string, content: unknown, storedAt: string): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO rubrics VALUES (?, ?, ?, ?)')
      .run(version, protocol, JSON.stringify(content), storedAt).changes;
  }

  async getRubric(version: string): Promise<{ protocol: string; content: unknown } | null> {
    const row = this.db.prepare('SELECT protocol, content FROM rubrics WHERE rubric_version = ?').get(version) as any;
    return row ? { protocol: row.protocol, content: JSON.parse(row.content) } : null;
  }

  // ---- responses --------------------------------------------------------------
  async putResponse(r: StoredResponse): Promise<void> {
    this.insertResponse(r);
  }

  async putResponses(responses: StoredResponse[]): Promise<void> {
    if (!responses.length) return;
    this.db.transaction(() => responses.forEach((r) => this.insertResponse(r)))();
  }

  private insertResponse(r: StoredResponse): number {
    return this.db
      .prepare(
        'INSERT OR IGNORE INTO responses VALUES (@runId, @queryId, @copilot, @status, @text, @raw, @html, @adapter, @startedAt, @finishedAt, @latencyMs, @errorKind, @errorMessage, @conversationId, @context, @sources)',
      )
      .run({ ...r, sources: json(r.sources) }).changes;
  }

  async getResponse(
    runId: string,
    queryId: string,
    copilot: string,
    opts: { payloads?: boolean } = {},
  ): Promise<StoredResponse | null> {
    const columns = opts.payloads === false ? RESPONSE_COLUMNS_WITHOUT_PAYLOADS : '*';
    const row = this.db
      .prepare(`SELECT ${columns} FROM responses WHERE run_id = ? AND query_id = ? AND copilot = ?`)
      .get(runId, queryId, copilot) as any;
    return row ? toResponse(row) : null;
  }

  async responses(runId: string, opts: { payloads?: boolean } = {}): Promise<StoredResponse[]> {
    const columns = opts.payloads === false ? RESPONSE_COLUMNS_WITHOUT_PAYLOADS : '*';
    const rows = this.db
      .prepare(`SELECT ${columns} FROM responses WHERE run_id = ? ORDER BY query_id, copilot`)
      .all(runId) as any[];
    return sharingRepeats(rows, toResponse);
  }

  async responseStatuses(
    runId: string,
    copilots: string[],
    queryIds?: string[],
  ): Promise<Array<Pick<StoredResponse, 'queryId' | 'copilot' | 'status'>>> {
    const ofQueries = queryIds ? ' AND query_id IN (SELECT value FROM json_each(?))' : '';
    return this.db
      .prepare(
        `SELECT query_id AS queryId, copilot, status FROM responses WHERE run_id = ? AND copilot IN (SELECT value FROM json_each(?))${ofQueries}`,
      )
      .all(runId, JSON.stringify(copilots), ...(queryIds ? [JSON.stringify(queryIds)] : [])) as Array<
      Pick<StoredResponse, 'queryId' | 'copilot' | 'status'>
    >;
  }

  async reopenItems(runId: string, items: ReopenedItems): Promise<void> {
    const response = this.db.prepare('DELETE FROM responses WHERE run_id = ? AND query_id = ? AND copilot = ?');
    // A failed agent answer is asked afresh: its trajectory goes with it (as a judge conversation's turns do).
    const steps = this.db.prepare('DELETE FROM agent_steps WHERE run_id = ? AND query_id = ? AND copilot = ?');
    const judgment = this.db.prepare(
      'DELETE FROM judgments WHERE run_id = ? AND query_id = ? AND copilot = ? AND sample = ? AND judge_name = ?',
    );
    const turns = this.db.prepare(
      'DELETE FROM judge_turns WHERE run_id = ? AND query_id = ? AND sample = ? AND judge_name = ?',
    );
    this.db
      .transaction(() => {
        for (const r of items.responses) {
          response.run(runId, r.queryId, r.copilot);
          steps.run(runId, r.queryId, r.copilot);
        }
        for (const j of items.judgments) judgment.run(runId, j.queryId, j.copilot, j.sample, j.judge);
        for (const t of items.turns) turns.run(runId, t.queryId, t.sample, t.judge);
        this.db.prepare("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = ?").run(runId);
      })
      .immediate();
  }

  async adoptResponses(fromRunId: string, toRunId: string): Promise<number> {
    return this.db.transaction(() => {
      // An agent copilot's answer comes with its trajectory (the steps its report and traces show).
      this.db
        .prepare(
          'INSERT OR IGNORE INTO agent_steps SELECT ?, query_id, copilot, seq, kind, step FROM agent_steps WHERE run_id = ?',
        )
        .run(toRunId, fromRunId);
      return this.db
        .prepare(
          `INSERT OR IGNORE INTO responses SELECT ?, query_id, copilot, status, text, raw, html, adapter, started_at, finished_at, latency_ms, error_kind, error_message, conversation_id, context, sources FROM responses WHERE run_id = ?`,
        )
        .run(toRunId, fromRunId).changes;
    })();
  }

  // ---- judging ----------------------------------------------------------------
  async putJudgeUnits(runId: string, units: JudgeUnit[], plan?: unknown): Promise<void> {
    this.db.transaction(() => this.insertJudgeUnits(runId, units, plan))();
  }

  private insertJudgeUnits(runId: string, units: JudgeUnit[], plan: unknown): number {
    const insert = this.db.prepare('INSERT OR IGNORE INTO judge_units VALUES (?, ?, ?)');
    const added = units.reduce((n, u, i) => n + insert.run(runId, i, JSON.stringify(u)).changes, 0);
    if (plan !== undefined)
      this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run(`plan:${runId}`, JSON.stringify(plan));
    return added;
  }

  async appendJudgeUnits(runId: string, units: JudgeUnit[]): Promise<number> {
    const stored = this.db.prepare('SELECT 1 FROM judge_units WHERE run_id = ? AND unit = ?');
    const insert = this.db.prepare('INSERT INTO judge_units VALUES (?, ?, ?)');
    return this.db
      .transaction(() => {
        // Indices run 0…n-1 without a gap: the largest is one index lookup, where COUNT(*) reads every unit of the run.
        let count = (
          this.db.prepare('SELECT coalesce(max(idx) + 1, 0) AS n FROM judge_units WHERE run_id = ?').get(runId) as {
            n: number;
          }
        ).n;
        for (const unit of units) {
          const json = JSON.stringify(unit);
          if (!stored.get(runId, json)) insert.run(runId, count++, json);
        }
        return count;
      })
      .immediate();
  }

  async storeId(): Promise<string> {
    this.db.prepare('INSERT OR IGNORE INTO kv VALUES (?, ?)').run('store-id', crypto.randomBytes(16).toString('hex'));
    return (this.db.prepare('SELECT value FROM kv WHERE key = ?').get('store-id') as { value: string }).value;
  }

  async runPlan(runId: string): Promise<unknown> {
    const row = this.db.prepare('SELECT value FROM kv WHERE key = ?').get(`plan:${runId}`) as
      { value: string } | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  async judgeUnits(runId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<JudgeUnit[]> {
    return (
      this.db
        .prepare('SELECT unit FROM judge_units WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx')
        .all(runId, from, to) as Array<{ unit: string }>
    ).map((r) => JSON.parse(r.unit) as JudgeUnit);
  }

  // ---- grounding checks ----------------------------------------------------------
  async putGroundingCheck(check: StoredGroundingCheck): Promise<void> {
    this.db.transaction(() => this.insertGroundingCheck(check))();
  }

  private insertGroundingCheck(check: StoredGroundingCheck): number {
    const added = this.db
      .prepare('INSERT OR IGNORE INTO grounding_checks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(...groundingCheckRow(check)).changes;
    if (added)
      for (const row of groundingClaimRows(check))
        this.db
          .prepare('INSERT INTO grounding_claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .run(...row);
    return added;
  }

  async getGroundingCheck(
    runId: string,
    queryId: string,
    copilot: string,
    groundingVersion: string,
    judgeName = '',
  ): Promise<StoredGroundingCheck | null> {
    const key = [runId, queryId, copilot, groundingVersion, judgeName];
    const where = 'run_id = ? AND query_id = ? AND copilot = ? AND grounding_version = ? AND judge_name = ?';
    const row = this.db.prepare(`SELECT * FROM grounding_checks WHERE ${where}`).get(...key);
    return row
      ? toGroundingCheck(
          row,
          this.db.prepare(`SELECT * FROM grounding_claims WHERE ${where} ORDER BY idx`).all(...key) as any[],
        )
      : null;
  }

  async groundingChecks(runId: string, groundingVersion?: string): Promise<StoredGroundingCheck[]> {
    const filter = groundingVersion === undefined ? '' : ' AND grounding_version = ?';
    const args = groundingVersion === undefined ? [runId] : [runId, groundingVersion];
    const checks = this.db
      .prepare(
        `SELECT * FROM grounding_checks WHERE run_id = ?${filter} ORDER BY query_id, copilot, grounding_version, judge_name`,
      )
      .all(...args) as any[];
    const claims = this.db
      .prepare(
        `SELECT * FROM grounding_claims WHERE run_id = ?${filter} ORDER BY query_id, copilot, grounding_version, judge_name, idx`,
      )
      .all(...args) as any[];
    return groupClaims(checks, claims);
  }

  async putJudgment(j: StoredJudgment): Promise<void> {
    this.insertJudgment(j);
  }

  async putJudgments(judgments: StoredJudgment[]): Promise<void> {
    this.db.transaction(() => judgments.forEach((j) => this.insertJudgment(j)))();
  }

  private insertJudgment(j: StoredJudgment): number {
    return this.db
      .prepare(
        'INSERT OR IGNORE INTO judgments VALUES (@runId, @queryId, @copilot, @rubricVersion, @status, @scores, @rationales, @total, @rank, @position, @error, @judge, @attempts, @createdAt, @sample, @judgeName)',
      )
      .run({
        ...j,
        scores: json(j.scores),
        rationales: json(j.rationales),
        judge: JSON.stringify(j.judge),
        sample: j.sample ?? 0,
        judgeName: j.judgeName ?? '',
      }).changes;
  }

  async getJudgment(
    runId: string,
    queryId: string,
    copilot: string,
    rubricVersion: string,
    slot: JudgeSlot = FIRST_SLOT,
  ): Promise<StoredJudgment | null> {
    const row = this.db
      .prepare(
        'SELECT * FROM judgments WHERE run_id = ? AND query_id = ? AND copilot = ? AND rubric_version = ? AND sample = ? AND judge_name = ?',
      )
      .get(runId, queryId, copilot, rubricVersion, slot.sample, slot.judge) as any;
    return row ? toJudgment(row) : null;
  }

  async judgments(
    runId: string,
    rubricVersion?: string,
    opts: { rationales?: boolean } = {},
  ): Promise<StoredJudgment[]> {
    const order = 'ORDER BY query_id, copilot, judge_name, sample';
    const columns = opts.rationales === false ? JUDGMENT_COLUMNS_BUT_RATIONALES : '*';
    const rows = rubricVersion
      ? this.db
          .prepare(`SELECT ${columns} FROM judgments WHERE run_id = ? AND rubric_version = ? ${order}`)
          .all(runId, rubricVersion)
      : this.db.prepare(`SELECT ${columns} FROM judgments WHERE run_id = ? ${order}`).all(runId);
    return sharingRepeats(rows as any[], toJudgment);
  }

  async judgmentRationales(runId: string, rubricVersion: string, queryIds: string[]): Promise<VerdictRationales[]> {
    const rows = this.db
      .prepare(
        'SELECT query_id, copilot, sample, judge_name, rationales FROM judgments WHERE run_id = ? AND rubric_version = ? AND query_id IN (SELECT value FROM json_each(?))',
      )
      .all(runId, rubricVersion, JSON.stringify(queryIds)) as any[];
    return rows.map(toVerdictRationales);
  }

  async putJudgeTurn(
    runId: string,
    queryId: string,
    rubricVersion: string,
    turn: number,
    request: unknown,
    answer: string,
    slot: JudgeSlot = FIRST_SLOT,
  ): Promise<void> {
    this.insertJudgeTurn(runId, queryId, rubricVersion, turn, request, answer, slot);
  }

  private insertJudgeTurn(
    runId: string,
    queryId: string,
    rubricVersion: string,
    turn: number,
    request: unknown,
    answer: string,
    slot: JudgeSlot,
  ): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO judge_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(runId, queryId, rubricVersion, turn, JSON.stringify(request), answer, slot.sample, slot.judge).changes;
  }

  async judgeTurns(
    runId: string,
    queryId: string,
    rubricVersion: string,
    slot: JudgeSlot = FIRST_SLOT,
  ): Promise<StoredJudgeTurn[]> {
    return (
      this.db
        .prepare(
          'SELECT turn, request, answer FROM judge_turns WHERE run_id = ? AND query_id = ? AND rubric_version = ? AND sample = ? AND judge_name = ? ORDER BY turn',
        )
        .all(runId, queryId, rubricVersion, slot.sample, slot.judge) as any[]
    ).map((r) => ({ turn: r.turn, request: JSON.parse(r.request), answer: r.answer }));
  }

  // ---- answer cache -----------------------------------------------------------
  async cachedAnswer(key: string): Promise<string | null> {
    const row = this.db.prepare('SELECT answer FROM judge_cache WHERE cache_key = ?').get(key) as
      { answer: string } | undefined;
    return row?.answer ?? null;
  }

  async cacheAnswer(key: string, answer: string): Promise<void> {
    this.insertCachedAnswer(key, answer, new Date().toISOString());
  }

  private insertCachedAnswer(key: string, answer: string, createdAt: string): number {
    return this.db.prepare('INSERT OR IGNORE INTO judge_cache VALUES (?, ?, ?)').run(key, answer, createdAt).changes;
  }

  // ---- cost ---------------------------------------------------------------------
  async putLlmCall(c: LlmCallRecord): Promise<void> {
    this.insertLlmCall(c);
  }

  private insertLlmCall(c: LlmCallRecord): number {
    return this.db
      .prepare(
        'INSERT INTO llm_calls (run_id, role, name, model, query_id, prompt_tokens, completion_tokens, cached_tokens, latency_ms, ok, error_kind, at, via_batch, request_chars, reply_chars, reused) VALUES (@runId, @role, @name, @model, @queryId, @promptTokens, @completionTokens, @cachedTokens, @latencyMs, @ok, @errorKind, @at, @batch, @requestChars, @replyChars, @reused)',
      )
      .run({
        ...c,
        ok: c.ok ? 1 : 0,
        batch: c.batch ? 1 : 0,
        reused: c.reused ? 1 : 0,
        requestChars: c.requestChars ?? null,
        replyChars: c.replyChars ?? null,
      }).changes;
  }

  // ---- batch judging ------------------------------------------------------------
  async putJudgeBatch(
    b: StoredJudgeBatch,
    lines: Array<Pick<StoredBatchLine, 'customId' | 'queryId' | 'callName'>>,
  ): Promise<void> {
    this.db.transaction(() => {
      const added = this.db
        .prepare('INSERT OR IGNORE INTO judge_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(
          b.runId,
          b.key,
          b.batchId,
          b.api,
          JSON.stringify(b.endpoint),
          b.state,
          JSON.stringify(b.counts),
          b.lines,
          b.createdAt,
        ).changes;
      const put = this.db.prepare(
        "INSERT INTO judge_batch_lines VALUES (?, ?, ?, ?, ?, 'submitted', NULL, NULL) ON CONFLICT (run_id, custom_id) DO UPDATE SET batch_key = excluded.batch_key WHERE judge_batch_lines.status = 'submitted'",
      );
      if (added) for (const l of lines) put.run(b.runId, l.customId, b.key, l.queryId, l.callName);
    })();
  }

  async updateJudgeBatch(
    runId: string,
    key: string,
    u: Pick<StoredJudgeBatch, 'batchId' | 'state' | 'counts'>,
  ): Promise<void> {
    this.db
      .prepare('UPDATE judge_batches SET batch_id = ?, state = ?, counts = ? WHERE run_id = ? AND key = ?')
      .run(u.batchId, u.state, JSON.stringify(u.counts), runId, key);
  }

  async judgeBatches(runId: string): Promise<StoredJudgeBatch[]> {
    return (
      this.db.prepare('SELECT * FROM judge_batches WHERE run_id = ? ORDER BY created_at, key').all(runId) as any[]
    ).map(toJudgeBatch);
  }

  async batchLine(runId: string, customId: string): Promise<StoredBatchLine | null> {
    const row = this.db
      .prepare('SELECT * FROM judge_batch_lines WHERE run_id = ? AND custom_id = ?')
      .get(runId, customId);
    return row ? toBatchLine(row) : null;
  }

  async batchLines(runId: string, batchKey: string): Promise<StoredBatchLine[]> {
    return (
      this.db
        .prepare('SELECT * FROM judge_batch_lines WHERE run_id = ? AND batch_key = ? ORDER BY custom_id')
        .all(runId, batchKey) as any[]
    ).map(toBatchLine);
  }

  async settleBatchLines(runId: string, lines: Parameters<ResultsStore['settleBatchLines']>[1]): Promise<number> {
    return this.db.transaction(() => {
      let settled = 0;
      for (const line of lines) {
        const changed = this.db
          .prepare(
            "UPDATE judge_batch_lines SET status = ?, body = ?, error = ? WHERE run_id = ? AND custom_id = ? AND status = 'submitted'",
          )
          .run(
            line.status,
            line.body === null ? null : JSON.stringify(line.body),
            line.error,
            runId,
            line.customId,
          ).changes;
        if (!changed) continue;
        settled++;
        if (line.call) this.insertLlmCall(line.call);
      }
      return settled;
    })();
  }

  async llmCalls(runId: string): Promise<LlmCallRecord[]> {
    return (this.db.prepare('SELECT * FROM llm_calls WHERE run_id = ? ORDER BY at, rowid').all(runId) as any[]).map(
      toLlmCall,
    );
  }

  async llmCallsAfter(
    runId: string,
    cursor: number,
    limit = 10_000,
  ): Promise<{ calls: LlmCallRecord[]; cursor: number }> {
    // rowid: one writer at a time, so a row committed later never has a lower rowid than one already read; rows of
    // llm_calls are never deleted, so rowids have no gaps for VACUUM to close. The (run_id) index holds rowid in order.
    const rows = this.db
      .prepare('SELECT rowid AS jf_seq, * FROM llm_calls WHERE run_id = ? AND rowid > ? ORDER BY rowid LIMIT ?')
      .all(runId, cursor, limit) as any[];
    return { calls: rows.map(toLlmCall), cursor: rows.length ? Number(rows[rows.length - 1].jf_seq) : cursor };
  }

  // ---- pacing shared by a run's workers ---------------------------------------------
  async claimSendSlot(runId: string, endpoint: string, earliest: number, spacingMs: number): Promise<number> {
    // One statement, so one write transaction: concurrent claimers (other processes on the file) take turns.
    const row = this.db
      .prepare(
        'INSERT INTO send_slots (run_id, endpoint, next_at) VALUES (?, ?, ? + ?) ON CONFLICT (run_id, endpoint) DO UPDATE SET next_at = max(next_at, excluded.next_at - ?) + ? RETURNING next_at - ? AS slot',
      )
      .get(runId, endpoint, earliest, spacingMs, spacingMs, spacingMs, spacingMs) as { slot: number };
    return row.slot;
  }

  async notePriority(runId: string, priorityKey: number, at: number, withinMs: number): Promise<number> {
    return this.db.transaction(() => {
      this.db
        .prepare(
          'INSERT INTO run_priorities VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET priority_key = excluded.priority_key, seen_at = max(seen_at, excluded.seen_at)',
        )
        .run(runId, priorityKey, at);
      const row = this.db
        .prepare('SELECT min(priority_key) AS top FROM run_priorities WHERE seen_at >= ?')
        .get(at - withinMs) as { top: number };
      return row.top;
    })();
  }

  // ---- snapshot jobs ----------------------------------------------------------
  async putWork(jobId: string, key: string, value: unknown): Promise<void> {
    this.insertWork(jobId, key, value);
  }

  private insertWork(jobId: string, key: string, value: unknown): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO snapshot_work VALUES (?, ?, ?)')
      .run(jobId, key, JSON.stringify(value)).changes;
  }

  async getWork<T>(jobId: string, key: string): Promise<T | null> {
    const row = this.db.prepare('SELECT value FROM snapshot_work WHERE job_id = ? AND key = ?').get(jobId, key) as
      { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : null;
  }

  // ---- artefacts ------------------------------------------------------------------
  async putArtefact(a: NewArtefact): Promise<string> {
    const artefactId = artefactIdOf(a.runId, a.name);
    this.insertArtefact({ ...a, artefactId, createdAt: new Date().toISOString() });
    return artefactId;
  }

  private insertArtefact(a: Omit<Artefact, 'size' | 'bytes'> & { bytes: Uint8Array }): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO artefacts VALUES (?, ?, ?, ?, ?, ?)')
      .run(a.artefactId, a.runId, a.name, a.contentType, Buffer.from(a.bytes), a.createdAt).changes;
  }

  async getArtefact(artefactId: string): Promise<Artefact | null> {
    const row = this.db.prepare('SELECT * FROM artefacts WHERE artefact_id = ?').get(artefactId);
    return row ? toArtefact(row) : null;
  }

  async artefacts(runId: string): Promise<ArtefactInfo[]> {
    return (
      this.db
        .prepare(`SELECT ${ARTEFACT_INFO_COLUMNS}, length(bytes) AS size FROM artefacts WHERE run_id = ? ORDER BY name`)
        .all(runId) as any[]
    ).map(toArtefactInfo);
  }

  // ---- scheduled refresh lineage ---------------------------------------------
  async recordScheduleSnapshot(row: ScheduleSnapshotRow): Promise<void> {
    this.insertScheduleSnapshot(row);
  }

  private insertScheduleSnapshot(row: ScheduleSnapshotRow): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO schedule_snapshots VALUES (?, ?, ?, ?, ?, ?)')
      .run(row.schedule, row.workflowId, row.snapshotId, row.parentId, row.createdAt, row.runId).changes;
  }

  async setScheduleRun(schedule: string, workflowId: string, runId: string): Promise<void> {
    this.db
      .prepare('UPDATE schedule_snapshots SET run_id = ? WHERE schedule = ? AND workflow_id = ?')
      .run(runId, schedule, workflowId);
  }

  async scheduleSnapshots(schedule: string): Promise<ScheduleSnapshotRow[]> {
    return (
      this.db
        .prepare('SELECT * FROM schedule_snapshots WHERE schedule = ? ORDER BY created_at DESC, rowid DESC')
        .all(schedule) as any[]
    ).map(toScheduleSnapshot);
  }

  // ---- agent trajectories and world recordings ---------------------------------------
  async putAgentStep(s: StoredAgentStep): Promise<void> {
    this.insertAgentStep(s);
  }

  private insertAgentStep(s: StoredAgentStep): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO agent_steps VALUES (?, ?, ?, ?, ?, ?)')
      .run(s.runId, s.queryId, s.copilot, s.step.seq, s.step.kind, JSON.stringify(s.step)).changes;
  }

  private insertWorldCall(recording: string, c: WorldCall): number {
    return this.db
      .prepare('INSERT OR IGNORE INTO world_calls VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(recording, c.key, c.tool, c.arguments, c.result, c.isError ? 1 : 0, c.recordedAt).changes;
  }

  async agentSteps(runId: string, queryId: string, copilot: string): Promise<StoredAgentStep[]> {
    return (
      this.db
        .prepare('SELECT * FROM agent_steps WHERE run_id = ? AND query_id = ? AND copilot = ? ORDER BY seq')
        .all(runId, queryId, copilot) as any[]
    ).map(toAgentStep);
  }

  async runAgentSteps(runId: string): Promise<StoredAgentStep[]> {
    return (
      this.db.prepare('SELECT * FROM agent_steps WHERE run_id = ? ORDER BY query_id, copilot, seq').all(runId) as any[]
    ).map(toAgentStep);
  }

  async putWorldCalls(recording: string, calls: WorldCall[]): Promise<void> {
    this.db.transaction(() => {
      for (const c of calls) this.insertWorldCall(recording, c);
    })();
  }

  async worldCalls(recording: string, key?: string): Promise<WorldCall[]> {
    const rows =
      key === undefined
        ? this.db.prepare('SELECT * FROM world_calls WHERE recording = ? ORDER BY key').all(recording)
        : this.db.prepare('SELECT * FROM world_calls WHERE recording = ? AND key = ?').all(recording, key);
    return (rows as any[]).map(toWorldCall);
  }

  async worldRecordings(): Promise<WorldRecording[]> {
    const rows = this.db
      .prepare(
        'SELECT recording, count(*) AS calls, min(recorded_at) AS first_at, max(recorded_at) AS last_at FROM world_calls GROUP BY recording ORDER BY first_at, recording',
      )
      .all();
    return (rows as any[]).map(toWorldRecording);
  }

  // ---- copying a whole store -------------------------------------------------------
  exportRecords(): AsyncIterable<StoreRecord[]> {
    const db = this.db;
    return exportRecords(this, {
      async *pages(sql) {
        const page = db.prepare(`${sql} LIMIT ? OFFSET ?`);
        for (let offset = 0; ; offset += EXPORT_PAGE) {
          const rows = page.all(EXPORT_PAGE, offset);
          if (rows.length) yield rows;
          if (rows.length < EXPORT_PAGE) return;
        }
      },
      column: async (sql) => db.prepare(sql).pluck().all() as string[],
      insertionOrder: 'rowid',
      studyDump: (name) => this.studies.dump(name),
    });
  }

  async importRecords(batch: StoreRecord[]): Promise<RecordCounts> {
    return this.db
      .transaction(() => {
        const counts: RecordCounts = {};
        for (const record of batch) counts[record.kind] = (counts[record.kind] ?? 0) + this.importRecord(record);
        return counts;
      })
      .immediate(); // the write lock from the start: a run's LLM calls are checked for and written without another writer in between
  }

  /** One record, first write wins; returns how many rows it added. */
  private importRecord(r: StoreRecord): number {
    switch (r.kind) {
      case 'snapshot':
        return this.insertSnapshot(r.snapshot, r.queries);
      case 'rubric':
        return this.insertRubric(r.version, r.protocol, r.content, r.storedAt);
      case 'run':
        return this.insertRun(r.run);
      case 'response':
        return this.insertResponse(r.response);
      case 'judgeUnits':
        return this.insertJudgeUnits(r.runId, r.units, r.plan);
      case 'judgment':
        return this.insertJudgment(r.judgment);
      case 'judgeTurn':
        return this.insertJudgeTurn(r.runId, r.queryId, r.rubricVersion, r.turn, r.request, r.answer, r.slot);
      case 'llmCalls':
        if (this.db.prepare('SELECT 1 FROM llm_calls WHERE run_id = ? LIMIT 1').get(r.runId)) return 0;
        return r.calls.reduce((n, c) => n + this.insertLlmCall(c), 0);
      case 'cachedAnswer':
        return this.insertCachedAnswer(r.key, r.answer, r.createdAt);
      case 'work':
        return this.insertWork(r.jobId, r.key, r.value);
      case 'scheduleSnapshot':
        return this.insertScheduleSnapshot(r.row);
      case 'artefact':
        return this.insertArtefact(r.artefact);
      case 'groundingCheck':
        return this.insertGroundingCheck(r.check);
      case 'agentStep':
        return this.insertAgentStep(r.step);
      case 'worldCall':
        return this.insertWorldCall(r.recording, r.call);
      case 'study':
        return this.studies.insertDump(r.dump);
    }
  }
}

/** Why a read-only command cannot use this SQLite file as it is (an older schema), read without writing; null when current. */
export function olderSqliteSchema(file: string): string | null {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    const applied = table
      ? (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version)
      : [];
    return olderStoreProblem(SQLITE_MIGRATIONS, applied, file);
  } finally {
    db.close();
  }
}
