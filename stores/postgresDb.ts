import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { MigrationReport } from '../core/model/store';
import { latestVersion, pendingMigrations } from './migrations';
import { POSTGRES_MIGRATIONS } from './postgresSchema';

/** Something to run a statement on: the pool, or one client inside a transaction. */
export type Queryable = Pick<PoolClient, 'query'>;

/**
 * One row, first write wins (INSERT … ON CONFLICT DO NOTHING); returns 1 when it was new, 0 when its key was there.
 * PostgreSQL text cannot hold U+0000, which a copilot's answer or raw payload may contain: it is stored as U+FFFD
 * rather than failing the write (JSON columns are unaffected: JSON.stringify escapes it).
 */
export async function insertIgnore(c: Queryable, table: string, values: unknown[], columns?: string): Promise<number> {
  const placeholders = values.map((_, i) => `$${i + 1}`).join(', ');
  const storable = values.map((v) => (typeof v === 'string' ? v.replace(/\u0000/g, '\uFFFD') : v));
  return (
    (
      await c.query(
        `INSERT INTO ${table}${columns ? ` (${columns})` : ''} VALUES (${placeholders}) ON CONFLICT DO NOTHING`,
        storable,
      )
    ).rowCount ?? 0
  );
}

/** Held while migrating, so concurrent openers (workers starting together) apply each migration exactly once. */
const MIGRATION_LOCK = "hashtext('judgeflow schema migrations')";

/**
 * A connection pool to one PostgreSQL database, shared by the run store and the study store. The schema is brought up to
 * date before the first statement (lazily: opening a store never fails, using it may), once per pool.
 */
export class PostgresDb {
  private readonly pool: Pool;
  private migration: Promise<MigrationReport> | undefined;

  constructor(
    connectionString: string,
    /** For messages; never carries the password. */
    readonly location: string,
  ) {
    this.pool = new Pool({ connectionString, max: 10, application_name: 'judgeflow' });
    // An idle connection dropped by the server (restart, timeout) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Apply pending migrations (the first call does the work; later calls return what it did). */
  migrate(): Promise<MigrationReport> {
    if (!this.migration) {
      this.migration = this.applyMigrations();
      this.migration.catch(() => (this.migration = undefined)); // a failed attempt (server down) is retried by the next call
    }
    return this.migration;
  }

  /** Whether this database holds a judgeflow store (its migrations table), without creating anything. */
  async exists(): Promise<boolean> {
    try {
      const { rows } = await this.wrap(
        this.pool.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present"),
      );
      return rows[0].present as boolean;
    } catch (error) {
      if ((error as { code?: string }).code === '3D000') return false; // no such database: no store either
      throw error;
    }
  }

  /** The schema versions applied, read without migrating (none when the store has no migrations table yet). */
  async appliedVersions(): Promise<number[]> {
    if (!(await this.exists())) return [];
    return (await this.wrap(this.pool.query('SELECT version FROM schema_migrations'))).rows.map(
      (r) => r.version as number,
    );
  }

  /** The pool, once the schema is up to date: for single statements (each is atomic on its own). */
  async ready(): Promise<Queryable> {
    await this.migrate();
    return this.pool;
  }

  async query<R extends QueryResultRow = any>(
    sql: string,
    params: unknown[] = [],
  ): Promise<{ rows: R[]; rowCount: number }> {
    await this.migrate();
    const result = await this.pool.query<R>(sql, params);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  async rows<R extends QueryResultRow = any>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.query<R>(sql, params)).rows;
  }

  /** `fn` inside one transaction on one connection: all its writes or none. */
  async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    await this.migrate();
    const client = await this.pool.connect();
    // The pool listens for errors on idle connections only: a connection the server ends while it is checked out here
    // (a restart, an outage) emits 'error', which with no listener is an uncaught exception. Its query in flight, or the
    // next, rejects anyway, and the catch below drops the connection; the event itself needs only a listener.
    const ignore = () => undefined;
    client.on('error', ignore);
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      client.off('error', ignore);
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').then(
        () => (client.off('error', ignore), client.release()),
        (rollbackError: Error) => (client.off('error', ignore), client.release(rollbackError)), // a broken connection leaves the pool
      );
      throw error;
    }
  }

  private async applyMigrations(): Promise<MigrationReport> {
    const client = await this.wrap(this.pool.connect());
    try {
      await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      try {
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
        );
        const applied = (await client.query('SELECT version FROM schema_migrations')).rows.map(
          (r) => r.version as number,
        );
        const pending = pendingMigrations(POSTGRES_MIGRATIONS, applied, this.location);
        for (const m of pending) {
          await client.query('BEGIN');
          try {
            await client.query(m.up);
            await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw new Error(
              `migration ${m.version} (${m.name}) of the results store ${this.location} failed: ${(error as Error).message}`,
            );
          }
        }
        return {
          version: latestVersion(POSTGRES_MIGRATIONS),
          applied: pending.map(({ version, name }) => ({ version, name })),
        };
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
      }
    } finally {
      client.release();
    }
  }

  /** Connection failures name the store (without its password), so the message says which server could not be reached. */
  private async wrap<T>(attempt: Promise<T>): Promise<T> {
    try {
      return await attempt;
    } catch (error) {
      const e = error as Error & { code?: string };
      throw Object.assign(new Error(`cannot use the results store ${this.location}: ${e.message}`), { code: e.code });
    }
  }
}
