import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { seedNumber } from '../../activities/deps';
import { runConfig, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';

/** Real providers' parameter rules, played by the simulator over real HTTP: `sim-reasoning` rejects temperature and max_tokens like OpenAI's reasoning models. */

const sim = simServersForFile({ judge: {}, copilots: {} });
const queries = [1, 2].map((i) => ({
  id: `t1-c${i}`,
  text: `Should I bridge USDC to Base, case ${i}?`,
  task: 'T1',
  category: `C${i}`,
}));

test('a judge that rejects temperature: left out after its one 400, and every unit judged', async () => {
  const { judge, copilots } = sim;
  const cfg = runConfig(tempDir(), {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'sim-reasoning-1' }, // the rubric's temperature is sent
    copilots: [{ name: 'A', type: 'openai', baseURL: copilots.url, model: 'sim-copilot' }],
  });
  await withWorker('unsupported-temperature', async ({ client, taskQueue, store }) => {
    const before = judge.requests.length;
    const runId = `run-unsupported-${Date.now()}`;
    await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
    const judgments = await store.judgments(runId, (await store.getRun(runId))!.rubricVersion);
    expect(judgments.map((j) => j.status)).toEqual(['ok', 'ok']);
    const bodies = judge.requests.slice(before).map((r) => r.body);
    // The refusal is paid once per endpoint (core/llm/providers/session.ts) — or once per call already in flight then.
    const refused = bodies.filter((b) => 'temperature' in b).length;
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(bodies.length - refused).toBe(2);
  });
}, 120_000);

test('temperature: null and maxTokensParam: max_completion_tokens satisfy it; the seed and system_fingerprint are recorded with every judgment', async () => {
  const { judge, copilots } = sim;
  const cfg = runConfig(tempDir(), {
    protocol: 'lattice',
    queries,
    seed: 'provider-check',
    judge: {
      baseURL: judge.url,
      model: 'sim-reasoning-1',
      temperature: null,
      maxTokens: 800,
      maxTokensParam: 'max_completion_tokens',
    },
    copilots: [
      {
        name: 'A',
        type: 'openai',
        baseURL: copilots.url,
        model: 'sim-reasoning-1',
        temperature: null,
        maxTokens: 400,
        maxTokensParam: 'max_completion_tokens',
      },
    ],
  });
  await withWorker('omitted-parameters', async ({ client, taskQueue, store }) => {
    const before = { judge: judge.requests.length, copilots: copilots.requests.length };
    const runId = `run-omitted-${Date.now()}`;
    await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
    const judgeBodies = judge.requests.slice(before.judge).map((r) => r.body);
    expect(judgeBodies.map((b) => [b.temperature, b.max_tokens, b.max_completion_tokens, b.seed])).toEqual([
      [undefined, undefined, 800, seedNumber('provider-check')],
      [undefined, undefined, 800, seedNumber('provider-check')],
    ]);
    expect(
      copilots.requests
        .slice(before.copilots)
        .map((r) => [r.body.temperature, r.body.max_completion_tokens, r.body.seed]),
    ).toEqual([
      [undefined, 400, seedNumber('provider-check')],
      [undefined, 400, seedNumber('provider-check')],
    ]);
    const judgments = await store.judgments(runId, (await store.getRun(runId))!.rubricVersion);
    expect(judgments.map((j) => j.status)).toEqual(['ok', 'ok']);
    for (const j of judgments) {
      expect(j.judge.seed).toBe(seedNumber('provider-check'));
      expect(j.judge.systemFingerprint).toMatch(/^fp_sim_[0-9a-f]{10}$/);
      expect(j.judge.temperature).toBeNull();
    }
  });
}, 120_000);
