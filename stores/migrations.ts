/**
 * Versioned schema migrations, shared by every store implementation. Each store keeps a list of migrations with the same
 * versions and names (its own SQL dialect) and records the versions it applied in a `schema_migrations` table.
 * A change to the schema is a new entry at the end of both lists; an applied migration is never edited.
 */
export interface Migration<Db = never> {
  version: number;
  name: string;
  /** DDL, or (where a change depends on what an old store holds) a function run inside the migration's transaction. */
  up: string | ((db: Db) => void);
}

/** The migrations still to apply, in order; refuses a store written by a newer judgeflow (its schema may not be understood). */
export function pendingMigrations<M extends Migration<any>>(migrations: M[], applied: number[], location: string): M[] {
  const known = migrations.length ? migrations[migrations.length - 1].version : 0;
  const newest = Math.max(0, ...applied);
  if (newest > known)
    throw new Error(
      `the results store ${location} has schema version ${newest}, newer than this judgeflow knows (${known}); upgrade judgeflow to use it`,
    );
  const done = new Set(applied);
  return migrations.filter((m) => !done.has(m.version));
}

export const latestVersion = (migrations: Array<Migration<any>>): number =>
  migrations[migrations.length - 1]?.version ?? 0;

/**
 * Read-only commands (`judgeflow runs`, report, status, view, compare, gate…) never migrate: an older judgeflow worker
 * sharing the store would refuse a schema newer than its own. On a store older than this judgeflow they stop here,
 * saying how to upgrade it; `judgeflow store migrate`, `run` and `worker` migrate (and say which migrations they applied).
 */
export function olderStoreProblem(
  migrations: Array<Migration<any>>,
  applied: number[],
  location: string,
): string | null {
  const pending = pendingMigrations(migrations, applied, location);
  if (!pending.length) return null;
  const now = Math.max(0, ...applied);
  return `the results store ${location} has schema version ${now}, older than this judgeflow's ${latestVersion(migrations)}; read-only commands never migrate it (an older worker sharing it would then refuse it). Run \`judgeflow store migrate\` to upgrade it (once every worker using it runs this judgeflow)`;
}
