import { Client } from 'pg';
import { InputError } from '../../core/model/inputError';
import { openExistingStore, parseStoreSpec, storeExists, storeLocation, storeTarget } from '../../stores';
import { PostgresStore } from '../../stores/postgres';
import { POSTGRES_MIGRATIONS } from '../../stores/postgresSchema';
import { postgresForFile } from '../support/postgresServer';
import { aRun, describeStoreContract, expectOldVerdictsAsFirstSlot } from './contract';

/** The PostgreSQL results store against a real server started for this file (skipped, with the reason, where none can be). */
const postgres = postgresForFile();
const unavailable = postgres.unavailable;
const describePostgres = postgres.describe;

const location = (url: string) => storeLocation(parseStoreSpec(url));

describePostgres(`postgres${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  describeStoreContract('postgres', async () => {
    const url = await postgres.server().createDatabase();
    const name = new URL(url).pathname.slice(1);
    return { open: () => new PostgresStore(url, location(url)), dispose: () => postgres.server().dropDatabase(name) };
  });

  describe('choosing and finding a PostgreSQL store', () => {
    test('postgres:// and postgresql:// select it; its location never shows the password', () => {
      const spec = 'postgresql://jf:s3cret@db.internal:5433/judgeflow?sslmode=require&password=other';
      expect(parseStoreSpec(spec)).toEqual({ kind: 'postgres', url: spec });
      expect(parseStoreSpec('postgres://jf@db/j')).toEqual({ kind: 'postgres', url: 'postgres://jf@db/j' });
      expect(storeTarget({ JUDGEFLOW_STORE: ' postgres://jf@db/j ' })).toEqual({
        kind: 'postgres',
        url: 'postgres://jf@db/j',
      });
      expect(location(spec)).toBe('postgresql://jf@db.internal:5433/judgeflow?sslmode=require');
      expect(location(postgres.server().url('jf_x'))).not.toContain(encodeURIComponent(postgres.server().password));
      expect(() => parseStoreSpec('postgres://jf:s3cret@')).toThrow(InputError);
      expect(() => parseStoreSpec('postgres://jf:s3cret@')).not.toThrow(/s3cret/);
    });

    test('read-only commands find no store in a database without the schema, and create nothing there', async () => {
      const url = await postgres.server().createDatabase('jf_readonly');
      expect(await openExistingStore({ JUDGEFLOW_STORE: url })).toBeNull();
      expect(await storeExists({ kind: 'postgres', url: postgres.server().url('jf_no_such_database') })).toBe(false);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        expect(
          (await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'"))
            .rows[0].n,
        ).toBe(0);
        const store = new PostgresStore(url, location(url));
        await store.createRun(aRun('visible'));
        await store.close();
        const found = await openExistingStore({ JUDGEFLOW_STORE: url });
        expect(await found!.getRun('visible')).toMatchObject({ runId: 'visible' });
      } finally {
        await client.end();
      }
    });

    test('a server that cannot be reached is an error naming the store without its password', async () => {
      const url = postgres
        .server()
        .url('jf_any')
        .replace(/:(\d+)\//, ':1/');
      const store = new PostgresStore(url, location(url));
      try {
        await expect(store.getRun('x')).rejects.toThrow(
          /cannot use the results store postgres:\/\/judgeflow@127\.0\.0\.1:1\/jf_any: .*ECONNREFUSED/,
        );
        await expect(store.getRun('x')).rejects.not.toThrow(/s3cret/);
      } finally {
        await store.close();
      }
    });
  });

  describe('schema migrations', () => {
    test('several stores opening a fresh database at once apply each migration exactly once', async () => {
      const url = await postgres.server().createDatabase('jf_migrate');
      const stores = Array.from({ length: 4 }, () => new PostgresStore(url, location(url)));
      try {
        const reports = await Promise.all(stores.map((s) => s.migrate()));
        const applied = reports.flatMap((r) => r.applied.map((m) => m.version));
        expect(applied.sort((a, b) => a - b)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version)); // each once, by one of them
        expect(reports.filter((r) => r.applied.length).length).toBe(1);
        expect(new Set(reports.map((r) => r.version))).toEqual(
          new Set([POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1].version]),
        );
        // Everyone can use the store straight away, and agrees on its identity.
        const ids = await Promise.all(stores.map((s) => s.storeId()));
        expect(new Set(ids).size).toBe(1);
        const client = new Client({ connectionString: url });
        await client.connect();
        try {
          expect((await client.query('SELECT version, name FROM schema_migrations ORDER BY version')).rows).toEqual(
            POSTGRES_MIGRATIONS.map(({ version, name }) => ({ version, name })),
          );
        } finally {
          await client.end();
        }
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    test('a store at version 1 (before samples and panels) is migrated in place: old verdicts become sample 0 of judge ""', async () => {
      const url = await postgres.server().createDatabase('jf_v1');
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        // The database exactly as a store at version 1 left it.
        await client.query(POSTGRES_MIGRATIONS[0].up);
        await client.query(
          'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
        );
        await client.query('INSERT INTO schema_migrations (version, name) VALUES (1, $1)', [
          POSTGRES_MIGRATIONS[0].name,
        ]);
        await client.query(
          "INSERT INTO judgments VALUES ('r1', 'q1', 'Ace', 'rv1', 'ok', '{\"d1\":7}', null, 70, null, null, null, '{}', 1, '2025-01-01T00:00:00.000Z')",
        );
        await client.query("INSERT INTO judge_turns VALUES ('r1', 'q1', 'rv1', 1, '{}', 'old answer')");
      } finally {
        await client.end();
      }
      const [a, b] = [new PostgresStore(url, location(url)), new PostgresStore(url, location(url))];
      try {
        const reports = await Promise.all([a.migrate(), b.migrate()]);
        expect(reports.flatMap((r) => r.applied.map((m) => m.version))).toEqual(
          POSTGRES_MIGRATIONS.slice(1).map((m) => m.version),
        );
        await expectOldVerdictsAsFirstSlot(a, b, {});
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('a store migrated by a newer judgeflow is refused with a clear message, not misread', async () => {
      const url = await postgres.server().createDatabase('jf_newer');
      const first = new PostgresStore(url, location(url));
      await first.migrate();
      await first.close();
      const client = new Client({ connectionString: url });
      await client.connect();
      await client.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
      await client.end();
      const store = new PostgresStore(url, location(url));
      try {
        await expect(store.listRuns()).rejects.toThrow(
          /schema version 999, newer than this judgeflow knows \(\d+\); upgrade judgeflow/,
        );
      } finally {
        await store.close();
      }
    });
  });
});
