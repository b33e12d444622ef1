import path from 'node:path';
import { runInput } from '../../client/startRun';
import type { AgentStep } from '../../core/model/agentSteps';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { killableWorker } from '../support/cli';
import { runConfig, settled, tempDir, uniqueQueue, until } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { startToolModel } from '../support/agent/toolModel';
import { startMcpHttp } from '../support/agent/mcpHttp';

jest.setTimeout(240_000);

const CONCURRENCY = 2;
const QUERIES = 6;

/**
 * An agent copilot's run on a worker process SIGKILLed mid-trajectory, then started again: every step stored before the
 * kill is still there, unchanged, and only the calls in flight at the kill are made again.
 */
test('a worker SIGKILLed mid-trajectory loses no finished step and repeats at most the calls in flight', async () => {
  const model = await startToolModel();
  const tools = await startMcpHttp();
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  model.delayMs = 400;
  tools.delayMs = 300;
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const pairs = ['BTC and ETH', 'ETH and SOL', 'SOL and BTC', 'BTC and SOL', 'ETH and BTC', 'SOL and ETH'];
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries: pairs.slice(0, QUERIES).map((pair, i) => ({
      id: `q${i + 1}`,
      text: `Question ${i + 1}: compare ${pair}`,
      task: `T${i + 1}`,
      category: 'C1',
    })),
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
  });
  const world = await killableWorker(home, uniqueQueue('agent-kill'));
  const { env, client, store } = world;
  try {
    const runId = 'run-agent-kill-' + Date.now();
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue: env.JUDGEFLOW_TASK_QUEUE,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    const steps = async () =>
      (await store.runAgentSteps(runId)).map((s) => ({ key: `${s.queryId}/${s.step.seq}`, step: s.step }));
    // Killed once some item is past its first step but not done (4 steps each: turn, two tool calls, answer).
    await until(async () => {
      const now = await steps();
      return now.length >= 5 && now.length % 4 !== 0;
    }, 120_000);
    await world.kill();
    const atKill = await steps();
    // What the killed worker sent before it died, counted once it has all arrived.
    const requestsAtKill = await settled(() => model.requests.length);
    const toolCallsAtKill = await settled(() => tools.calls.length);
    world.restart();
    const result = await handle.result();
    expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });

    const after = await steps();
    const byKey = new Map(after.map((s) => [s.key, s.step]));
    // No finished step lost, none changed.
    for (const s of atKill) expect(byKey.get(s.key)).toEqual(s.step);
    expect(after).toHaveLength(QUERIES * 4);
    const responses = await store.responses(runId);
    expect(responses.map((r) => r.status)).toEqual(Array(QUERIES).fill('ok'));
    for (const r of responses) {
      const final = after
        .filter((s) => s.key.startsWith(`${r.queryId}/`))
        .map((s) => s.step)
        .find((s): s is Extract<AgentStep, { kind: 'model' }> => s.kind === 'model' && !s.toolCalls.length);
      expect(r.text).toBe(final?.text);
    }
    // Only calls in flight at the kill (at most one per item in flight) were made twice: model turns and tool calls.
    const modelTurns = QUERIES * 2;
    const toolCalls = QUERIES * 2;
    expect(model.requests.length).toBeLessThanOrEqual(modelTurns + CONCURRENCY);
    expect(tools.calls.length).toBeLessThanOrEqual(toolCalls + 2 * CONCURRENCY);
    // What the restarted worker asked: only what the stored steps did not hold yet, plus what was in flight.
    const storedTurns = atKill.filter((s) => s.step.kind === 'model').length;
    const storedTools = atKill.filter((s) => s.step.kind === 'tool').length;
    expect(model.requests.length - requestsAtKill).toBeLessThanOrEqual(modelTurns - storedTurns);
    expect(tools.calls.length - toolCallsAtKill).toBeLessThanOrEqual(toolCalls - storedTools);
    // Spend: one LLM call record per model turn made (a turn in flight at the kill was never recorded).
    const calls = (await store.llmCalls(runId)).filter((c) => c.role === 'copilot');
    expect(calls.length).toBeGreaterThanOrEqual(modelTurns);
    expect(calls.length).toBeLessThanOrEqual(model.requests.length);
  } finally {
    await world.close();
    await Promise.all([model.close(), tools.close(), judge.close()]);
  }
});
