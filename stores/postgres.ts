import crypto from 'node:crypto';
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
import {
  toGroundingCheck,
  toJudgeBatch,
  toBatchLine,
  RESPONSE_COLUMNS_WITHOUT_PAYLOADS,
  JUDGMENT_COLUMNS_BUT_RATIONALES,
  sharingRepeats,
  toVerdictRationales,
} from './rows';
import type { ReopenedItems } from '../core/model/retryFailed';
import { insertIgnore, PostgresDb, type Queryable } from './postgresDb';
import { olderStoreProblem } from './migrations';
import { POSTGRES_MIGRATIONS } from './postgresSchema';
import { PostgresStudyStore } from './postgresStudies';
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

/** Positions are INTEGER; "to the end" must not overflow the parameter's type. */
const END = 2 ** 31 - 1;
/** Column lists where a later migration added columns (their order in the table is the order they were added). */
const JUDGMENT_COLUMNS =
  'run_id, query_id, copilot, rubric_version, status, scores, rationales, total, rank, position, error, judge, attempts, created_at, sample, judge_name';
const JUDGE_TURN_COLUMNS = 'run_id, query_id, rubric_version, turn, request, answer, sample, judge_name';
const LLM_CALL_COLUMNS =
  'run_id, role, name, model, query_id, prompt_tokens, completion_tokens, cached_tokens, latency_ms, ok, error_kind, at, via_batch, request_chars, reply_chars, reused';

/**
 * The results store in a PostgreSQL database, shared by workers and commands on any number of machines.
 * Method for method the same as stores/sqlite.ts (same tables, same keys, first write wins through ON CONFLICT DO NOTHING);
 * keep the two side by side when the schema changes. The schema is migrated before first use (stores/postgresDb.ts).
 */
export class PostgresStore implements ResultsStore {
  private readonly db: PostgresDb;
  readonly studies: PostgresStudyStore;

  /** `connectionString` may hold a password; `location` (for messages) must not. */
  constructor(
    connectionString: string,
    readonly location: string,
  ) {
    this.db = new PostgresDb(connectionString, location);
    this.studies = new PostgresStudyStore(this.db);
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  migrate(): Promise<MigrationReport> {
    return this.db.migrate();
  }

  /** Whether the database holds a judgeflow store already (read-only commands must not create one). */
  exists(): Promise<boolean> {
    return this.db.exists();
  }

  /** Why a read-only command cannot use this store as it is (an older schema), without migrating it; null when current. */
  async olderSchema(): Promise<string | null> {
    return olderStoreProblem(POSTGRES_MIGRATIONS, await this.db.appliedVersions(), this.location);
  }

  // ---- snapshots -------------------------------------------------------------
  async putSnapshot(s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): Promise<void> {
    await this.db.transaction((c) => this.insertSnapshot(c, s, queries));
  }

  private async insertSnapshot(c: Queryable, s: Omit<SnapshotRecord, 'queryCount'>, queries: Query[]): Promise<number> {
    const added = await insertIgnore(c, 'snapshots', [
      s.snapshotId,
      s.createdAt,
      s.parentId,
      JSON.stringify(s.meta),
      queries.length,
    ]);
    if (added && queries.length)
      await c.query(
        'INSERT INTO snapshot_queries SELECT $1, ord - 1, id, query FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS q(id, query, ord) ON CONFLICT DO NOTHING',
        [s.snapshotId, queries.map((q) => q.id), queries.map((q) => JSON.stringify(q))],
      );
    return added;
  }

  async getSnapshot(snapshotId: string): Promise<SnapshotRecord | null> {
    const [row] = await this.db.rows('SELECT * FROM snapshots WHERE snapshot_id = $1', [snapshotId]);
    return row ? toSnapshot(row) : null;
  }

  async snapshotIdsStartingWith(prefix: string): Promise<string[]> {
    return (
      await this.db.rows('SELECT snapshot_id FROM snapshots WHERE left(snapshot_id, $1) = $2 ORDER BY snapshot_id', [
        prefix.length,
        prefix,
      ])
    ).map((r) => r.snapshot_id);
  }

  async listSnapshots(): Promise<SnapshotRecord[]> {
    return (await this.db.rows('SELECT * FROM snapshots ORDER BY created_at DESC')).map(toSnapshot);
  }

  async snapshotQueries(snapshotId: string, from = 0, to = END): Promise<Query[]> {
    return (
      await this.db.rows(
        'SELECT query FROM snapshot_queries WHERE snapshot_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx',
        [snapshotId, from, Math.min(to, END)],
      )
    ).map((r) => JSON.parse(r.query) as Query);
  }

  async snapshotQuery(snapshotId: string, queryId: string): Promise<Query> {
    const [row] = await this.db.rows('SELECT query FROM snapshot_queries WHERE snapshot_id = $1 AND query_id = $2', [
      snapshotId,
      queryId,
    ]);
    if (!row) throw new Error(`query ${queryId} is not in snapshot ${snapshotId}`);
    return JSON.parse(row.query) as Query;
  }

  // ---- runs -------------------------------------------------------------------
  async createRun(r: NewRun): Promise<void> {
    await this.insertRun(await this.db.ready(), {
      ...r,
      status: 'running',
      finishedAt: null,
      reportPath: null,
      summary: null,
    });
  }

  private async insertRun(c: Queryable, r: RunRecord): Promise<number> {
    const judge = JSON.stringify(r.judge);
    const copilots = JSON.stringify(r.copilots);
    return insertIgnore(c, 'runs', [
      r.runId,
      r.protocol,
      r.snapshotId,
      r.rubricVersion,
      judge,
      copilots,
      r.status,
      r.startedAt,
      r.finishedAt,
      r.reportPath,
      r.sourceRunId,
      json(r.summary),
      JSON.stringify(r.config),
    ]);
  }

  async finishRun(
    runId: string,
    status: RunRecord['status'],
    reportPath: string | null,
    summary: unknown,
    finishedAt: string,
  ): Promise<void> {
    await this.db.query(
      'UPDATE runs SET status = $1, report_path = $2, summary = $3, finished_at = $4 WHERE run_id = $5',
      [status, reportPath, json(summary), finishedAt, runId],
    );
  }

  async replaceRunConfig(runId: string, config: unknown, judge: RunRecord['judge']): Promise<void> {
    await this.db.query('UPDATE runs SET config = $1, judge = $2 WHERE run_id = $3', [
      json(config),
      json(judge),
      runId,
    ]);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const [row] = await this.db.rows('SELECT * FROM runs WHERE run_id = $1', [runId]);
    return row ? toRun(row) : null;
  }

  async listRuns(): Promise<RunRecord[]> {
    return (await this.db.rows('SELECT * FROM runs ORDER BY started_at DESC, run_id DESC')).map(toRun);
  }

  // ---- rubrics ----------------------------------------------------------------
  async putRubric(version: string, protocol: string, content: unknown): Promise<void> {
    await this.insertRubric(await this.db.ready(), version, protocol, content, new Date().toISOString());
  }

  private async insertRubric(
    c: Queryable,
    version: string,
    protocol: string,
    content: unknown,
    storedAt: string,
  ): Promise<number> {
    return insertIgnore(c, 'rubrics', [version, protocol, JSON.stringify(content), storedAt]);
  }

  async getRubric(version: string): Promise<{ protocol: string; content: unknown } | null> {
    const [row] = await this.db.rows('SELECT protocol, content FROM rubrics WHERE rubric_version = $1', [version]);
    return row ? { protocol: row.protocol, content: JSON.parse(row.content) } : null;
  }

  // ---- responses --------------------------------------------------------------
  async putResponse(r: StoredResponse): Promise<void> {
    await this.insertResponse(await this.db.ready(), r);
  }

  async putResponses(responses: StoredResponse[]): Promise<void> {
    if (!responses.length) return;
    await this.db.transaction(async (c) => {
      for (const r of responses) await this.insertResponse(c, r);
    });
  }

  private async insertResponse(c: Queryable, r: StoredResponse): Promise<number> {
    const outcome = [
      r.status,
      r.text,
      r.raw,
      r.html,
      r.adapter,
      r.startedAt,
      r.finishedAt,
      r.latencyMs,
      r.errorKind,
      r.errorMessage,
      r.conversationId,
      r.context,
      json(r.sources),
    ];
    return insertIgnore(c, 'responses', [r.runId, r.queryId, r.copilot, ...outcome]);
  }

  async getResponse(
    runId: string,
    queryId: string,
    copilot: string,
    opts: { payloads?: boolean } = {},
  ): Promise<StoredResponse | null> {
    const columns = opts.payloads === false ? RESPONSE_COLUMNS_WITHOUT_PAYLOADS : '*';
    const sql = `SELECT ${columns} FROM responses WHERE run_id = $1 AND query_id = $2 AND copilot = $3`;
    const [row] = await this.db.rows(sql, [runId, queryId, copilot]);
    return row ? toResponse(row) : null;
  }

  async responses(runId: string, opts: { payloads?: boolean } = {}): Promise<StoredResponse[]> {
    const columns = opts.payloads === false ? RESPONSE_COLUMNS_WITHOUT_PAYLOADS : '*';
    const rows = await this.db.rows(`SELECT ${columns} FROM responses WHERE run_id = $1 ORDER BY query_id, copilot`, [
      runId,
    ]);
    return sharingRepeats(rows, toResponse);
  }

  async responseStatuses(
    runId: string,
    copilots: string[],
    queryIds?: string[],
  ): Promise<Array<Pick<StoredResponse, 'queryId' | 'copilot' | 'status'>>> {
    const rows = await this.db.rows(
      `SELECT query_id, copilot, status FROM responses WHERE run_id = $1 AND copilot = ANY($2::text[])${queryIds ? ' AND query_id = ANY($3::text[])' : ''}`,
      queryIds ? [runId, copilots, queryIds] : [runId, copilots],
    );
    return rows.map((r) => ({ queryId: r.query_id, copilot: r.copilot, status: r.status }));
  }

  async reopenItems(runId: string, items: ReopenedItems): Promise<void> {
    await this.db.transaction(async (c) => {
      for (const r of items.responses) {
        await c.query('DELETE FROM responses WHERE run_id = $1 AND query_id = $2 AND copilot = $3', [
          runId,
          r.queryId,
          r.copilot,
        ]);
        // A failed agent answer is asked afresh: its trajectory goes with it (as a judge conversation's turns do).
        await c.query('DELETE FROM agent_steps WHERE run_id = $1 AND query_id = $2 AND copilot = $3', [
          runId,
          r.queryId,
          r.copilot,
        ]);
      }
      for (const j of items.judgments)
        await c.query(
          'DELETE FROM judgments WHERE run_id = $1 AND query_id = $2 AND copilot = $3 AND sample = $4 AND judge_name = $5',
          [runId, j.queryId, j.copilot, j.sample, j.judge],
        );
      for (const t of items.turns)
        await c.query(
          'DELETE FROM judge_turns WHERE run_id = $1 AND query_id = $2 AND sample = $3 AND judge_name = $4',
          [runId, t.queryId, t.sample, t.judge],
        );
      await c.query("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = $1", [runId]);
    });
  }

  async adoptResponses(fromRunId: string, toRunId: string): Promise<number> {
    return this.db.transaction(async (c) => {
      // An agent copilot's answer comes with its trajectory (the steps its report and traces show).
      await c.query(
        'INSERT INTO agent_steps SELECT $1, query_id, copilot, seq, kind, step FROM agent_steps WHERE run_id = $2 ON CONFLICT DO NOTHING',
        [toRunId, fromRunId],
      );
      return (
        (
          await c.query(
            `INSERT INTO responses SELECT $1, query_id, copilot, status, text, raw, html, adapter, started_at, finished_at, latency_ms, error_kind, error_message, conversation_id, context, sources FROM responses WHERE run_id = $2 ON CONFLICT DO NOTHING`,
            [toRunId, fromRunId],
          )
        ).rowCount ?? 0
      );
    });
  }

  // ---- judging ----------------------------------------------------------------
  async putJudgeUnits(runId: string, units: JudgeUnit[], plan?: unknown): Promise<void> {
    const unitTexts = units.map((u) => JSON.stringify(u));
    const planText = plan === undefined ? undefined : JSON.stringify(plan); // serialised before the transaction: a plan that cannot be stored stores nothing
    await this.db.transaction((c) => this.insertJudgeUnits(c, runId, unitTexts, planText));
  }

  private async insertJudgeUnits(
    c: Queryable,
    runId: string,
    unitTexts: string[],
    planText: string | undefined,
  ): Promise<number> {
    const added = unitTexts.length
      ? ((
          await c.query(
            'INSERT INTO judge_units SELECT $1, ord - 1, unit FROM unnest($2::text[]) WITH ORDINALITY AS u(unit, ord) ON CONFLICT DO NOTHING',
            [runId, unitTexts],
          )
        ).rowCount ?? 0)
      : 0;
    if (planText !== undefined) await insertIgnore(c, 'kv', [`plan:${runId}`, planText]);
    return added;
  }

  async appendJudgeUnits(runId: string, units: JudgeUnit[]): Promise<number> {
    const unitTexts = units.map((u) => JSON.stringify(u));
    return this.db.transaction(async (c) => {
      // One appender per run at a time (the run's workflow plans serially; a retried attempt may overlap the first).
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`judge-units:${runId}`]);
      // Indices run 0…n-1 without a gap: the largest is one index lookup, where COUNT(*) reads every unit of the run.
      let count = Number(
        (await c.query('SELECT coalesce(max(idx) + 1, 0) AS n FROM judge_units WHERE run_id = $1', [runId])).rows[0].n,
      );
      for (const unit of unitTexts) {
        const found = await c.query(
          'SELECT 1 FROM judge_units WHERE run_id = $1 AND md5(unit) = md5($2) AND unit = $2',
          [runId, unit],
        );
        if (!found.rowCount) await c.query('INSERT INTO judge_units VALUES ($1, $2, $3)', [runId, count++, unit]);
      }
      return count;
    });
  }

  async storeId(): Promise<string> {
    await insertIgnore(await this.db.ready(), 'kv', ['store-id', crypto.randomBytes(16).toString('hex')]);
    return (await this.db.rows('SELECT value FROM kv WHERE key = $1', ['store-id']))[0].value;
  }

  async runPlan(runId: string): Promise<unknown> {
    const [row] = await this.db.rows('SELECT value FROM kv WHERE key = $1', [`plan:${runId}`]);
    return row ? JSON.parse(row.value) : undefined;
  }

  async judgeUnits(runId: string, from = 0, to = END): Promise<JudgeUnit[]> {
    return (
      await this.db.rows('SELECT unit FROM judge_units WHERE run_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx', [
        runId,
        from,
        Math.min(to, END),
      ])
    ).map((r) => JSON.parse(r.unit) as JudgeUnit);
  }

  // ---- grounding checks ----------------------------------------------------------
  async putGroundingCheck(check: StoredGroundingCheck): Promise<void> {
    await this.db.transaction((c) => this.insertGroundingCheck(c, check));
  }

  private async insertGroundingCheck(c: Queryable, check: StoredGroundingCheck): Promise<number> {
    const added = await insertIgnore(c, 'grounding_checks', groundingCheckRow(check));
    if (added) for (const row of groundingClaimRows(check)) await insertIgnore(c, 'grounding_claims', row);
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
    const where = 'run_id = $1 AND query_id = $2 AND copilot = $3 AND grounding_version = $4 AND judge_name = $5';
    const [row] = await this.db.rows(`SELECT * FROM grounding_checks WHERE ${where}`, key);
    return row
      ? toGroundingCheck(row, await this.db.rows(`SELECT * FROM grounding_claims WHERE ${where} ORDER BY idx`, key))
      : null;
  }

  async groundingChecks(runId: string, groundingVersion?: string): Promise<StoredGroundingCheck[]> {
    const filter = groundingVersion === undefined ? '' : ' AND grounding_version = $2';
    const args = groundingVersion === undefined ? [runId] : [runId, groundingVersion];
    const checks = await this.db.rows(
      `SELECT * FROM grounding_checks WHERE run_id = $1${filter} ORDER BY query_id, copilot, grounding_version, judge_name`,
      args,
    );
    const claims = await this.db.rows(
      `SELECT * FROM grounding_claims WHERE run_id = $1${filter} ORDER BY query_id, copilot, grounding_version, judge_name, idx`,
      args,
    );
    return groupClaims(checks, claims);
  }

  async putJudgment(j: StoredJudgment): Promise<void> {
    await this.insertJudgment(await this.db.ready(), j);
  }

  async putJudgments(judgments: StoredJudgment[]): Promise<void> {
    await this.db.transaction(async (c) => {
      for (const j of judgments) await this.insertJudgment(c, j);
    });
  }

  private async insertJudgment(c: Queryable, j: StoredJudgment): Promise<number> {
    const verdict = [
      j.status,
      json(j.scores),
      json(j.rationales),
      j.total,
      j.rank,
      j.position,
      j.error,
      JSON.stringify(j.judge),
      j.attempts,
      j.createdAt,
    ];
    return insertIgnore(
      c,
      'judgments',
      [j.runId, j.queryId, j.copilot, j.rubricVersion, ...verdict, j.sample ?? 0, j.judgeName ?? ''],
      JUDGMENT_COLUMNS,
    );
  }

  async getJudgment(
    runId: string,
    queryId: string,
    copilot: string,
    rubricVersion: string,
    slot: JudgeSlot = FIRST_SLOT,
  ): Promise<StoredJudgment | null> {
    const [row] = await this.db.rows(
      'SELECT * FROM judgments WHERE run_id = $1 AND query_id = $2 AND copilot = $3 AND rubric_version = $4 AND sample = $5 AND judge_name = $6',
      [runId, queryId, copilot, rubricVersion, slot.sample, slot.judge],
    );
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
      ? await this.db.rows(`SELECT ${columns} FROM judgments WHERE run_id = $1 AND rubric_version = $2 ${order}`, [
          runId,
          rubricVersion,
        ])
      : await this.db.rows(`SELECT ${columns} FROM judgments WHERE run_id = $1 ${order}`, [runId]);
    return sharingRepeats(rows, toJudgment);
  }

  async judgmentRationales(runId: string, rubricVersion: string, queryIds: string[]): Promise<VerdictRationales[]> {
    const rows = await this.db.rows(
      'SELECT query_id, copilot, sample, judge_name, rationales FROM judgments WHERE run_id = $1 AND rubric_version = $2 AND query_id = ANY($3::text[])',
      [runId, rubricVersion, queryIds],
    );
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
    await this.insertJudgeTurn(await this.db.ready(), runId, queryId, rubricVersion, turn, request, answer, slot);
  }

  private async insertJudgeTurn(
    c: Queryable,
    runId: string,
    queryId: string,
    rubricVersion: string,
    turn: number,
    request: unknown,
    answer: string,
    slot: JudgeSlot,
  ): Promise<number> {
    return insertIgnore(
      c,
      'judge_turns',
      [runId, queryId, rubricVersion, turn, JSON.stringify(request), answer, slot.sample, slot.judge],
      JUDGE_TURN_COLUMNS,
    );
  }

  async judgeTurns(
    runId: string,
    queryId: string,
    rubricVersion: string,
    slot: JudgeSlot = FIRST_SLOT,
  ): Promise<StoredJudgeTurn[]> {
    const where = 'run_id = $1 AND query_id = $2 AND rubric_version = $3 AND sample = $4 AND judge_name = $5';
    return (
      await this.db.rows(`SELECT turn, request, answer FROM judge_turns WHERE ${where} ORDER BY turn`, [
        runId,
        queryId,
        rubricVersion,
        slot.sample,
        slot.judge,
      ])
    ).map((r) => ({ turn: r.turn, request: JSON.parse(r.request), answer: r.answer }));
  }

  // ---- answer cache -----------------------------------------------------------
  async cachedAnswer(key: string): Promise<string | null> {
    const [row] = await this.db.rows('SELECT answer FROM judge_cache WHERE cache_key = $1', [key]);
    return row?.answer ?? null;
  }

  async cacheAnswer(key: string, answer: string): Promise<void> {
    await this.insertCachedAnswer(await this.db.ready(), key, answer, new Date().toISOString());
  }

  private async insertCachedAnswer(c: Queryable, key: string, answer: string, createdAt: string): Promise<number> {
    return insertIgnore(c, 'judge_cache', [key, answer, createdAt]);
  }

  // ---- cost ---------------------------------------------------------------------
  async putLlmCall(c: LlmCallRecord): Promise<void> {
    await this.db.transaction((t) => this.insertLlmCall(t, c));
  }

  /**
   * Not idempotent by design (there is no key: every attempt sent is a call), so a plain INSERT. Inside a transaction
   * holding the run's llm_calls lock shared (writers never wait for each other), so llmCallsAfter can wait for every
   * insert under way before it reads.
   */
  private async insertLlmCall(c: Queryable, call: LlmCallRecord): Promise<number> {
    await c.query('SELECT pg_advisory_xact_lock_shared(hashtext($1))', [`llm_calls:${call.runId}`]);
    const usage = [
      call.promptTokens,
      call.completionTokens,
      call.cachedTokens,
      call.latencyMs,
      call.ok,
      call.errorKind,
      call.at,
      call.batch ?? false,
      call.requestChars ?? null,
      call.replyChars ?? null,
      call.reused ?? false,
    ];
    return (
      (
        await c.query(
          `INSERT INTO llm_calls (${LLM_CALL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          [call.runId, call.role, call.name, call.model, call.queryId, ...usage],
        )
      ).rowCount ?? 0
    );
  }

  // ---- batch judging ------------------------------------------------------------
  async putJudgeBatch(
    b: StoredJudgeBatch,
    lines: Array<Pick<StoredBatchLine, 'customId' | 'queryId' | 'callName'>>,
  ): Promise<void> {
    await this.db.transaction(async (c) => {
      const added = (
        await c.query('INSERT INTO judge_batches VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING', [
          b.runId,
          b.key,
          b.batchId,
          b.api,
          JSON.stringify(b.endpoint),
          b.state,
          JSON.stringify(b.counts),
          b.lines,
          b.createdAt,
        ])
      ).rowCount;
      if (added && lines.length)
        await c.query(
          "INSERT INTO judge_batch_lines SELECT $1, l.id, $2, l.q, l.n, 'submitted', NULL, NULL FROM unnest($3::text[], $4::text[], $5::text[]) AS l(id, q, n) ON CONFLICT (run_id, custom_id) DO UPDATE SET batch_key = excluded.batch_key WHERE judge_batch_lines.status = 'submitted'",
          [b.runId, b.key, lines.map((l) => l.customId), lines.map((l) => l.queryId), lines.map((l) => l.callName)],
        );
    });
  }

  async updateJudgeBatch(
    runId: string,
    key: string,
    u: Pick<StoredJudgeBatch, 'batchId' | 'state' | 'counts'>,
  ): Promise<void> {
    await this.db.rows(
      'UPDATE judge_batches SET batch_id = $1, state = $2, counts = $3 WHERE run_id = $4 AND key = $5',
      [u.batchId, u.state, JSON.stringify(u.counts), runId, key],
    );
  }

  async judgeBatches(runId: string): Promise<StoredJudgeBatch[]> {
    return (await this.db.rows('SELECT * FROM judge_batches WHERE run_id = $1 ORDER BY created_at, key', [runId])).map(
      toJudgeBatch,
    );
  }

  async batchLine(runId: string, customId: string): Promise<StoredBatchLine | null> {
    const [row] = await this.db.rows('SELECT * FROM judge_batch_lines WHERE run_id = $1 AND custom_id = $2', [
      runId,
      customId,
    ]);
    return row ? toBatchLine(row) : null;
  }

  async batchLines(runId: string, batchKey: string): Promise<StoredBatchLine[]> {
    return (
      await this.db.rows('SELECT * FROM judge_batch_lines WHERE run_id = $1 AND batch_key = $2 ORDER BY custom_id', [
        runId,
        batchKey,
      ])
    ).map(toBatchLine);
  }

  async settleBatchLines(runId: string, lines: Parameters<ResultsStore['settleBatchLines']>[1]): Promise<number> {
    return this.db.transaction(async (c) => {
      let settled = 0;
      for (const line of lines) {
        const changed = (
          await c.query(
            "UPDATE judge_batch_lines SET status = $1, body = $2, error = $3 WHERE run_id = $4 AND custom_id = $5 AND status = 'submitted'",
            [line.status, line.body === null ? null : JSON.stringify(line.body), line.error, runId, line.customId],
          )
        ).rowCount;
        if (!changed) continue;
        settled++;
        if (line.call) await this.insertLlmCall(c, line.call);
      }
      return settled;
    });
  }

  async llmCalls(runId: string): Promise<LlmCallRecord[]> {
    return (await this.db.rows('SELECT * FROM llm_calls WHERE run_id = $1 ORDER BY at, seq', [runId])).map(toLlmCall);
  }

  async llmCallsAfter(
    runId: string,
    cursor: number,
    limit = 10_000,
  ): Promise<{ calls: LlmCallRecord[]; cursor: number }> {
    // seq is taken at INSERT but seen at COMMIT, so a row with a lower seq than one already read could still appear.
    // Holding the run's llm_calls lock exclusively waits out the inserts under way (each holds it shared); a later
    // insert then takes a higher seq than any row read here.
    return this.db.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`llm_calls:${runId}`]);
      const rows = (
        await c.query('SELECT * FROM llm_calls WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [
          runId,
          cursor,
          limit,
        ])
      ).rows;
      return { calls: rows.map(toLlmCall), cursor: rows.length ? Number(rows[rows.length - 1].seq) : cursor };
    });
  }

  // ---- pacing shared by a run's workers ---------------------------------------------
  async claimSendSlot(runId: string, endpoint: string, earliest: number, spacingMs: number): Promise<number> {
    // One upsert: the row is locked for the update, so concurrent claimers take turns and each gets its own slot.
    const [row] = await this.db.rows<{ slot: number }>(
      `INSERT INTO send_slots AS s (run_id, endpoint, next_at) VALUES ($1, $2, $3::float8 + $4::float8)
       ON CONFLICT (run_id, endpoint) DO UPDATE SET next_at = GREATEST(s.next_at, $3::float8) + $4::float8
       RETURNING s.next_at - $4::float8 AS slot`,
      [runId, endpoint, earliest, spacingMs],
    );
    return Number(row.slot);
  }

  async notePriority(runId: string, priorityKey: number, at: number, withinMs: number): Promise<number> {
    // One round trip; the query's snapshot does not see its own upsert, hence LEAST with the noted key.
    const [row] = await this.db.rows<{ top: number }>(
      `WITH noted AS (
         INSERT INTO run_priorities AS p (run_id, priority_key, seen_at) VALUES ($1, $2::int, $3::float8)
         ON CONFLICT (run_id) DO UPDATE SET priority_key = EXCLUDED.priority_key, seen_at = GREATEST(p.seen_at, EXCLUDED.seen_at)
         RETURNING priority_key)
       SELECT LEAST((SELECT min(priority_key) FROM run_priorities WHERE seen_at >= $3::float8 - $4::float8), (SELECT priority_key FROM noted)) AS top`,
      [runId, priorityKey, at, withinMs],
    );
    return Number(row.top);
  }

  // ---- snapshot jobs ----------------------------------------------------------
  async putWork(jobId: string, key: string, value: unknown): Promise<void> {
    await this.insertWork(await this.db.ready(), jobId, key, value);
  }

  private async insertWork(c: Queryable, jobId: string, key: string, value: unknown): Promise<number> {
    return insertIgnore(c, 'snapshot_work', [jobId, key, JSON.stringify(value)]);
  }

  async getWork<T>(jobId: string, key: string): Promise<T | null> {
    const [row] = await this.db.rows('SELECT value FROM snapshot_work WHERE job_id = $1 AND key = $2', [jobId, key]);
    return row ? (JSON.parse(row.value) as T) : null;
  }

  // ---- artefacts ------------------------------------------------------------------
  async putArtefact(a: NewArtefact): Promise<string> {
    const artefactId = artefactIdOf(a.runId, a.name);
    await this.insertArtefact(await this.db.ready(), { ...a, artefactId, createdAt: new Date().toISOString() });
    return artefactId;
  }

  private async insertArtefact(
    c: Queryable,
    a: Omit<Artefact, 'size' | 'bytes'> & { bytes: Uint8Array },
  ): Promise<number> {
    return insertIgnore(c, 'artefacts', [
      a.artefactId,
      a.runId,
      a.name,
      a.contentType,
      Buffer.from(a.bytes),
      a.createdAt,
    ]);
  }

  async getArtefact(artefactId: string): Promise<Artefact | null> {
    const [row] = await this.db.rows('SELECT * FROM artefacts WHERE artefact_id = $1', [artefactId]);
    return row ? toArtefact(row) : null;
  }

  async artefacts(runId: string): Promise<ArtefactInfo[]> {
    return (
      await this.db.rows(
        `SELECT ${ARTEFACT_INFO_COLUMNS}, octet_length(bytes) AS size FROM artefacts WHERE run_id = $1 ORDER BY name`,
        [runId],
      )
    ).map(toArtefactInfo);
  }

  // ---- agent trajectories and world recordings ---------------------------------------
  async putAgentStep(s: StoredAgentStep): Promise<void> {
    await insertIgnore(await this.db.ready(), 'agent_steps', agentStepRow(s));
  }

  async agentSteps(runId: string, queryId: string, copilot: string): Promise<StoredAgentStep[]> {
    return (
      await this.db.rows(
        'SELECT * FROM agent_steps WHERE run_id = $1 AND query_id = $2 AND copilot = $3 ORDER BY seq',
        [runId, queryId, copilot],
      )
    ).map(toAgentStep);
  }

  async runAgentSteps(runId: string): Promise<StoredAgentStep[]> {
    return (
      await this.db.rows('SELECT * FROM agent_steps WHERE run_id = $1 ORDER BY query_id, copilot, seq', [runId])
    ).map(toAgentStep);
  }

  async putWorldCalls(recording: string, calls: WorldCall[]): Promise<void> {
    await this.db.transaction(async (client) => {
      for (const c of calls) await insertIgnore(client, 'world_calls', worldCallRow(recording, c));
    });
  }

  async worldCalls(recording: string, key?: string): Promise<WorldCall[]> {
    const rows =
      key === undefined
        ? await this.db.rows('SELECT * FROM world_calls WHERE recording = $1 ORDER BY key', [recording])
        : await this.db.rows('SELECT * FROM world_calls WHERE recording = $1 AND key = $2', [recording, key]);
    return rows.map(toWorldCall);
  }

  async worldRecordings(): Promise<WorldRecording[]> {
    const rows = await this.db.rows(
      'SELECT recording, count(*) AS calls, min(recorded_at) AS first_at, max(recorded_at) AS last_at FROM world_calls GROUP BY recording ORDER BY first_at, recording',
      [],
    );
    return rows.map(toWorldRecording);
  }

  // ---- scheduled refresh lineage ---------------------------------------------
  async recordScheduleSnapshot(row: ScheduleSnapshotRow): Promise<void> {
    await this.insertScheduleSnapshot(await this.db.ready(), row);
  }

  private async insertScheduleSnapshot(c: Queryable, row: ScheduleSnapshotRow): Promise<number> {
    return insertIgnore(
      c,
      'schedule_snapshots',
      [row.schedule, row.workflowId, row.snapshotId, row.parentId, row.createdAt, row.runId],
      'schedule, workflow_id, snapshot_id, parent_id, created_at, run_id',
    );
  }

  async setScheduleRun(schedule: string, workflowId: string, runId: string): Promise<void> {
    await this.db.query('UPDATE schedule_snapshots SET run_id = $1 WHERE schedule = $2 AND workflow_id = $3', [
      runId,
      schedule,
      workflowId,
    ]);
  }

  async scheduleSnapshots(schedule: string): Promise<ScheduleSnapshotRow[]> {
    return (
      await this.db.rows('SELECT * FROM schedule_snapshots WHERE schedule = $1 ORDER BY created_at DESC, seq DESC', [
        schedule,
      ])
    ).map(toScheduleSnapshot);
  }

  // ---- copying a whole store -------------------------------------------------------
  exportRecords(): AsyncIterable<StoreRecord[]> {
    const db = this.db;
    return exportRecords(this, {
      async *pages(sql) {
        for (let offset = 0; ; offset += EXPORT_PAGE) {
          const rows = await db.rows(`${sql} LIMIT $1 OFFSET $2`, [EXPORT_PAGE, offset]);
          if (rows.length) yield rows;
          if (rows.length < EXPORT_PAGE) return;
        }
      },
      column: async (sql) => (await db.rows(sql)).map((r) => Object.values(r)[0] as string),
      insertionOrder: 'seq',
      studyDump: (name) => this.studies.dump(name),
    });
  }

  async importRecords(batch: StoreRecord[]): Promise<RecordCounts> {
    return this.db.transaction(async (c) => {
      const counts: RecordCounts = {};
      for (const record of batch)
        counts[record.kind] = (counts[record.kind] ?? 0) + (await this.importRecord(c, record));
      return counts;
    });
  }

  /** One record, first write wins; returns how many rows it added. */
  private async importRecord(c: Queryable, r: StoreRecord): Promise<number> {
    switch (r.kind) {
      case 'snapshot':
        return this.insertSnapshot(c, r.snapshot, r.queries);
      case 'rubric':
        return this.insertRubric(c, r.version, r.protocol, r.content, r.storedAt);
      case 'run':
        return this.insertRun(c, r.run);
      case 'response':
        return this.insertResponse(c, r.response);
      case 'judgeUnits':
        return this.insertJudgeUnits(
          c,
          r.runId,
          r.units.map((u) => JSON.stringify(u)),
          r.plan === undefined ? undefined : JSON.stringify(r.plan),
        );
      case 'judgment':
        return this.insertJudgment(c, r.judgment);
      case 'judgeTurn':
        return this.insertJudgeTurn(c, r.runId, r.queryId, r.rubricVersion, r.turn, r.request, r.answer, r.slot);
      case 'llmCalls': {
        // Serialised per run, so two copies running at once cannot both find the run empty.
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`llm_calls:${r.runId}`]);
        if ((await c.query('SELECT 1 FROM llm_calls WHERE run_id = $1 LIMIT 1', [r.runId])).rowCount) return 0;
        let added = 0;
        for (const call of r.calls) added += await this.insertLlmCall(c, call);
        return added;
      }
      case 'cachedAnswer':
        return this.insertCachedAnswer(c, r.key, r.answer, r.createdAt);
      case 'work':
        return this.insertWork(c, r.jobId, r.key, r.value);
      case 'scheduleSnapshot':
        return this.insertScheduleSnapshot(c, r.row);
      case 'groundingCheck':
        return this.insertGroundingCheck(c, r.check);
      case 'agentStep':
        return insertIgnore(c, 'agent_steps', agentStepRow(r.step));
      case 'worldCall':
        return insertIgnore(c, 'world_calls', worldCallRow(r.recording, r.call));
      case 'artefact':
        return this.insertArtefact(c, r.artefact);
      case 'study':
        return this.studies.insertDump(c, r.dump);
    }
  }
}

const agentStepRow = (s: StoredAgentStep) => [
  s.runId,
  s.queryId,
  s.copilot,
  s.step.seq,
  s.step.kind,
  JSON.stringify(s.step),
];
const worldCallRow = (recording: string, c: WorldCall) => [
  recording,
  c.key,
  c.tool,
  c.arguments,
  c.result,
  c.isError,
  c.recordedAt,
];
