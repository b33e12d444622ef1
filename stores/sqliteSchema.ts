import type Database from 'better-sqlite3';
import type { MigrationReport } from '../core/model/store';
import { latestVersion, pendingMigrations, type Migration } from './migrations';

/**
 * The SQLite store's schema, as versioned migrations (the same versions and names as stores/postgresSchema.ts).
 * Version 1 is the schema as it was before slots (sample, panel judge) and before migrations were versioned, so it uses
 * IF NOT EXISTS: stores made before then take it as a no-op.
 */

/** Judgments and judge turns keyed by sample and panel judge too (version 2). */
const JUDGMENT_COLUMNS =
  "run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, rubric_version TEXT NOT NULL, status TEXT NOT NULL, scores TEXT, rationales TEXT, total REAL, rank INTEGER, position INTEGER, error TEXT, judge TEXT NOT NULL, attempts INTEGER NOT NULL, created_at TEXT NOT NULL, sample INTEGER NOT NULL DEFAULT 0, judge_name TEXT NOT NULL DEFAULT '', PRIMARY KEY (run_id, query_id, copilot, rubric_version, sample, judge_name)";
const JUDGE_TURN_COLUMNS =
  "run_id TEXT NOT NULL, query_id TEXT NOT NULL, rubric_version TEXT NOT NULL, turn INTEGER NOT NULL, request TEXT NOT NULL, answer TEXT NOT NULL, sample INTEGER NOT NULL DEFAULT 0, judge_name TEXT NOT NULL DEFAULT '', PRIMARY KEY (run_id, query_id, rubric_version, sample, judge_name, turn)";

export const SQLITE_MIGRATIONS: Array<Migration<Database.Database>> = [
  {
    version: 1,
    name: 'runs, snapshots, responses, judging, cost, schedules and studies',
    up: `
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
CREATE TABLE IF NOT EXISTS snapshot_work (job_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (job_id, key));
CREATE TABLE IF NOT EXISTS schedule_snapshots (schedule TEXT NOT NULL, workflow_id TEXT NOT NULL, snapshot_id TEXT NOT NULL, parent_id TEXT, created_at TEXT NOT NULL, run_id TEXT, PRIMARY KEY (schedule, workflow_id));
CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, closed_at TEXT, workflow_id TEXT NOT NULL, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS study_items (study TEXT NOT NULL, item_id TEXT NOT NULL, query_id TEXT NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL, PRIMARY KEY (study, item_id));
CREATE TABLE IF NOT EXISTS study_assignments (assignment_id TEXT PRIMARY KEY, study TEXT NOT NULL, item_id TEXT NOT NULL, slot INTEGER NOT NULL, left_copilot TEXT NOT NULL, right_copilot TEXT NOT NULL, annotator_id TEXT, ord INTEGER);
CREATE INDEX IF NOT EXISTS study_assignments_by_annotator ON study_assignments (annotator_id, ord);
CREATE INDEX IF NOT EXISTS study_assignments_by_study ON study_assignments (study, slot);
CREATE TABLE IF NOT EXISTS study_annotators (annotator_id TEXT PRIMARY KEY, study TEXT NOT NULL, label TEXT NOT NULL, token_hash TEXT UNIQUE, source TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS study_submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL UNIQUE, study TEXT NOT NULL, assignment_id TEXT NOT NULL, annotator_id TEXT NOT NULL, answer TEXT NOT NULL, received_at TEXT NOT NULL, status TEXT NOT NULL, note TEXT);
CREATE INDEX IF NOT EXISTS study_submissions_pending ON study_submissions (status, seq);
CREATE INDEX IF NOT EXISTS study_submissions_by_assignment ON study_submissions (assignment_id, seq);
CREATE TABLE IF NOT EXISTS study_annotations (assignment_id TEXT PRIMARY KEY, study TEXT NOT NULL, submission_seq INTEGER NOT NULL, answer TEXT NOT NULL, revision INTEGER NOT NULL, submitted_at TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS study_events (study TEXT NOT NULL, at TEXT NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);
`,
  },
  {
    version: 2,
    name: 'judgments and judge turns keyed by sample and panel judge',
    // SQLite cannot change a primary key: rebuild both tables, old rows becoming sample 0 of judge ''. Stores made
    // between that change and versioned migrations have the columns already and are left as they are.
    up: (db) => {
      const hasSample = (table: string) =>
        (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((c) => c.name === 'sample');
      for (const [table, columns] of [
        ['judgments', JUDGMENT_COLUMNS],
        ['judge_turns', JUDGE_TURN_COLUMNS],
      ]) {
        if (hasSample(table)) continue;
        db.exec(
          `CREATE TABLE ${table}_slots (${columns}); INSERT INTO ${table}_slots SELECT *, 0, '' FROM ${table}; DROP TABLE ${table}; ALTER TABLE ${table}_slots RENAME TO ${table};`,
        );
      }
    },
  },
  {
    version: 3,
    name: 'judge units found by content (runs that judge while they collect append units)',
    up: 'CREATE INDEX IF NOT EXISTS judge_units_by_unit ON judge_units (run_id, unit);',
  },
  {
    version: 4,
    name: 'artefacts (failure screenshots) stored with their bytes',
    up: `
CREATE TABLE artefacts (artefact_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, name TEXT NOT NULL, content_type TEXT NOT NULL, bytes BLOB NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX artefacts_by_run ON artefacts (run_id, name);
`,
  },
  {
    version: 5,
    name: 'response sources, grounding checks and their claims',
    up: `
ALTER TABLE responses ADD COLUMN sources TEXT;
CREATE TABLE grounding_checks (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, grounding_version TEXT NOT NULL, judge_name TEXT NOT NULL, status TEXT NOT NULL, label TEXT, error TEXT, judge TEXT NOT NULL, attempts INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, query_id, copilot, grounding_version, judge_name));
CREATE TABLE grounding_claims (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, grounding_version TEXT NOT NULL, judge_name TEXT NOT NULL, idx INTEGER NOT NULL, text TEXT NOT NULL, status TEXT NOT NULL, excerpt TEXT, entity TEXT, metric TEXT, value REAL, unit TEXT, cited_source TEXT, citation TEXT, PRIMARY KEY (run_id, query_id, copilot, grounding_version, judge_name, idx));
`,
  },
  {
    version: 6,
    name: 'judge batches (provider Batch APIs) and their lines; calls answered through a batch',
    up: `
ALTER TABLE llm_calls ADD COLUMN via_batch INTEGER NOT NULL DEFAULT 0;
CREATE TABLE judge_batches (run_id TEXT NOT NULL, key TEXT NOT NULL, batch_id TEXT, api TEXT NOT NULL, endpoint TEXT NOT NULL, state TEXT NOT NULL, counts TEXT NOT NULL, lines INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE TABLE judge_batch_lines (run_id TEXT NOT NULL, custom_id TEXT NOT NULL, batch_key TEXT NOT NULL, query_id TEXT NOT NULL, call_name TEXT NOT NULL, status TEXT NOT NULL, body TEXT, error TEXT, PRIMARY KEY (run_id, custom_id));
CREATE INDEX judge_batch_lines_batch ON judge_batch_lines (run_id, batch_key);
`,
  },
  {
    version: 7,
    name: "LLM calls' request and reply sizes (spend estimated where an endpoint reports no usage)",
    up: `
ALTER TABLE llm_calls ADD COLUMN request_chars INTEGER;
ALTER TABLE llm_calls ADD COLUMN reply_chars INTEGER;
`,
  },
  {
    version: 8,
    name: "grounding checks: what the judge stated about the whole answer (the reference's labels)",
    up: 'ALTER TABLE grounding_checks ADD COLUMN stated TEXT;',
  },
  {
    version: 9,
    name: "agent copilots' trajectory steps and world recordings (tool results, replayable)",
    up: `
CREATE TABLE agent_steps (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, step TEXT NOT NULL, PRIMARY KEY (run_id, query_id, copilot, seq));
CREATE TABLE world_calls (recording TEXT NOT NULL, key TEXT NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, result TEXT NOT NULL, is_error INTEGER NOT NULL, recorded_at TEXT NOT NULL, PRIMARY KEY (recording, key));
`,
  },
  {
    version: 10,
    name: 'LLM calls answered from the store (--reuse-judgments): no request sent, counted apart with the price they avoided',
    up: 'ALTER TABLE llm_calls ADD COLUMN reused INTEGER NOT NULL DEFAULT 0;',
  },
  {
    version: 11,
    name: "paced sends shared by a run's workers: each paced endpoint's next free send slot",
    up: 'CREATE TABLE send_slots (run_id TEXT NOT NULL, endpoint TEXT NOT NULL, next_at REAL NOT NULL, PRIMARY KEY (run_id, endpoint));',
  },
  {
    version: 12,
    name: 'runs making calls and their priority, so every worker yields to a run of a higher priority',
    up: 'CREATE TABLE run_priorities (run_id TEXT PRIMARY KEY, priority_key INTEGER NOT NULL, seen_at REAL NOT NULL);',
  },
];

/** Apply what is missing, in one write transaction: SQLite's write lock makes concurrent openers take turns, so each version is applied once. */
export function migrateSqlite(db: Database.Database, location: string): MigrationReport {
  return db
    .transaction(() => {
      db.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      const applied = (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map(
        (r) => r.version,
      );
      const pending = pendingMigrations(SQLITE_MIGRATIONS, applied, location);
      for (const m of pending) {
        if (typeof m.up === 'string') db.exec(m.up);
        else m.up(db);
        db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
      }
      return {
        version: latestVersion(SQLITE_MIGRATIONS),
        applied: pending.map(({ version, name }) => ({ version, name })),
      };
    })
    .immediate();
}
