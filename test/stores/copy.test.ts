import fs from 'node:fs';
import path from 'node:path';
import { parseStoreSpec, storeLocation } from '../../stores';
import { PostgresStore } from '../../stores/postgres';
import { POSTGRES_MIGRATIONS } from '../../stores/postgresSchema';
import { SqliteStore } from '../../stores/sqlite';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';
import { postgresForFile } from '../support/postgresServer';
import { everything, fillEverything } from './contract';
import { copyStore } from '../../stores/copy';

/** `judgeflow store migrate` and `judgeflow store copy` through the real CLI entry point, against a real PostgreSQL postgres.server(). */
const postgres = postgresForFile();
const unavailable = postgres.unavailable;
const describePostgres = postgres.describe;

const openPostgres = (url: string) => new PostgresStore(url, storeLocation(parseStoreSpec(url)));

describePostgres(`judgeflow store${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  test('copy --from sqlite: --to postgres:// carries every record over intact; a second copy adds nothing', async () => {
    const file = path.join(tempDir('jf-copy-'), 'results.db');
    const sqlite = new SqliteStore(file);
    await fillEverything(sqlite);
    const url = await postgres.server().createDatabase('jf_copy');
    try {
      const first = await cliInProcess(['store', 'copy', '--from', `sqlite:${file}`, '--to', url], {});
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`Copied ${file} into postgres://judgeflow@127.0.0.1`);
      expect(first.stdout).toMatch(/runs\s+2\s+\(2 new\)/);
      expect(first.stdout).toMatch(/responses\s+6\s+\(6 new\)/);
      expect(first.stdout).toMatch(/grounding checks \(with their claims\)\s+1\s+\(1 new\)/);
      expect(first.stdout).toMatch(/LLM calls\s+3\s+\(3 new\)/);
      expect(first.stdout).toMatch(/studies\s+1\s+\(1 new\)/);
      expect(first.stdout).toMatch(/artefacts \(screenshots\)\s+1\s+\(1 new\)/);
      expect(first.stdout).not.toContain(encodeURIComponent(postgres.server().password));
      const copy = openPostgres(url);
      try {
        expect(await everything(copy)).toEqual(await everything(sqlite));
        const again = await cliInProcess(['store', 'copy', '--from', file, '--to', url, '--json'], {});
        expect(again.code).toBe(0);
        const { counts } = JSON.parse(again.stdout);
        expect(counts.run).toEqual({ found: 2, added: 0 });
        expect(Object.values(counts).every((c) => (c as { added: number }).added === 0)).toBe(true);
        expect(await everything(copy)).toEqual(await everything(sqlite));
        // And back: a PostgreSQL store copies into a new SQLite file just as well.
        const back = path.join(tempDir('jf-copy-back-'), 'results.db');
        expect((await cliInProcess(['store', 'copy', '--from', url, '--to', `sqlite:${back}`], {})).code).toBe(0);
        const roundTrip = new SqliteStore(back);
        expect(await everything(roundTrip)).toEqual(await everything(sqlite));
        await roundTrip.close();
      } finally {
        await copy.close();
      }
    } finally {
      await sqlite.close();
    }
  });

  test('migrate says what it applied, then that there is nothing to do', async () => {
    const url = await postgres.server().createDatabase('jf_cli_migrate');
    const first = await cliInProcess(['store', 'migrate'], { JUDGEFLOW_STORE: url });
    expect(first.code).toBe(0);
    const latest = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1].version;
    expect(first.stdout).toMatch(
      /^Results store postgres:\/\/judgeflow@127\.0\.0\.1:\d+\/jf_cli_migrate: applied 1 \(runs, snapshots.*\); schema is at version \d+\.$/,
    );
    expect(first.stdout).toContain(POSTGRES_MIGRATIONS.map((m) => `${m.version} (${m.name})`).join(', '));
    expect(first.stdout).toContain(`schema is at version ${latest}.`);
    const second = await cliInProcess(['store', 'migrate', '--json'], { JUDGEFLOW_STORE: url });
    expect(JSON.parse(second.stdout)).toMatchObject({ version: latest, applied: [] });
  });

  test('bad input is refused with exit code 2, a reason, no password and nothing written', async () => {
    const dir = tempDir('jf-copy-bad-');
    const missing = path.join(dir, 'missing.db');
    const url = await postgres.server().createDatabase('jf_copy_bad');
    const unreachable = postgres
      .server()
      .url('jf_copy_bad')
      .replace(/:(\d+)\//, ':1/');
    const cases: Array<[string[], RegExp]> = [
      [['store'], /missing action; expected migrate or copy/],
      [['store', 'copy', '--to', url], /store copy needs --from STORE/],
      [['store', 'copy', '--from', missing], /store copy needs --to STORE/],
      [
        ['store', 'copy', '--from', missing, '--to', url],
        /there is no results store at .*missing\.db \(--from\); nothing to copy/,
      ],
      [['store', 'copy', '--from', url, '--to', `${url}`], /--from and --to are the same store/],
      [['store', 'copy', '--from', 'mysql://u:s3cret@h/db', '--to', url], /unknown results store scheme "mysql:"/],
      [
        ['store', 'copy', '--from', unreachable, '--to', `sqlite:${path.join(dir, 'out.db')}`],
        /cannot use the results store postgres:\/\/judgeflow@127\.0\.0\.1:1\/jf_copy_bad: .*ECONNREFUSED.*; check --from/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await cliInProcess(argv, {});
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/s3cret/);
    }
    expect(fs.readdirSync(dir)).toEqual([]); // neither the missing source nor the target was created
    expect((await cliInProcess(['store', 'copy', '--help'], {})).code).toBe(0);
  });
});

test('store copy interrupted part-way: no run is listed in the target until everything it needs is there; run again, it completes', async () => {
  const dir = tempDir('jf-copy-cut-');
  const from = new SqliteStore(path.join(dir, 'from.db'));
  const to = new SqliteStore(path.join(dir, 'to.db'));
  try {
    await fillEverything(from);
    let batches = 0;
    const cut = new Error('copy killed');
    // Stop after every possible batch count in turn: at no point may a run be listed without its responses and judgments.
    for (let stopAt = 1; ; stopAt++) {
      batches = 0;
      const interrupted = await copyStore(from, to, () => {
        if (++batches === stopAt) throw cut;
      }).then(
        () => false,
        (e) => (e === cut ? true : Promise.reject(e)),
      );
      for (const run of await to.listRuns()) {
        expect((await to.responses(run.runId)).length).toBe((await from.responses(run.runId)).length);
        expect((await to.judgments(run.runId)).length).toBe((await from.judgments(run.runId)).length);
        expect((await to.llmCalls(run.runId)).length).toBe((await from.llmCalls(run.runId)).length);
      }
      if (!interrupted) break;
    }
    expect(await everything(to)).toEqual(await everything(from));
  } finally {
    await from.close();
    await to.close();
  }
});
