import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../stores/sqliteSchema';
import { tempDir } from './harness';

/** A SQLite store as a judgeflow of schema version `version` made it (its migrations up to there applied): its file. */
export function olderSqliteStore(version: number, file = path.join(tempDir('jf-old-store-'), 'results.db')): string {
  const db = new Database(file);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= version)) {
    if (typeof m.up === 'string') db.exec(m.up);
    else m.up(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00Z');
  }
  db.close();
  return file;
}
