import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { StoredAgentStep } from '../../core/model/agentSteps';
import { startSimServer, type SimServer } from '../../sim/server';
import { SqliteStore } from '../../stores/sqlite';
import { CLI, runCli } from '../support/cli';
import { tempDir, uniqueQueue, until, writeQueries } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { startToolModel, type ToolModel } from '../support/agent/toolModel';
import { startMcpHttp, type McpHttpServer } from '../support/agent/mcpHttp';

jest.setTimeout(300_000);

const QUERIES = 6;
const CONCURRENCY = 2;
// Each answer: a model turn calling get_price for both tickers, the two tool calls, and the answering turn.
const STEPS_PER_ANSWER = 4;

let model: ToolModel;
let tools: McpHttpServer;
let judge: SimServer;
let dir: string;
let env: NodeJS.ProcessEnv;
let configFile: string;
let store: SqliteStore | undefined;

beforeAll(async () => {
  model = await startToolModel();
  tools = await startMcpHttp();
  judge = await startSimServer({ handler: scriptedLatticeJudge });
  model.delayMs = 400;
  tools.delayMs = 300;
  dir = tempDir('jf-agent-again-');
  const pairs = ['BTC and ETH', 'ETH and SOL', 'SOL and BTC', 'BTC and SOL', 'ETH and BTC', 'SOL and ETH'];
  const queries = writeQueries(
    dir,
    pairs.map((pair, i) => ({
      id: `q${i + 1}`,
      text: `Question ${i + 1}: compare ${pair}`,
      task: `T${i + 1}`,
      category: 'C1',
    })),
  );
  configFile = path.join(dir, 'config.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      protocol: 'lattice',
      queries,
      output: 'runs',
      judge: { baseURL: judge.url, model: 'judge', concurrency: 2 },
      copilots: [
        {
          name: 'Agent',
          type: 'agent',
          baseURL: `${model.url}/v1`,
          model: 'tool-model',
          concurrency: CONCURRENCY,
          tools: { mcp: [{ name: 'prices', url: tools.url }] },
        },
      ],
    }),
  );
  env = {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('agent-again'),
    JUDGEFLOW_PROGRESS: '',
  };
});

afterAll(async () => {
  await store?.close();
  await Promise.all([model?.close(), tools?.close(), judge?.close()]);
});

const db = () => path.join(dir, 'home', 'results.db');
const storeOf = () => (store ??= new SqliteStore(db()));
const keyed = (steps: StoredAgentStep[]) => steps.map((s) => ({ key: `${s.queryId}/${s.step.seq}`, step: s.step }));

/**
 * Issue 36's promise for agent copilots: the attached `judgeflow run` SIGKILLed mid-trajectory, then the same command
 * again, continues the run from its stored steps — no finished model turn or tool call is made again, only those in
 * flight — and a re-judge of the finished run carries every answer's steps along with the answer.
 */
test('`run` again after a SIGKILL mid-trajectory adopts the stored agent steps: only the calls in flight are repeated', async () => {
  const first = spawn(process.execPath, [CLI, 'run', '--config', configFile], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => first.once('exit', resolve));
  let runId = '';
  await until(async () => {
    if (!fs.existsSync(db())) return false;
    const [run] = await storeOf().listRuns();
    if (!run) return false;
    runId = run.runId;
    const n = (await storeOf().runAgentSteps(runId)).length;
    return n >= 5 && n % STEPS_PER_ANSWER !== 0;
  }, 150_000);
  first.kill('SIGKILL');
  await exited;
  const atKill = keyed(await storeOf().runAgentSteps(runId));
  const [turnsAtKill, toolCallsAtKill] = [model.requests.length, tools.calls.length];
  expect(atKill.length).toBeLessThan(QUERIES * STEPS_PER_ANSWER);

  const again = await runCli(['run', '--config', configFile, '--json'], env);
  expect({ code: again.code, stderr: again.code ? again.stderr : '' }).toEqual({ code: 0, stderr: '' });
  expect(again.stderr + again.stdout).toContain(`Run ${runId} with this config, snapshot and rubric is already open`);
  expect(JSON.parse(again.stdout.trim().split('\n').pop()!).runId).toBe(runId);
  expect((await storeOf().listRuns()).map((r) => [r.runId, r.status])).toEqual([[runId, 'completed']]);

  const after = keyed(await storeOf().runAgentSteps(runId));
  expect(after).toHaveLength(QUERIES * STEPS_PER_ANSWER);
  const byKey = new Map(after.map((s) => [s.key, s.step]));
  for (const s of atKill) expect(byKey.get(s.key)).toEqual(s.step); // no finished step lost or made again
  const responses = await storeOf().responses(runId);
  expect(responses.map((r) => r.status)).toEqual(Array(QUERIES).fill('ok'));
  // What the second process asked: what the stored steps lacked, plus at most the calls in flight at the kill.
  const storedTurns = atKill.filter((s) => s.step.kind === 'model').length;
  const storedTools = atKill.filter((s) => s.step.kind === 'tool').length;
  expect(model.requests.length - turnsAtKill).toBeLessThanOrEqual(QUERIES * 2 - storedTurns + CONCURRENCY);
  expect(tools.calls.length - toolCallsAtKill).toBeLessThanOrEqual(QUERIES * 2 - storedTools + 2 * CONCURRENCY);
  expect(model.requests.length).toBeLessThanOrEqual(QUERIES * 2 + CONCURRENCY);
});

test('a re-judge of the agent run adopts every answer with its steps: its report shows them, and no copilot or tool is asked', async () => {
  const [source] = await storeOf().listRuns();
  const [turnsBefore, toolCallsBefore] = [model.requests.length, tools.calls.length];
  const rejudged = await runCli(['rejudge', source.runId, '--force', '--json'], env);
  expect({ code: rejudged.code, stderr: rejudged.code ? rejudged.stderr : '' }).toEqual({ code: 0, stderr: '' });
  const { runId, reportPath } = JSON.parse(rejudged.stdout.trim().split('\n').pop()!);
  expect(runId).not.toBe(source.runId);
  expect([model.requests.length, tools.calls.length]).toEqual([turnsBefore, toolCallsBefore]);
  const steps = (runOf: string) =>
    storeOf()
      .runAgentSteps(runOf)
      .then((all) => all.map(({ queryId, copilot, step }) => ({ queryId, copilot, step })));
  expect(await steps(runId)).toEqual(await steps(source.runId));
  const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
  expect(report.agents.Agent).toMatchObject({ answers: QUERIES, modelTurns: QUERIES * 2, toolCalls: QUERIES * 2 });
});
