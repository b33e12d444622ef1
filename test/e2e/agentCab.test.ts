import fs from 'node:fs';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import { runConfig, tempDir, withWorker } from '../support/harness';
import { cabFixtureRows, writeCabFixture } from '../support/cabDataset';
import { firstFavouringJudge } from '../support/cabJudge';
import { simServersForFile } from '../support/sims';
import { agentFakesForFile } from '../support/agent/fakesForFile';

jest.setTimeout(240_000);

const sim = simServersForFile({ judge: { handler: firstFavouringJudge(0) } });
const fakes = agentFakesForFile();

/**
 * The first check: agent copilots answer a CryptoAnalystBench snapshot (the CAB protocol: four dimensions, a
 * ranking) through several tool calls per query, against an MCP tool server and a tool-calling model that are not
 * judgeflow's simulator — in both wire formats — and the CAB judge scores the answers they give.
 */
test('agent copilots answer a CryptoAnalystBench snapshot through several tool calls per query', async () => {
  const categories = cabFixtureRows().map((r) => r.tags);
  const rows = [
    { query: 'Compare BTC, ETH and SOL for a cautious holder', tags: categories[0] },
    { query: 'Which of ETH, SOL and BTC has the most room to run?', tags: categories[60] },
    { query: 'Price check on SOL and BTC before i commit capital', tags: categories[120] },
  ];
  const dir = tempDir('jf-agent-cab-');
  const mcp = [{ name: 'prices', url: fakes.tools.url }];
  const config = runConfig(dir, {
    protocol: 'cab',
    queries: writeCabFixture(dir, rows),
    judge: { baseURL: sim.judge.url, model: 'cab-judge', concurrency: 4 },
    copilots: [
      { name: 'ChatAgent', type: 'agent', baseURL: `${fakes.model.url}/v1`, model: 'tool-model', tools: { mcp } },
      {
        name: 'MessagesAgent',
        type: 'agent',
        provider: 'anthropic',
        baseURL: fakes.model.url,
        apiKeyEnv: 'AGENT_CAB_KEY',
        model: 'tool-model',
        tools: { mcp },
      },
    ],
  });
  process.env.AGENT_CAB_KEY = 'sk-test-cab';
  await withWorker('agent-cab', async ({ client, taskQueue, store }) => {
    const runId = 'run-agent-cab-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
    // 8 tickers over 3 queries (3 + 3 + 2), asked by each copilot: every one a call the tool server served.
    expect(fakes.tools.calls).toHaveLength(16);
    const steps = await store.runAgentSteps(runId);
    const responses = await store.responses(runId);
    expect(responses).toHaveLength(6);
    for (const r of responses) {
      expect(r.status).toBe('ok');
      const mine = steps.filter((s) => s.queryId === r.queryId && s.copilot === r.copilot).map((s) => s.step);
      const toolSteps = mine.filter((s) => s.kind === 'tool');
      expect(toolSteps.length).toBeGreaterThanOrEqual(2);
      expect(mine.map((s) => s.kind)).toEqual(['model', ...toolSteps.map(() => 'tool'), 'model']);
      // The answer quotes every figure the tools returned, and the judge was shown that answer.
      for (const t of toolSteps) if (t.kind === 'tool') expect(r.text).toContain(String(JSON.parse(t.result).price));
      expect(r.context).toContain(JSON.parse(toolSteps[0].kind === 'tool' ? toolSteps[0].result : '{}').source);
    }
    expect(fakes.model.requests.some((r) => r.path === '/v1/messages')).toBe(true);
    expect(fakes.model.requests.some((r) => r.path === '/v1/chat/completions')).toBe(true);
    const judgments = await store.judgments(runId);
    expect(judgments.length).toBeGreaterThanOrEqual(3);
    expect(judgments.every((j) => j.status === 'ok')).toBe(true);
    const judged = sim.judge.requests.map((r) => JSON.stringify(r.body)).join('\n');
    expect(judged).toContain('97000.5');
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.agents.ChatAgent).toMatchObject({ answers: 3, modelTurns: 6, toolCalls: 8, toolErrors: 0 });
    expect(report.agents.MessagesAgent).toMatchObject({ answers: 3, modelTurns: 6, toolCalls: 8, toolErrors: 0 });
  });
});
