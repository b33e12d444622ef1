import { benchmarkRun } from '../../../workflows';
import { runInput } from '../../../client/startRun';
import { runConfig, tempDir, withWorker } from '../../support/harness';
import { cabFixtureRows, writeCabFixture } from '../../support/cabDataset';
import { simServersForFile } from '../../support/sims';
import { decodedHistory } from '../../support/judges';
import { KEY } from './run';

/**
 * A small CryptoAnalystBench run (shared scoring conversation, then a ranking) against judges that ignore
 * response_format and answer in prose with a fence, or think aloud first: every response scored and ranked.
 */
const sim = simServersForFile({ judge: {}, copilots: {} });

test.each([
  ['noschema', { model: 'sim-noschema' }],
  ['think', { provider: 'fireworks', model: 'sim-think' }],
])(
  'CAB against a %s judge: every response judged, no key in the history',
  async (name, judge) => {
    const dir = tempDir();
    const cfg = runConfig(dir, {
      protocol: 'cab',
      queries: writeCabFixture(dir, cabFixtureRows().slice(0, 3)),
      judge: { baseURL: sim.judge.url, apiKeyEnv: 'PROVIDER_KEY', maxAttempts: 3, ...judge },
      copilots: [
        { name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'sim-thorough' },
        { name: 'B', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' },
      ],
    });
    await withWorker(
      `providers-cab-${name}`,
      async ({ client, taskQueue, store }) => {
        const runId = `run-providers-cab-${name}-${Date.now()}`;
        const handle = await client.workflow.start(benchmarkRun, {
          taskQueue,
          workflowId: runId,
          args: [runInput(cfg, runId)],
        });
        await handle.result();
        const run = (await store.getRun(runId))!;
        const judgments = await store.judgments(runId, run.rubricVersion);
        expect(judgments).toHaveLength(6);
        expect(judgments.map((j) => [j.status, j.error])).toEqual(judgments.map(() => ['ok', null]));
        expect(judgments.every((j) => j.rank !== null)).toBe(true);
        expect(sim.judge.requests.some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
        expect(decodedHistory(await handle.fetchHistory())).not.toContain(KEY);
      },
      { ...process.env, PROVIDER_KEY: KEY },
    );
  },
  180_000,
);
