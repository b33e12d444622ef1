import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { progressQuery } from '../../contract/control';
import { runConfig, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { startToolModel } from '../support/agent/toolModel';
import { startMcpHttp } from '../support/agent/mcpHttp';

jest.setTimeout(120_000);

/**
 * A tool that keeps failing trips the run's breaker like a failing endpoint: each answer whose tool returned only errors
 * fails with kind `tool`, and after the copilot's first 5 items all failed so the run pauses, saying which tool and why.
 */
test('an agent whose tool keeps failing fails its items (kind tool) and pauses the run through the breaker', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const model = await startToolModel();
  const tools = await startMcpHttp();
  try {
    await withWorker('agent-breaker', async (world) => {
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        // Tickers the tool server does not know: every call is an error result.
        queries: Array.from({ length: 12 }, (_, i) => ({
          id: `q${i + 1}`,
          text: `Question ${i + 1}: what about DOGE and PEPE?`,
          task: `T${i + 1}`,
          category: 'C1',
        })),
        judge: { baseURL: judge.url, model: 'sim-judge' },
        copilots: [
          {
            name: 'Agent',
            type: 'agent',
            baseURL: `${model.url}/v1`,
            model: 'tool-model',
            concurrency: 1,
            tools: { mcp: [{ name: 'prices', url: tools.url }] },
            limits: { maxToolErrors: 2 },
          },
        ],
      });
      const runId = `run-agent-breaker-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).paused), 90_000);
      const { paused } = await handle.query(progressQuery);
      expect(paused).toMatchObject({
        by: 'breaker',
        reason: expect.stringMatching(
          /^copilot Agent failing: copilot Agent: tool get_price keeps failing \(2 error results in a row, limits\.maxToolErrors\): unknown symbol (DOGE|PEPE)/,
        ),
      });
      const failed = (await world.store.responses(runId)).filter((r) => r.status === 'failed');
      expect(failed.length).toBeGreaterThanOrEqual(5);
      expect(failed.length).toBeLessThan(12);
      expect(failed.every((r) => r.errorKind === 'tool')).toBe(true);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await Promise.all([judge.close(), model.close(), tools.close()]);
  }
});
