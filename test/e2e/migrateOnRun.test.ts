import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startSimServer, type SimServer } from '../../sim/server';
import { SQLITE_MIGRATIONS } from '../../stores/sqliteSchema';
import { CLI, runCli } from '../support/cli';
import { latticeGrid, tempDir, uniqueQueue, until, writeQueries } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { olderSqliteStore } from '../support/olderStore';

/** Issue 30, row 10: `run` and `worker` migrate an older store, and say which migrations they applied, one line each. */
jest.setTimeout(180_000);

const OLD_VERSION = 4;
const expectedLines = (location: string) =>
  SQLITE_MIGRATIONS.filter((m) => m.version > OLD_VERSION).map(
    (m) => `Results store ${location}: applied migration ${m.version} (${m.name})`,
  );

let judge: SimServer;
let copilots: SimServer;
beforeAll(async () => {
  judge = await startSimServer({ handler: scriptedLatticeJudge });
  copilots = await startSimServer({});
});
afterAll(async () => {
  await judge?.close();
  await copilots?.close();
});

test('judgeflow run on an older store migrates it, one line per migration applied, then runs', async () => {
  const dir = tempDir('jf-run-migrates-');
  fs.mkdirSync(path.join(dir, 'home'));
  const file = olderSqliteStore(OLD_VERSION, path.join(dir, 'home', 'results.db'));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      protocol: 'lattice',
      queries: writeQueries(dir, latticeGrid(1, 2)),
      output: 'runs',
      judge: { baseURL: judge.url, model: 'judge' },
      copilots: [{ name: 'A', type: 'openai', baseURL: copilots.url, model: 'sim-terse' }],
    }),
  );
  const out = await runCli(['run', '--config', config], {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('run-migrates'),
    JUDGEFLOW_PROGRESS: '',
  });
  expect({ code: out.code, stderr: out.code ? out.stderr : '' }).toEqual({ code: 0, stderr: '' });
  const said = out.stdout.split('\n').filter((l) => l.includes('applied migration'));
  expect(said).toEqual(expectedLines(file));
  expect(out.stdout).toContain('completed.');
  // Current now: the same command says nothing of migrations.
  const again = await runCli(['run', '--config', config], {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('run-migrates'),
    JUDGEFLOW_PROGRESS: '',
  });
  expect(again.stdout).not.toContain('applied migration');
});

test('judgeflow worker on an older store migrates it and says which migrations it applied', async () => {
  const file = olderSqliteStore(OLD_VERSION);
  const worker = spawn(process.execPath, [CLI, 'worker'], {
    env: { ...process.env, JUDGEFLOW_STORE: file, JUDGEFLOW_TASK_QUEUE: uniqueQueue('worker-migrates') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  worker.stdout!.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  try {
    await until(async () => stdout.includes('Worker polling task queue'), 90_000);
    expect(stdout.split('\n').filter((l) => l.includes('applied migration'))).toEqual(expectedLines(file));
  } finally {
    worker.kill('SIGTERM');
    await exited;
  }
});
