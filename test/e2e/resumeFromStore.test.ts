import fs from 'node:fs';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { latticeGrid, runConfig, settled, simCopilots, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

jest.setTimeout(180_000);

const CONCURRENCY = 2;

/** How many times each distinct request reached a simulator beyond its first. */
function repeats(sim: SimServer): number {
  const seen = new Map<string, number>();
  for (const r of sim.requests) {
    const body = r.body as { model?: string; messages?: unknown };
    const key = `${body.model}|${JSON.stringify(body.messages)}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen.values()].reduce((n, count) => n + count - 1, 0);
}

test('a run whose workflow was terminated mid-run finishes in a new execution resumed from the store: nothing asked twice beyond what was in flight, the report complete', async () => {
  // From the moment the test sees the run mid-run until the resumed execution starts, the copilots answer nothing
  // (the first execution's requests never): answers stop there, not when its activities notice the termination, by
  // which time its groups had collected 44 of the 60 answers on an idle machine, 52 under load. And the copilots are
  // slower than the judge (250 ms a call against 40), so the judge reaches 6 verdicts while most answers are still to
  // come (28 of 60 were in at the cut, idle and with four CPU burners on the two cores alike): both are simulated
  // latencies, not CPU, so load does not move the one past the other.
  let holding = false;
  const never = new Promise<undefined>(() => undefined);
  const copilots = await startSimServer({ latencyMs: 250, handler: () => (holding ? never : undefined) });
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 40 });
  try {
    await withWorker('resume', async ({ client, taskQueue, store, dir }) => {
      const queries = latticeGrid(6, 5); // 30 queries × 2 copilots: 60 answers, 60 judgments
      const config = runConfig(dir, {
        protocol: 'lattice',
        queries,
        judge: { baseURL: judge.url, model: 'judge', concurrency: CONCURRENCY },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }).map((c) => ({
          ...c,
          concurrency: CONCURRENCY,
        })),
      });
      const runId = `run-resume-${Date.now()}`;
      const first = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      // Mid-run: some answers judged, not all collected.
      await until(async () => (await store.judgments(runId)).length >= 6, 60_000);
      holding = true;
      await first.terminate('the test ends this execution mid-run');
      // Its activities stop, or wait on a request never answered: no request reaches the simulators for 4 s.
      await settled(() => copilots.requests.length + judge.requests.length, 4_000, 30_000);
      const before = {
        responses: (await store.responses(runId)).length,
        judgments: (await store.judgments(runId)).length,
        copilot: copilots.requests.length,
        judge: judge.requests.length,
      };
      expect(before.responses).toBeLessThan(60);
      expect(before.judgments).toBeLessThan(60);

      holding = false;
      const resumed = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [{ ...runInput(config, runId), resumeFromStore: true }],
      });
      const result = await resumed.result();

      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect(result.progress.stages).toMatchObject({
        collect: { done: 60, total: 60 },
        judge: { done: 60, total: 60 },
      });
      const responses = await store.responses(runId);
      const judgments = await store.judgments(runId);
      expect(responses).toHaveLength(60);
      expect(judgments).toHaveLength(60);
      expect(judgments.every((j) => j.status === 'ok')).toBe(true);
      // The report covers every answer of both executions: each copilot scored on all 30 queries, nothing missing.
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      for (const name of ['A', 'B'])
        expect(report.copilots[name]).toMatchObject({ n: 30, missingResponses: 0, failedResponses: 0 });
      // The run record and snapshot were adopted, not made again.
      expect((await store.listRuns()).map((r) => r.runId)).toEqual([runId]);
      expect((await store.getRun(runId))?.status).toBe('completed');
      // The new execution asked only what the store did not hold: the copilots for the missing answers, the judge for
      // the missing judgments, plus at most what was in flight when the first execution ended.
      expect(copilots.requests.length - before.copilot).toBe(60 - before.responses);
      expect(judge.requests.length - before.judge).toBe(60 - before.judgments);
      expect(repeats(copilots)).toBeLessThanOrEqual(2 * CONCURRENCY);
      expect(repeats(judge)).toBeLessThanOrEqual(CONCURRENCY);
    });
  } finally {
    await copilots.close();
    await judge.close();
  }
});
