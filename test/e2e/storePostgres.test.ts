import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { cliInProcess } from '../support/cliInProcess';
import { scriptedLatticeJudge } from '../support/judges';
import { postgresForFile } from '../support/postgresServer';
import { simServersForFile } from '../support/sims';

/** A benchmark run through real Temporal whose worker keeps everything in PostgreSQL; the report is re-rendered from there. */
const postgres = postgresForFile();
const unavailable = postgres.unavailable;
const testPostgres = postgres.test;

const sim = simServersForFile({ judge: { handler: scriptedLatticeJudge }, copilots: {} });

testPostgres(
  `a LATTICE run with JUDGEFLOW_STORE=postgres://… completes, and any process can render its report from the store${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  async () => {
    const url = await postgres.server().createDatabase('jf_e2e');
    const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T9'].includes(q.task as string)); // 10 queries
    await withWorker(
      'postgres-e2e',
      async ({ client, taskQueue, store }) => {
        const dir = tempDir('jf-pg-e2e-');
        const cfg = runConfig(dir, {
          protocol: 'lattice',
          queries,
          judge: { baseURL: sim.judge.url, model: 'judge-pg', concurrency: 4 },
          copilots: simCopilots(sim.copilots.url, { Ace: 'sim-thorough', Bolt: 'sim-terse' }),
        });
        const runId = `run-pg-${Date.now()}`;
        const result = await (
          await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] })
        ).result();
        expect(result.runId).toBe(runId);
        expect(store.location).toMatch(/^postgres:\/\/judgeflow@127\.0\.0\.1:\d+\/jf_e2e$/);
        expect(await store.getRun(runId)).toMatchObject({
          status: 'completed',
          protocol: 'lattice',
          copilots: ['Ace', 'Bolt'],
        });
        expect((await store.responses(runId)).map((r) => r.status)).toEqual(Array(20).fill('ok'));
        const judgments = await store.judgments(runId);
        expect(judgments).toHaveLength(20);
        expect(judgments.every((j) => j.status === 'ok' && typeof j.total === 'number')).toBe(true);
        const calls = await store.llmCalls(runId);
        expect(calls.filter((c) => c.role === 'copilot')).toHaveLength(20);
        expect(calls.filter((c) => c.role === 'judge')).toHaveLength(20);

        // Another process (here: the CLI, pointed at the same database) renders the same report from the store alone.
        const written = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
        const out = path.join(dir, 'elsewhere');
        const rendered = await cliInProcess(['report', runId, '--out', out], { JUDGEFLOW_STORE: url });
        expect(rendered.code).toBe(0);
        const again = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
        expect({ ...again, generatedAt: null }).toEqual({ ...written, generatedAt: null });
        expect((await cliInProcess(['runs', '--json'], { JUDGEFLOW_STORE: url })).stdout).toContain(runId);
      },
      process.env,
      { kind: 'postgres', url },
    );
  },
);
