import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Client } from '@temporalio/client';
import type { RefreshResult } from '../../contract/snapshot';
import type { WorldCall } from '../../core/model/agentSteps';
import { worldIdOf, worldKey } from '../../activities/adapters/agent/world';
import { scriptedLatticeJudge } from '../support/judges';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir, withWorker, writeQueries } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { agentFakesForFile } from '../support/agent/fakesForFile';

jest.setTimeout(240_000);

const sim = simServersForFile({ judge: { handler: scriptedLatticeJudge } });
const fakes = agentFakesForFile();

async function triggerAndWait(client: Client, name: string, env: Record<string, string>, k: number) {
  expect((await cliInProcess(['schedule', 'trigger', name], env)).code).toBe(0);
  const handle = client.schedule.getHandle(name);
  for (let i = 0; i < 600; i++) {
    const action = (await handle.describe()).info.recentActions[k - 1]?.action.workflow;
    if (action)
      return (await client.workflow.getHandle(action.workflowId, action.firstExecutionRunId).result()) as RefreshResult;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`schedule ${name} did not start action ${k}`);
}

const call = (tool: string, args: Record<string, unknown>, result: string): WorldCall => ({
  key: worldKey(tool, args),
  tool,
  arguments: JSON.stringify(args),
  result,
  isError: false,
  recordedAt: '2026-11-01T00:00:00.000Z',
});
const oldPrice = (symbol: string, price: number) =>
  JSON.stringify({ symbol, price, source: `https://prices.test/${symbol}`, asOf: '2026-11-01' });
const priceTool = {
  name: 'get_price',
  description: 'The spot price of a token in USD, with its source',
  inputSchema: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
};
// Last month's world: old prices, and a tool the server no longer has (its result is kept: nothing can answer it now).
const lastMonth = [
  call('(tools/list)', { server: 'prices' }, JSON.stringify([priceTool])),
  call('get_price', { symbol: 'BTC' }, oldPrice('BTC', 61000)),
  call('get_price', { symbol: 'ETH' }, oldPrice('ETH', 2400)),
  call('get_tvl', { protocol: 'aave' }, '{"tvl":1}'),
];

/**
 * Schedules refresh world snapshots the way they refresh query snapshots: each firing asks the tools again every call
 * of the world the replaying agent copilots answer from, as a new world snapshot (a chain per schedule), and the run
 * replays that one — every copilot on the same, current tool results, and no tool call made during the run itself.
 */
test('a --refresh-worlds schedule re-asks the replayed world before each run, and the run replays the new world', async () => {
  await withWorker('world-schedule', async ({ client, taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const dir = tempDir();
    await store.putWorldCalls('run-last-month', lastMonth);
    const base = worldIdOf(lastMonth);
    const queries = writeQueries(dir, [
      { id: 'q1', text: 'How are BTC and ETH priced?', task: 'T1', category: 'C1' },
      { id: 'q2', text: 'What does ETH cost?', task: 'T2', category: 'C1' },
    ]);
    const agent = (name: string, system: string, world = base) => ({
      name,
      type: 'agent',
      baseURL: `${fakes.model.url}/v1`,
      model: 'tool-model',
      system,
      tools: { mcp: [{ name: 'prices', url: fakes.tools.url }], mode: 'replay', world },
    });
    const write = (file: string, copilots: unknown[]) => {
      const at = path.join(dir, file);
      fs.writeFileSync(
        at,
        YAML.stringify({
          protocol: 'lattice',
          judge: { baseURL: sim.judge.url, model: 'judge' },
          copilots,
          output: 'runs',
        }),
      );
      return at;
    };
    const configFile = write('agents.yaml', [agent('Careful', 'Check every figure.'), agent('Brief', 'Be brief.')]);
    const name = `worlds-${Date.now()}`;
    const create = (config: string) => [
      'schedule',
      'create',
      name,
      '--every',
      '30d',
      '--refresh',
      'none',
      '--queries',
      queries,
      '--then-run',
      config,
      '--refresh-worlds',
    ];

    // Refused before anything reaches the server: nothing replays a world; a world the store does not hold.
    const live = write('live.yaml', [
      { ...agent('Live', 'x'), tools: { mcp: [{ name: 'prices', url: fakes.tools.url }] } },
    ]);
    const none = await cliInProcess(create(live), env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('replays a world snapshot (type: agent, tools.mode: replay');
    const unknown = await cliInProcess(create(write('unknown.yaml', [agent('X', 'x', 'world-0000000000000000')])), env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      `copilot X replays world-0000000000000000, which is not in the results store (it holds: ${base}`,
    );

    const created = await cliInProcess(create(configFile), env);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(created.stdout).toContain('then a benchmark run on refreshed world snapshots');
    const described = await cliInProcess(['schedule', 'describe', name], env);
    expect(described.stdout).toContain("worlds: the replaying agent copilots' world snapshots are asked again");
    try {
      const first = await triggerAndWait(client, name, env, 1);
      // The two copilots replay one world with the same tools: it was asked again once, not once per copilot.
      expect(fakes.tools.calls.map((c) => c.symbol).sort()).toEqual(['BTC', 'ETH']);
      expect(first.worlds).toHaveLength(2);
      const [careful, brief] = first.worlds!;
      expect(careful).toMatchObject({ copilot: 'Careful', from: base, calls: 3, changed: 2, kept: 1 });
      expect(brief).toMatchObject({ copilot: 'Brief', from: base, to: careful.to, calls: 3, changed: 2, kept: 1 });
      expect(careful.to).not.toBe(base);
      const listed = JSON.parse((await cliInProcess(['world', 'list', '--json'], env)).stdout);
      expect(listed).toContainEqual(expect.objectContaining({ id: careful.to, recording: careful.recording }));
      expect(careful.recording).toMatch(new RegExp(`^schedule:${name}:Careful:`));

      // The run replayed the new world: today's prices, answered from the world, no tool call of its own.
      const steps = await store.runAgentSteps(first.runId!);
      const toolSteps = steps.map((s) => s.step).filter((s) => s.kind === 'tool');
      expect(toolSteps).toHaveLength(6); // q1: BTC and ETH, q2: ETH; for both copilots
      expect(toolSteps.every((s) => s.kind === 'tool' && s.origin === 'world')).toBe(true);
      const btc = toolSteps.find((s) => s.kind === 'tool' && s.arguments.symbol === 'BTC');
      expect(btc?.kind === 'tool' && JSON.parse(btc.result).price).toBe(97000.5);
      const responses = await store.responses(first.runId!);
      expect(responses.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(responses.every((r) => r.text?.includes('3400.25'))).toBe(true);
      const runConfig = (await store.getRun(first.runId!))!.config as { copilots: Array<{ tools: { world: string } }> };
      expect(runConfig.copilots.map((c) => c.tools.world)).toEqual([careful.to, careful.to]);

      // The next firing refreshes the schedule's newest world, not the config's: nothing changed since, same world id.
      const second = await triggerAndWait(client, name, env, 2);
      expect(fakes.tools.calls).toHaveLength(4);
      expect(second.worlds!.map((w) => [w.from, w.to, w.changed, w.kept])).toEqual([
        [careful.to, careful.to, 0, 1],
        [careful.to, careful.to, 0, 1],
      ]);
    } finally {
      await cliInProcess(['schedule', 'delete', name], env);
    }
  });
});
