import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { connectClient } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { openStore } from '../../stores';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { pinnedVersion, workflowBuild } from '../../worker/versioning';
import { spawnWorkerProcess } from '../../worker/workerProcess';
import { CLI } from '../support/cli';
import { latticeGrid, REPO, runConfig, simCopilots, tempDir, uniqueQueue, until } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * Worker Versioning end to end: a run is pinned to the build that started it, so a worker of a changed build never
 * replays its history; after the old build's worker is gone, `judgeflow resume` continues the run on the new build
 * from what the results store holds, asking nothing again but what was in flight.
 */
jest.setTimeout(300_000);

/** The workflows/ sources (and contract/, which they import) copied, one source edited, and bundled: a different build, as after a user's upgrade. */
async function changedBuild(root: string): Promise<string> {
  const dir = path.join(root, 'changed-build');
  for (const folder of ['workflows', 'contract'])
    if (fs.existsSync(path.join(REPO, folder)))
      fs.cpSync(path.join(REPO, folder), path.join(dir, folder), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  fs.appendFileSync(
    path.join(dir, 'workflows', 'index.ts'),
    "\n/** Added by the upgrade. */\nexport async function upgradeMarker(): Promise<string> {\n  return 'changed build';\n}\n",
  );
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never;
  const file = path.join(root, 'changed-bundle.js');
  fs.writeFileSync(
    file,
    (await bundleWorkflowCode({ workflowsPath: path.join(dir, 'workflows', 'index.ts'), logger: quiet })).code,
  );
  return file;
}

function worker(env: NodeJS.ProcessEnv): { proc: ChildProcess; exited: Promise<unknown> } {
  const proc = spawnWorkerProcess(CLI, env, { stdio: 'ignore' });
  return { proc, exited: new Promise((resolve) => proc.once('exit', resolve)) };
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [CLI, ...args], { env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

test('a run started by one build, its worker killed mid-run, finishes on a worker of a changed build after judgeflow resume, nothing asked twice beyond what was in flight', async () => {
  const root = tempDir('jf-versioning-');
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 150 });
  const copilots = await startSimServer({ latencyMs: 20 });
  const bundleA = process.env.JUDGEFLOW_WORKFLOW_BUNDLE!;
  const bundleB = await changedBuild(root);
  const base = {
    ...process.env,
    JUDGEFLOW_HOME: path.join(root, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('versioning'),
  };
  const envA = { ...base, JUDGEFLOW_WORKFLOW_BUNDLE: bundleA };
  const envB = { ...base, JUDGEFLOW_WORKFLOW_BUNDLE: bundleB };
  const [buildA, buildB] = [(await workflowBuild(envA)).buildId, (await workflowBuild(envB)).buildId];
  expect(buildB).not.toBe(buildA);

  const a = worker(envA);
  let b: ReturnType<typeof worker> | undefined;
  const client = await connectClient(base);
  const store = await openStore({ kind: 'sqlite', file: path.join(base.JUDGEFLOW_HOME, 'results.db') });
  try {
    const config = runConfig(root, {
      protocol: 'lattice',
      queries: latticeGrid(8, 5), // 40 queries × 2 copilots: 80 answers, 80 judgments
      judge: { baseURL: judge.url, model: 'judge', concurrency: 4 },
      copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
    });
    const runId = `run-versioning-${Date.now()}`;
    // Started unpinned, as a detached run or a schedule is: it goes to the deployment's current build, A.
    const first = await client.workflow.start(benchmarkRun, {
      taskQueue: base.JUDGEFLOW_TASK_QUEUE,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    const judged = async () => (await store.judgments(runId)).length;
    await until(async () => (await judged()) >= 20, 120_000);
    expect(pinnedVersion((await first.describe()).raw as never)?.buildId).toBe(buildA);
    a.proc.kill('SIGKILL');
    await a.exited;

    // Build B's worker becomes current, and never touches the run pinned to A.
    b = worker(envB);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const stalled = await judged();
    expect(stalled).toBeLessThan(80);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await judged()).toBe(stalled);
    expect((await first.describe()).status.name).toBe('RUNNING');

    // A minute after the kill the server still lists A's worker: resume says so, and --force (we know it is gone) moves the run.
    const refused = await cli(['resume', runId, '--detach'], envB);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`runs on build ${buildA}, and a worker of that build polled .* --force`));
    const resumed = await cli(['resume', runId, '--detach', '--force'], envB);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`continuing on build ${buildB}`);
    const second = client.workflow.getHandle(runId); // the latest execution
    await second.result();
    expect(pinnedVersion((await second.describe()).raw as never)?.buildId).toBe(buildB);
    // The first execution was ended, not failed with a nondeterminism error.
    expect((await client.workflow.getHandle(runId, first.firstExecutionRunId).describe()).status.name).toBe(
      'TERMINATED',
    );

    const responses = await store.responses(runId);
    const judgments = await store.judgments(runId);
    expect(responses).toHaveLength(80);
    expect(judgments).toHaveLength(80);
    expect(judgments.every((j) => j.status === 'ok')).toBe(true);
    expect(await store.getRun(runId)).toMatchObject({ status: 'completed' });
    // Asked again: only what the killed worker had in flight (judge concurrency 4, copilot windows of 4 each).
    expect(judge.requests.length).toBeLessThanOrEqual(80 + 4);
    expect(copilots.requests.length).toBeLessThanOrEqual(80 + 8);
  } finally {
    a.proc.kill('SIGKILL');
    b?.proc.kill('SIGKILL');
    await Promise.all([a.exited, b?.exited]);
    await store.close();
    await client.connection.close();
    await judge.close();
    await copilots.close();
  }
});
