import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { latticeGrid, runConfig, tempDir, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { scheduledActivities } from '../support/histories';
import { FIRST_IMPORT_QUERIES } from '../../workflows/collectAndJudge';

let judge: SimServer;
let slowCopilots: SimServer;
beforeAll(async () => {
  judge = await startSimServer({ handler: scriptedLatticeJudge });
  slowCopilots = await startSimServer({ latencyMs: 150 });
});
afterAll(async () => {
  await Promise.all([judge, slowCopilots].map((s) => s.close()));
});

/** A copilot's held answers as the csv adapter reads them (a `query` column and `<name>_response`); returns its path. */
function heldAnswersCsv(
  dir: string,
  name: string,
  queries: ReturnType<typeof latticeGrid>,
  answer: (query: ReturnType<typeof latticeGrid>[number]) => string,
): string {
  const file = path.join(dir, `${name}.csv`);
  fs.writeFileSync(
    file,
    `query,${name}_response\n` +
      queries.map((q) => `"${String(q.text).replace(/"/g, '""')}",${answer(q)}`).join('\n') +
      '\n',
  );
  return file;
}

test('judging starts before collection ends; answers held in a CSV are imported in one step', async () => {
  const dir = tempDir();
  const queries = latticeGrid(4, 3); // 12 queries
  const csv = heldAnswersCsv(dir, 'Held', queries, (q) => `A held answer about ${q.id}.`);
  const cfg = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge-model-x', concurrency: 4 },
    copilots: [
      { name: 'Sorin', type: 'openai', baseURL: slowCopilots.url, model: 'sim-thorough', concurrency: 2 },
      { name: 'Surfboard', type: 'openai', baseURL: slowCopilots.url, model: 'sim-terse', concurrency: 2 },
      { name: 'Held', type: 'csv', path: csv },
    ],
  });
  await withWorker('pipeline-overlap', async ({ client, taskQueue, store }) => {
    const judgeBefore = judge.requests.length;
    const copilotBefore = slowCopilots.requests.length;
    const runId = 'run-overlap-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });

    const judgeCalls = judge.requests.slice(judgeBefore);
    const copilotCalls = slowCopilots.requests.slice(copilotBefore);
    expect(judgeCalls).toHaveLength(36);
    expect(copilotCalls).toHaveLength(24);
    // Judged while collecting: the first judge call came before the last copilot call was even sent.
    const firstJudge = Math.min(...judgeCalls.map((r) => r.at));
    const lastCopilot = Math.max(...copilotCalls.map((r) => r.at));
    expect(firstJudge).toBeLessThan(lastCopilot);
    // The store agrees: some judgment was stored before the last answer was.
    const lastAnswer = Math.max(
      ...(await store.responses(runId)).filter((r) => r.adapter === 'openai').map((r) => Date.parse(r.finishedAt!)),
    );
    expect(Math.min(...(await store.judgments(runId)).map((j) => Date.parse(j.createdAt)))).toBeLessThan(lastAnswer);

    // The CSV's 12 answers: one import activity, no per-answer collection.
    const activities = await scheduledActivities(client, runId);
    expect(activities.filter((a) => a.name === 'importAnswers')).toHaveLength(1);
    // The live copilots' 24 answers: each asked once, alone or in a batch of several (askCopilotBatch).
    const asked = activities
      .filter((a) => a.name === 'askCopilot' || a.name === 'askCopilotBatch')
      .flatMap((a) => a.items);
    expect(asked.sort()).toEqual(queries.flatMap((q) => [`${q.id}/Sorin`, `${q.id}/Surfboard`]).sort());
    expect((await store.responses(runId)).filter((r) => r.copilot === 'Held' && r.status === 'ok')).toHaveLength(12);
    expect(result.progress.stages).toEqual({
      collect: { done: 36, total: 36, failures: 0 },
      judge: { done: 36, total: 36, failures: 0 },
    });
  });
}, 90_000);

test("held answers to many queries: every source's first queries are imported first, then the rest, and all are judged", async () => {
  const dir = tempDir();
  const queries = latticeGrid(16, 4); // 64 queries: more than FIRST_IMPORT_QUERIES
  const csv = (name: string) => heldAnswersCsv(dir, name, queries, (q) => `${name} on ${q.id}.`);
  const cfg = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge-model-x', concurrency: 4 },
    copilots: ['Elsa', 'Gina'].map((name) => ({ name, type: 'csv', path: csv(name) })),
  });
  await withWorker('pipeline-import-pages', async ({ client, taskQueue, store }) => {
    const runId = 'run-import-pages-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    const imports = (await scheduledActivities(client, runId)).filter((a) => a.name === 'importAnswers');
    expect(imports.map((a) => a.args.queries)).toEqual([
      { from: 0, to: FIRST_IMPORT_QUERIES },
      { from: 0, to: FIRST_IMPORT_QUERIES },
      { from: FIRST_IMPORT_QUERIES, to: 64 },
      { from: FIRST_IMPORT_QUERIES, to: 64 },
    ]);
    expect((await store.responses(runId)).filter((r) => r.status === 'ok')).toHaveLength(128);
    expect(result.progress.stages).toEqual({
      collect: { done: 128, total: 128, failures: 0 },
      judge: { done: 128, total: 128, failures: 0 },
    });
  });
});
