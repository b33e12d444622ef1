import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { connectClient, taskQueue } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { openNew } from '../../stores';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { spawnWorkerProcess } from '../../worker/workerProcess';
import { CLI } from '../support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, until } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { postgresForFile } from '../support/postgresServer';

/**
 * Two "machines" — worker processes with their own working directory and JUDGEFLOW_HOME, sharing only the PostgreSQL
 * store and the Temporal server — serve one benchmark run; one is killed mid-run and the other finishes it.
 */
const postgres = postgresForFile();
jest.setTimeout(300_000);

/** A worker started the way a user starts one on their machine: `judgeflow worker` in its own directory. */
function machine(
  name: string,
  root: string,
  storeUrl: string,
): { proc: ChildProcess; home: string; exited: Promise<unknown> } {
  const cwd = path.join(root, name);
  const home = path.join(cwd, '.judgeflow-home');
  fs.mkdirSync(cwd, { recursive: true });
  // No JUDGEFLOW_TASK_QUEUE: each machine derives the queue from the shared store's id, as the README's rule says.
  const { JUDGEFLOW_TASK_QUEUE: _unused, ...inherited } = process.env;
  const env = { ...inherited, JUDGEFLOW_HOME: home, JUDGEFLOW_STORE: storeUrl };
  // The worker itself, no launcher (see spawnWorkerProcess): its pid is in its worker identity.
  const proc = spawnWorkerProcess(CLI, env, { cwd, stdio: 'ignore' });
  return { proc, home, exited: new Promise((resolve) => proc.once('exit', resolve)) };
}

postgres.test(
  `two machines, one PostgreSQL store: a worker killed mid-run, the other completes the run with nothing lost or duplicated${postgres.unavailable ? ` (skipped: ${postgres.unavailable})` : ''}`,
  async () => {
    const url = await postgres.server().createDatabase('jf_two_machines');
    const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 150 });
    const copilots = await startSimServer({ latencyMs: 20 });
    const root = tempDir('jf-machines-');
    const store = openNew({ kind: 'postgres', url });
    await store.storeId(); // migrate once up front, as `judgeflow store migrate` would
    const queue = await taskQueue({ JUDGEFLOW_STORE: url } as NodeJS.ProcessEnv);
    const a = machine('machine-a', root, url);
    const b = machine('machine-b', root, url);
    const client = await connectClient();
    try {
      const queries = latticeGrid(8, 5); // 40 queries × 2 copilots = 80 responses and 80 judgments
      const config = runConfig(root, {
        protocol: 'lattice',
        queries,
        judge: { baseURL: judge.url, model: 'judge', concurrency: 4 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
      });
      const runId = `run-two-machines-${Date.now()}`;
      const handle = await client.workflow.start(benchmarkRun, {
        taskQueue: queue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      const judged = async () => (await store.judgments(runId)).length;
      await until(async () => (await judged()) >= 20, 180_000);

      a.proc.kill('SIGKILL');
      await a.exited;
      const atKill = await judged();
      expect(atKill).toBeLessThan(80);
      const result = await handle.result();

      const responses = await store.responses(runId);
      const judgments = await store.judgments(runId);
      expect(responses).toHaveLength(80);
      expect(new Set(responses.map((r) => `${r.queryId}/${r.copilot}`)).size).toBe(80);
      expect(judgments).toHaveLength(80);
      expect(new Set(judgments.map((j) => `${j.queryId}/${j.copilot}`)).size).toBe(80);
      expect(judgments.every((j) => j.status === 'ok')).toBe(true);
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect(await store.getRun(runId)).toMatchObject({ status: 'completed' });
      // Nothing finished was asked again: only the judge calls in flight on the killed machine (≤ its concurrency).
      expect(judge.requests.length).toBeLessThanOrEqual(80 + 4);
      expect(copilots.requests.length).toBeLessThanOrEqual(80 + 8);

      // Both machines did work for this run: activity tasks were started by two worker identities.
      const identities = new Set<string>();
      for (const id of [runId, ...(await childIds(client, runId))]) {
        for (const event of (await client.workflow.getHandle(id).fetchHistory()).events ?? []) {
          const identity = event.activityTaskStartedEventAttributes?.identity;
          if (identity) identities.add(identity);
        }
      }
      expect([...identities].filter((i) => i.startsWith(`${a.proc.pid}@`))).toHaveLength(1);
      expect([...identities].filter((i) => i.startsWith(`${b.proc.pid}@`))).toHaveLength(1);
      // Neither machine needed a local store: each machine's home holds no results.db.
      for (const m of [a, b]) expect(fs.existsSync(path.join(m.home, 'results.db'))).toBe(false);
    } finally {
      for (const m of [a, b]) m.proc.kill('SIGKILL');
      await Promise.all([a.exited, b.exited]);
      await store.close();
      await client.connection.close();
      await judge.close();
      await copilots.close();
    }
  },
);

/** Every child workflow the run started (collection and judging chunks). */
async function childIds(client: Awaited<ReturnType<typeof connectClient>>, runId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const event of (await client.workflow.getHandle(runId).fetchHistory()).events ?? []) {
    const id = event.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    if (id) ids.push(id);
  }
  return ids;
}
