import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { statusCommand } from '../../client/commands/status';
import { copyCheckout, launchCopy } from '../support/checkoutCopy';
import { tempDir } from '../support/harness';
import { readHistoryFiles, replayInputs } from '../support/histories';

/**
 * The compiled CLI (dist/) and the launcher's choice between it and the sources, in a copy of the checkout so that
 * touching and editing sources here cannot disturb other test files that start the real CLI.
 */
const build = require('../../scripts/build.js') as {
  isBuilt(root: string): boolean;
  build(root: string, log?: (line: string) => void): Promise<boolean>;
};

const copy = tempDir('jf-build-');
const quiet = () => undefined;

const launch = (args: string[], env: NodeJS.ProcessEnv = {}) => launchCopy(copy, args, env);

/** Marks the compiled status command so its output tells which copy of the code ran. */
function markCompiledStatus(): string {
  const file = path.join(copy, 'dist', 'client', 'commands', 'status.js');
  const js = fs.readFileSync(file, 'utf8');
  expect(js).toContain(statusCommand.summary);
  const marked = `${statusCommand.summary} [compiled]`;
  fs.writeFileSync(file, js.replace(statusCommand.summary, marked));
  return marked;
}

beforeAll(async () => {
  copyCheckout(copy);
  expect(await build.build(copy, quiet)).toBe(true);
}, 120_000);

afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

test('bin/judgeflow.js runs the compiled CLI while dist/ matches the sources, and the sources with JUDGEFLOW_DEV=1', async () => {
  expect(build.isBuilt(copy)).toBe(true);
  const marked = markCompiledStatus();
  const compiled = await launch(['status', '--help']);
  expect(compiled).toMatchObject({ code: 0, stderr: '' });
  expect(compiled.stdout).toContain(marked);
  expect(compiled.stdout).toContain(statusCommand.usage);

  const dev = await launch(['status', '--help'], { JUDGEFLOW_DEV: '1' });
  expect(dev.code).toBe(0);
  expect(dev.stdout).toContain(statusCommand.summary);
  expect(dev.stdout).not.toContain(marked);

  // The workflows are bundled with the build, for compiled workers to load instead of bundling at start-up.
  const workflowBundle = fs.readFileSync(path.join(copy, 'dist', 'workflow-bundle.js'), 'utf8');
  expect(workflowBundle).toContain('benchmarkRun');
  expect(workflowBundle).toContain('globalThis.__webpack_module_cache__'); // what the SDK's reusable V8 context requires

  // Rubric files are read from the checkout, not from a copy in dist/ that a user might edit.
  const rubric = await launch(['rubric', 'show', '--protocol', 'cab', '--json'], {
    JUDGEFLOW_HOME: path.join(copy, '.judgeflow'),
  });
  expect(rubric.code).toBe(0);
  expect(JSON.parse(rubric.stdout)).toMatchObject({ protocol: 'cab', dir: path.join(copy, 'rubrics', 'cab') });
  expect(fs.readdirSync(path.join(copy, 'dist', 'rubrics', 'cab')).filter((f) => !/\.js(\.map)?$/.test(f))).toEqual([]);

  // Bad input still exits 2 from the compiled CLI.
  const missing = await launch(['status']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('judgeflow status: missing RUN_ID');
}, 300_000);

test('a touched source makes dist/ stale: the launcher falls back to the sources until a build, which --if-stale then runs', async () => {
  const marked = markCompiledStatus();
  const source = path.join(copy, 'client', 'commands', 'status.ts');
  const later = new Date(Date.now() + 5_000);
  fs.utimesSync(source, later, later);
  expect(build.isBuilt(copy)).toBe(false);
  const stale = await launch(['status', '--help']);
  expect(stale.code).toBe(0);
  expect(stale.stdout).toContain(statusCommand.summary);
  expect(stale.stdout).not.toContain(marked);

  // An edit and an output whose source is gone, built the way npm test / demo / bench do: only then does the launcher
  // run dist/ again, with the edit in it and the orphan gone.
  const edited = `${statusCommand.summary} (edited)`;
  fs.writeFileSync(source, fs.readFileSync(source, 'utf8').replace(statusCommand.summary, edited));
  fs.writeFileSync(path.join(copy, 'dist', 'core', 'removedModule.js'), 'exports.removed = true;\n');
  const rebuild = await new Promise<number>((resolve) =>
    execFile(process.execPath, [path.join(copy, 'scripts', 'build.js'), '--if-stale'], { timeout: 600_000 }, (error) =>
      resolve(error ? 1 : 0),
    ),
  );
  expect(rebuild).toBe(0);
  expect(build.isBuilt(copy)).toBe(true);
  expect(fs.readFileSync(path.join(copy, 'dist', 'client', 'commands', 'status.js'), 'utf8')).toContain(edited);
  expect(fs.existsSync(path.join(copy, 'dist', 'core', 'removedModule.js'))).toBe(false);
  const rebuilt = await launch(['status', '--help']);
  expect(rebuilt.code).toBe(0);
  expect(rebuilt.stdout).toContain(edited);
}, 600_000);

test('workers bundle the compiled workflows, and they replay the recorded histories like the sources', async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed by an earlier test in this process
  }
  const run = readHistoryFiles().find((f) => f.content.scenario === 'lattice-run')!.content;
  const failures: string[] = [];
  let replayed = 0;
  const options = {
    workflowsPath: require.resolve(path.join(copy, 'dist', 'workflows')),
    replayName: 'judgeflow-dist-replay',
  };
  for await (const result of Worker.runReplayHistories(options, replayInputs(run))) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(options.workflowsPath).toBe(path.join(copy, 'dist', 'workflows', 'index.js'));
  expect(replayed).toBe(run.workflows.length);
  expect(failures).toEqual([]);
}, 300_000);
