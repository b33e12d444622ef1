import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { InputError } from '../../core/model/inputError';
import { openExistingStore, parseStoreSpec, storeTarget } from '../../stores';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';
import { aRun, describeStoreContract, expectOldVerdictsAsFirstSlot } from './contract';

describeStoreContract('sqlite', () => {
  const dir = tempDir('jf-store-');
  const file = path.join(dir, 'results.db');
  return { open: () => new SqliteStore(file), dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
});

const mode = (f: string) => fs.statSync(f).mode & 0o777;

describe('sqlite store files', () => {
  test('the directory is created 0700 and results.db with its -wal and -shm 0600, whatever the umask', async () => {
    const dir = path.join(tempDir('jf-perm-'), 'nested', 'home');
    const file = path.join(dir, 'results.db');
    const previous = process.umask(0o000);
    let store: SqliteStore;
    try {
      store = new SqliteStore(file);
      await store.createRun(aRun('r1')); // a write, so the WAL exists
    } finally {
      process.umask(previous);
    }
    try {
      expect(mode(dir)).toBe(0o700);
      expect(mode(path.dirname(dir))).toBe(0o700);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        expect(fs.existsSync(f)).toBe(true);
        expect(mode(f)).toBe(0o600);
      }
    } finally {
      await store!.close();
    }
  });

  test('a store file left world-readable by an older version is made owner-only when opened', async () => {
    const file = path.join(tempDir('jf-perm-'), 'results.db');
    await new SqliteStore(file).close();
    fs.chmodSync(file, 0o644);
    const store = new SqliteStore(file);
    try {
      expect(mode(file)).toBe(0o600);
    } finally {
      await store.close();
    }
  });
});

describe('choosing the store (JUDGEFLOW_STORE)', () => {
  test('a file path, sqlite:PATH, sqlite:///ABS, or the default under JUDGEFLOW_HOME', () => {
    expect(parseStoreSpec('data/results.db')).toEqual({ kind: 'sqlite', file: path.resolve('data/results.db') });
    expect(parseStoreSpec('sqlite:data/r.db')).toEqual({ kind: 'sqlite', file: path.resolve('data/r.db') });
    expect(parseStoreSpec('sqlite:///srv/jf/r.db')).toEqual({ kind: 'sqlite', file: '/srv/jf/r.db' });
    expect(parseStoreSpec('SQLITE:/srv/jf/r.db')).toEqual({ kind: 'sqlite', file: '/srv/jf/r.db' });
    expect(storeTarget({ JUDGEFLOW_HOME: '/srv/jf' })).toEqual({ kind: 'sqlite', file: '/srv/jf/results.db' });
    expect(storeTarget({ JUDGEFLOW_HOME: '/srv/jf', JUDGEFLOW_STORE: ' /x/y.db ' })).toEqual({
      kind: 'sqlite',
      file: '/x/y.db',
    });
  });

  test('an unknown scheme is an input error that names it and never echoes a password', () => {
    const attempt = () => parseStoreSpec('mysql://jf:s3cret@db.internal/judgeflow');
    expect(attempt).toThrow(InputError);
    expect(attempt).toThrow(
      /unknown results store scheme "mysql:"; use a file path, sqlite:PATH or postgres:\/\/USER@HOST\/DATABASE/,
    );
    expect(attempt).toThrow(/mysql:\/\/\*\*\*@db\.internal/);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain('s3cret');
    }
    expect(() => parseStoreSpec('sqlite:')).toThrow(/names no file/);
  });

  test('read-only commands open the store only when it exists (nothing is created)', async () => {
    const home = tempDir('jf-home-');
    const env = { JUDGEFLOW_HOME: home };
    expect(await openExistingStore(env)).toBeNull();
    expect(fs.existsSync(path.join(home, 'results.db'))).toBe(false);
    const made = new SqliteStore(path.join(home, 'results.db'));
    await made.createRun(aRun('visible'));
    await made.close();
    const store = await openExistingStore(env);
    expect(await store!.getRun('visible')).toMatchObject({ runId: 'visible' });
  });
});

describe('sqlite schema migration', () => {
  test('a store made before samples and panels keeps its judgments and turns as sample 0 of judge "" and takes new slots', async () => {
    const dir = tempDir('jf-migrate-');
    const file = path.join(dir, 'results.db');
    // The two tables exactly as releases before repeated judging created them.
    const old = new Database(file);
    old.exec(`CREATE TABLE judgments (run_id TEXT NOT NULL, query_id TEXT NOT NULL, copilot TEXT NOT NULL, rubric_version TEXT NOT NULL, status TEXT NOT NULL, scores TEXT, rationales TEXT, total REAL, rank INTEGER, position INTEGER, error TEXT, judge TEXT NOT NULL, attempts INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, query_id, copilot, rubric_version));
      CREATE TABLE judge_turns (run_id TEXT NOT NULL, query_id TEXT NOT NULL, rubric_version TEXT NOT NULL, turn INTEGER NOT NULL, request TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (run_id, query_id, rubric_version, turn));`);
    old
      .prepare('INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(
        'r1',
        'q1',
        'Ace',
        'rv1',
        'ok',
        '{"d1":7}',
        '{"d1":"ok"}',
        70,
        null,
        null,
        null,
        '{"model":"m","baseURL":"u","temperature":0,"rubricVersion":"rv1"}',
        1,
        '2025-01-01T00:00:00.000Z',
      );
    old
      .prepare('INSERT INTO judge_turns VALUES (?, ?, ?, ?, ?, ?)')
      .run('r1', 'q1', 'rv1', 1, '{"kind":"scoring"}', 'old answer');
    old.close();

    const [a, b] = [new SqliteStore(file), new SqliteStore(file)]; // two processes opening it: migrated once
    try {
      await expectOldVerdictsAsFirstSlot(a, b, { kind: 'scoring' });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
