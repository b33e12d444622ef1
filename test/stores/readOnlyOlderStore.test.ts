import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../stores/sqliteSchema';
import { cliInProcess } from '../support/cliInProcess';
import { olderSqliteStore } from '../support/olderStore';

/**
 * A store made by an older judgeflow (schema version 4): read-only commands never migrate it — an older worker sharing
 * it would refuse a newer schema — and say to run `judgeflow store migrate`; that command migrates and says what it applied.
 */
const OLD_VERSION = 4;

const olderStore = () => olderSqliteStore(OLD_VERSION);

const versions = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>
    ).map((r) => r.version);
  } finally {
    db.close();
  }
};

test('read-only commands on an older store leave its schema as it is and say to run judgeflow store migrate; store migrate migrates and says so', async () => {
  const file = olderStore();
  const env = { JUDGEFLOW_STORE: file };
  const before = versions(file);
  expect(Math.max(...before)).toBe(OLD_VERSION);
  for (const argv of [
    ['runs'],
    ['runs', '--json'],
    ['gate', '--baseline', 'a', '--candidate', 'b'],
    ['compare', 'a', 'b'],
    ['report', 'a'],
    ['trend', '--runs', 'a,b'],
  ]) {
    const out = await cliInProcess(argv, env);
    expect({ argv, code: out.code }).toEqual({ argv, code: 2 });
    expect(out.stderr).toContain(`has schema version ${OLD_VERSION}, older than this judgeflow's`);
    expect(out.stderr).toContain('Run `judgeflow store migrate`');
    expect(versions(file)).toEqual(before);
  }
  const migrated = await cliInProcess(['store', 'migrate'], env);
  expect(migrated.code).toBe(0);
  expect(migrated.stdout).toMatch(new RegExp(`applied ${OLD_VERSION + 1} \\(`));
  expect(Math.max(...versions(file))).toBe(SQLITE_MIGRATIONS.at(-1)!.version);
  const runs = await cliInProcess(['runs', '--json'], env);
  expect({ code: runs.code, stdout: JSON.parse(runs.stdout) }).toEqual({ code: 0, stdout: [] });
});
