import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { postgresForFile } from '../support/postgresServer';
import { simServersForFile } from '../support/sims';

/**
 * The results store (PostgreSQL) stopped for 20 seconds in the middle of a run: the activities wait for it, holding what
 * the copilots and judge answered, so the run completes with every item ok and nothing was asked twice.
 */
const postgres = postgresForFile();
jest.setTimeout(300_000);

const sim = simServersForFile({
  judge: { handler: scriptedLatticeJudge, latencyMs: 100 },
  copilots: { latencyMs: 150 },
});

postgres.test(
  `PostgreSQL down for 20 s mid-run: the run completes with every item ok and no copilot or judge asked twice${postgres.unavailable ? ` (skipped: ${postgres.unavailable})` : ''}`,
  async () => {
    const url = await postgres.server().createDatabase('jf_outage');
    await withWorker(
      'store-outage',
      async ({ client, taskQueue, store }) => {
        const dir = tempDir('jf-outage-');
        const queries = latticeGrid(8, 5); // 40 queries × 2 copilots
        const cfg = runConfig(dir, {
          protocol: 'lattice',
          queries,
          judge: { baseURL: sim.judge.url, model: 'judge-outage', concurrency: 4 },
          copilots: simCopilots(sim.copilots.url, { Ace: 'sim-thorough', Bolt: 'sim-terse' }).map((c) => ({
            ...c,
            concurrency: 2,
          })),
        });
        const runId = `run-outage-${Date.now()}`;
        const handle = await client.workflow.start(benchmarkRun, {
          taskQueue,
          workflowId: runId,
          args: [runInput(cfg, runId)],
        });
        await until(async () => (await store.responses(runId)).length >= 10, 120_000);
        await postgres.server().pause();
        const askedBefore = sim.copilots.requests.length;
        await new Promise((resolve) => setTimeout(resolve, 20_000));
        // With the store down, answers in flight are held; nothing is re-asked while waiting.
        const askedDuring = sim.copilots.requests.length - askedBefore;
        await postgres.server().resume();
        await handle.result();

        expect(await store.getRun(runId)).toMatchObject({ status: 'completed' });
        const responses = await store.responses(runId);
        expect(
          responses.map((r) => [r.queryId, r.copilot, r.status, r.errorMessage]).filter((r) => r[2] !== 'ok'),
        ).toEqual([]);
        expect(responses).toHaveLength(80);
        const judgments = await store.judgments(runId);
        expect(judgments.filter((j) => j.status !== 'ok')).toEqual([]);
        expect(judgments).toHaveLength(80);
        // Every copilot was asked each query exactly once (the ones in flight at the stop included); the judge likewise.
        const asked = (requests: typeof sim.copilots.requests) => {
          const counts = new Map<string, number>();
          for (const r of requests) {
            const key = `${r.model}\u0000${JSON.stringify(r.body?.messages)}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
          }
          return [...counts.values()];
        };
        expect(asked(sim.copilots.requests)).toEqual(Array(80).fill(1));
        expect(asked(sim.judge.requests).filter((n) => n > 1)).toEqual([]);
        expect(askedDuring).toBeLessThanOrEqual(4); // at most the calls already on their way when the server stopped
        const calls = await store.llmCalls(runId);
        expect(calls.filter((c) => c.role === 'copilot' && c.ok)).toHaveLength(80);
        expect(calls.filter((c) => !c.ok)).toEqual([]);
      },
      process.env,
      { kind: 'postgres', url },
    );
  },
);
