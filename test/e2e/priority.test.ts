import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { connectClient } from '../../client/connection';
import { runCli } from '../support/cli';
import { latticeGrid, tempDir, uniqueQueue, writeQueries } from '../support/harness';

jest.setTimeout(120_000);

/**
 * A run's place on a shared cluster (client/runPriority.ts): `--priority` or the config's priority: reaches Temporal
 * as the workflow's Priority, with the run id as its fairness key (its activities and child workflows inherit both),
 * and does not make it another run. Detached, so no worker runs them: the test reads what the server holds.
 */
let dir: string;
let env: NodeJS.ProcessEnv;
let client: Client;
const started: string[] = [];

const config = (fields: Record<string, unknown>) => {
  const file = path.join(dir, `config-${Object.keys(fields).join('-') || 'plain'}-${started.length}.json`);
  const queries = writeQueries(dir, latticeGrid(2, 2), `queries-${started.length}.jsonl`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      protocol: 'lattice',
      queries,
      output: 'runs',
      judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'judge' },
      copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
      ...fields,
    }),
  );
  return file;
};

async function startDetached(args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(['run', ...args, '--detach', '--json'], env);
  expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  const { runId } = JSON.parse(stdout.trim().split('\n').pop()!) as { runId: string };
  started.push(runId);
  return runId;
}

const priorityOf = async (runId: string) =>
  (await client.workflow.getHandle(runId).describe()).raw.workflowExecutionInfo?.priority;

beforeAll(async () => {
  dir = tempDir('jf-priority-');
  env = {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('priority'),
    JUDGEFLOW_PROGRESS: '',
  };
  client = await connectClient();
});

afterAll(async () => {
  for (const runId of started)
    await client.workflow
      .getHandle(runId)
      .terminate('test over')
      .catch(() => undefined);
  await client?.connection.close();
});

test('--priority 1 reaches Temporal with the run id as fairness key; the same config at another priority is the same run', async () => {
  const file = config({});
  const runId = await startDetached(['--config', file, '--priority', '1']);
  expect(await priorityOf(runId)).toMatchObject({ priorityKey: 1, fairnessKey: runId });
  // Priority is not part of the run's identity: asked again at priority 5, the open run is found, not a second one started.
  const again = await runCli(['run', '--config', file, '--priority', '5', '--detach'], env);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain(`Run ${runId} with this config, snapshot and rubric is already open`);
});

test("the config's priority: is used without the flag, and a run naming none gets Temporal's default, 3", async () => {
  const low = await startDetached(['--config', config({ priority: 5 })]);
  expect(await priorityOf(low)).toMatchObject({ priorityKey: 5, fairnessKey: low });
  const plain = await startDetached(['--config', config({ seed: 'another run' })]);
  expect(await priorityOf(plain)).toMatchObject({ priorityKey: 3, fairnessKey: plain });
});

test('a priority outside 1 … 5 is refused before anything starts, saying what is allowed', async () => {
  const flag = await runCli(['run', '--config', config({ seed: 'bad flag' }), '--priority', '0', '--detach'], env);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toMatch(
    /--priority must be an integer from 1 \(first: CI gates\) to 5 \(last: big sweeps\), got "0"/,
  );
  const key = await runCli(['run', '--config', config({ priority: 9 }), '--detach'], env);
  expect(key.code).toBe(2);
  expect(key.stderr).toMatch(/priority/);
  const open = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = "${env.JUDGEFLOW_TASK_QUEUE}"` }))
    open.push(wf.workflowId);
  expect(open.sort()).toEqual([...started].sort());
});
