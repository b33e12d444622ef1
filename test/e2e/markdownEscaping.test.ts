import { compareStoredRuns } from '../../client/compareRuns';
import { runInput } from '../../client/startRun';
import { studyMarkdown, type StudyReport } from '../../client/study/report';
import { buildRunReport } from '../../services/runReport';
import { renderComparison } from '../../core/compare/markdown';
import { analyseStudy } from '../../core/study/analysis';
import { loadStudyOptions } from '../../rubrics/study/options';
import { benchmarkRun } from '../../workflows';
import { runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';

/** What a hostile query, copilot or judge puts in front of a Markdown viewer that renders HTML. */
const SCRIPT = '<script>alert(1)</script>';
const IMG = '<img src=x onerror=alert(2)>';
const HOSTILE = `${SCRIPT} ${IMG}`;
/** No live tag: wherever the hostile text appears it is escaped, never HTML a viewer would run. */
const expectInert = (md: string) => {
  expect(md).not.toMatch(/<script/i);
  expect(md).not.toMatch(/<img[^>]*onerror/i);
};

const sim = simServersForFile({
  // The judge's rationales carry the hostile text too.
  judge: {
    handler: (body) =>
      body.response_format?.type === 'json_schema'
        ? JSON.stringify(
            Object.fromEntries(
              Object.keys(body.response_format.json_schema.schema.properties).map((d, i) => [
                d,
                { score: 3 + i, rationale: `rationale ${HOSTILE}` },
              ]),
            ),
          )
        : undefined,
  },
  copilots: { handler: (body) => ({ content: `answer ${HOSTILE} from ${body.model}` }) },
});

test('report.md, compare.md and study.md show hostile query text, query ids and rationales as text, never as live HTML', async () => {
  await withWorker('markdown-escaping', async ({ client, taskQueue, store }) => {
    const dir = tempDir('jf-md-');
    const queries = [1, 2, 3].map((i) => ({
      id: `q${i}<script>x</script>`,
      text: `Question ${i} ${HOSTILE}`,
      task: 'T1',
      category: 'C1',
    }));
    const cfg = runConfig(dir, {
      protocol: 'lattice',
      queries,
      judge: { baseURL: sim.judge.url, model: 'judge-md' },
      copilots: simCopilots(sim.copilots.url, { Ace: 'sim-a', Bolt: 'sim-b' }),
    });
    const runs: string[] = [];
    for (const n of [1, 2]) {
      const runId = `run-md-${n}-${Date.now()}`;
      await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
      runs.push(runId);
    }
    const deps = { store, env: process.env };
    const { files } = await buildRunReport(deps, runs[0]);
    expectInert(files.markdown);
    expectInert(renderComparison((await compareStoredRuns(store, runs[0], runs[1])).comparison));

    // study.md: its disagreements quote the query text, its id and the judge's rationales.
    const run = (await store.getRun(runs[0]))!;
    const judged = await store.judgments(runs[0]);
    const scores = new Map(
      judged.map((j) => [
        `${j.queryId}|${j.copilot}`,
        { total: j.total! + (j.copilot === 'Ace' ? 10 : 0), rationales: j.rationales },
      ]),
    );
    const items = queries.map((q, i) => ({ itemId: `item${i}`, queryId: q.id, first: 'Ace', second: 'Bolt' }));
    const answer = { choice: 'B' as const, reason: 'accuracy', seriousError: false, errorType: null, comment: HOSTILE };
    const analysis = analyseStudy({
      copilots: ['Ace', 'Bolt'],
      items,
      annotations: items.map((it) => ({ itemId: it.itemId, left: 'Ace', right: 'Bolt', answer })),
      queries: new Map((await store.snapshotQueries(run.snapshotId)).map((q) => [q.id, q])),
      options: loadStudyOptions(),
      judges: [{ judgeRunId: runs[0], scores }],
      tieMargin: 0,
      seed: 's',
      bootstrapIterations: 10,
    });
    const report = {
      study: 'pref',
      runId: runs[0],
      protocol: 'lattice',
      status: 'closed',
      copilots: ['Ace', 'Bolt'],
      design: { queries: 3, perItem: 1, excluded: { pairs: 0, failed: 0, missing: 0 } },
      counts: {
        annotations: 3,
        annotators: 1,
        imported: 0,
        pendingSubmissions: 0,
        rejectedSubmissions: 0,
        revisions: 0,
      },
      // The calibrated block's figures are not what this test is about; its copilot names are the hostile-free ones.
      calibrated: {
        judgeRunId: runs[0],
        items: 3,
        annotatedItems: 3,
        tieMargin: 0,
        itemsWithoutJudgment: 0,
        annotatedItemsWithoutJudgment: 0,
        copilots: {},
      },
      ...analysis,
    } as unknown as StudyReport;
    const md = studyMarkdown(report);
    expect(md).toContain('## Judge–human agreement');
    expect(md).toContain('by 1 annotator on 3 items');
    expect(md).toContain('rationale &lt;script&gt;');
    expect(md).toContain('**q1&lt;script&gt;x&lt;/script&gt;**');
    expect(md).toContain('Question 1 &lt;script&gt;');
    expectInert(md);
  });
});
