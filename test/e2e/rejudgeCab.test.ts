import fs from 'node:fs';
import path from 'node:path';
import { compareStoredRuns } from '../../client/compareRuns';
import { runInput } from '../../client/startRun';
import { cabProtocol } from '../../rubrics/cab';
import { benchmarkRun } from '../../workflows';
import { rankingByTotals, schemaName, schemaOf, scoringPrompts, responseTextOf } from '../support/cabJudge';
import { runConfig, simCopilots, tempDir, withWorker, writeQueries } from '../support/harness';
import { hashInt, systemOf } from '../support/judges';
import { rejudgeRun } from '../support/rejudge';
import { copyRubric, editOnce } from '../support/rubricCopy';
import { simServersForFile } from '../support/sims';

/** Shared-conversation judge: scores depend on the system prompt (the rubric text) and the response; ranking by totals. */
function cabJudge(body: any): string | undefined {
  const name = schemaName(body);
  if (name === 'cab_ranking') return JSON.stringify(rankingByTotals(body));
  if (name !== 'cab_scores') return undefined;
  const prompts = scoringPrompts(body);
  const text = responseTextOf(prompts[prompts.length - 1]);
  const dims = Object.keys(schemaOf(body).properties);
  return JSON.stringify(
    Object.fromEntries(
      dims.map((d) => [
        d,
        { score: 1 + (hashInt(`${hashInt(systemOf(body))}|${text}|${d}`) % 10), reasoning: `${d} reasoning` },
      ]),
    ),
  );
}

const sim = simServersForFile({ judge: { handler: cabJudge }, copilots: {} });

const QUERIES = Array.from({ length: 6 }, (_, i) => ({
  id: `cq${i}`,
  text: `CAB question ${i}: how do ETH staking yields compare with T-bills this month?`,
  tags: i % 2 ? 'Yield' : 'Macro',
}));

test('a CryptoAnalystBench (shared-conversation) run re-judges for free when unchanged, and afresh after a rubric change, without copilot calls', async () => {
  await withWorker('rejudge-cab', async (world) => {
    const { judge, copilots } = sim;
    const dir = tempDir();
    const config = runConfig(dir, {
      protocol: 'cab',
      queries: writeQueries(dir, QUERIES, 'cab.jsonl'),
      judge: { baseURL: judge.url, model: 'cab-judge', concurrency: 3 },
      copilots: simCopilots(copilots.url, { Nimbus: 'sim-thorough', Quasar: 'sim-terse', Zephyr: 'sim-balanced' }),
    });
    let judgeCalls = judge.requests.length;
    const sourceId = `cab-src-${Date.now()}`;
    const source = await world.client.workflow.execute(benchmarkRun, {
      taskQueue: world.taskQueue,
      workflowId: sourceId,
      args: [runInput(config, sourceId)],
    });
    const sourceCalls = judge.requests.length - judgeCalls;
    expect(sourceCalls).toBe(QUERIES.length * 4); // three scoring turns and one ranking per query
    const copilotCalls = copilots.requests.length;

    // Unchanged rubric and judge: every turn of every shared conversation comes from the answer cache.
    judgeCalls = judge.requests.length;
    const free = await rejudgeRun(world, source.runId, {}, `cab-free-${Date.now()}`);
    expect(judge.requests.length - judgeCalls).toBe(0);
    const strip = async (runId: string) =>
      (await world.store.judgments(runId)).map((j) => [j.queryId, j.copilot, j.scores, j.total, j.rank, j.position]);
    expect(await strip(free.runId)).toEqual(await strip(source.runId));
    // The judge is told the source run's day, not the re-judge's.
    expect((await world.store.getRun(free.runId))!.config).toMatchObject({
      cab: { evaluationDate: (await world.store.getRun(source.runId))!.startedAt.slice(0, 10) },
    });
    expect(JSON.parse(fs.readFileSync(free.reportPath, 'utf8'))).toMatchObject({
      sourceRunId: source.runId,
      evaluationDate: (await world.store.getRun(source.runId))!.startedAt.slice(0, 10),
    });

    // A changed dimension text: each shared conversation is held again, once.
    const rubricDir = copyRubric('cab');
    editOnce(
      path.join(rubricDir, 'rubric.yaml'),
      'Is the information fresh and timely?',
      'Is the information fresh, dated and timely?',
    );
    judgeCalls = judge.requests.length;
    const changed = await rejudgeRun(world, source.runId, { rubricDir }, `cab-changed-${Date.now()}`);
    expect(judge.requests.length - judgeCalls).toBe(sourceCalls);
    expect(copilots.requests.length).toBe(copilotCalls);
    const report = JSON.parse(fs.readFileSync(changed.reportPath, 'utf8'));
    expect(report.rubricVersion).toBe(cabProtocol.loadRubric(rubricDir).version);
    expect(report.sourceRunId).toBe(source.runId);

    // compare is protocol-generic: per-dimension, total, mean rank and per-tag deltas.
    const { comparison } = await compareStoredRuns(world.store, source.runId, changed.runId);
    const nimbus = comparison.copilots.Nimbus;
    expect(nimbus.overall.n).toBe(QUERIES.length);
    expect(Object.keys(nimbus.dimensions).sort()).toEqual([
      'data_consistency',
      'depth',
      'relevance',
      'temporal_relevance',
    ]);
    expect(nimbus.meanRank).toMatchObject({ n: QUERIES.length });
    expect(Object.keys(nimbus.groups.tags).sort()).toEqual(['Macro', 'Yield']);
    expect(comparison.rubricChanged).toBe(true);
  });
});
