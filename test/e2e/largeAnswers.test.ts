import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { gradedText, scriptedLatticeJudge } from '../support/judges';
import { simServersForFile } from '../support/sims';

/** Copilot "Huge" answers 12,003 characters; the run caps what the judge is sent at maxAnswerChars = 1,000. */
const HUGE = `${'padding '.repeat(1500)}END`;
const sim = simServersForFile({
  judge: { handler: scriptedLatticeJudge },
  copilots: { handler: (body) => (body.model === 'sim-huge' ? { content: HUGE } : undefined) },
});

test('maxAnswerChars: a longer answer is stored and exported whole, the judge is sent its beginning with a note, the report lists it', async () => {
  await withWorker('large-answers', async ({ client, taskQueue, store }) => {
    const dir = tempDir('jf-large-');
    const queries = latticeGrid(2, 2);
    const cfg = runConfig(dir, {
      protocol: 'lattice',
      queries,
      maxAnswerChars: 1_000,
      judge: { baseURL: sim.judge.url, model: 'judge-cap' },
      copilots: simCopilots(sim.copilots.url, { Huge: 'sim-huge', Small: 'sim-terse' }),
    });
    const runId = `run-large-${Date.now()}`;
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });

    expect((await store.responses(runId)).filter((r) => r.copilot === 'Huge').map((r) => r.text)).toEqual(
      Array(queries.length).fill(HUGE),
    );
    const sent = sim.judge.requests.map((r) => gradedText(r.body)).filter((t) => t.startsWith('padding'));
    expect(sent).toHaveLength(queries.length);
    for (const text of sent) {
      expect(text.startsWith(HUGE.slice(0, 1_000))).toBe(true);
      expect(text).not.toContain('END');
      expect(text).toContain(
        '[answer truncated: 12,003 characters, the first 1,000 shown (maxAnswerChars); the judge saw only this part]',
      );
    }
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.truncatedForJudge).toEqual(
      queries
        .map((q) => ({ queryId: q.id as string, copilot: 'Huge', chars: 12_003 }))
        .sort((a, b) => a.queryId.localeCompare(b.queryId)),
    );
    const runFolder = path.dirname(result.reportPath);
    // The config never said so, but the simulator's answers carry its header: every format says SIMULATED.
    expect(cfg.simulated).toBe(false);
    expect(report.simulated).toBe(true);
    expect(fs.readFileSync(path.join(runFolder, 'report.md'), 'utf8')).toContain('**Simulated run.**');
    expect(fs.readFileSync(path.join(runFolder, 'report.md'), 'utf8')).toContain('## Answers truncated for the judge');
    const lines = fs
      .readFileSync(path.join(runFolder, 'responses.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.copilot === 'Huge').map((l) => l.text)).toEqual(Array(queries.length).fill(HUGE));
    // The page shows each answer cut to maxAnswerChars too; responses.jsonl has it whole.
    const html = fs.readFileSync(path.join(runFolder, 'report.html'), 'utf8');
    expect(html).toContain('responses.jsonl has it whole');
    expect(html).toContain('<strong>Simulated run.</strong>');
    // report.html has what report.md has: the separability pairs with their p-values, and the length-bias section.
    expect(html).toContain('id="separability-pairs"');
    expect(html).toContain('id="length-bias"');
    const md = fs.readFileSync(path.join(runFolder, 'report.md'), 'utf8');
    const pairRow = md.split('\n').find((l) => /^\| (Huge|Small) \| (Huge|Small) \|/.test(l))!;
    const pValue = pairRow.split(' | ')[4];
    expect(html).toMatch(new RegExp(`<td[^>]*>${pValue.replace(/[.*+?^${}()|[\]\\<]/g, '\\$&')}</td>`));
    expect(html).not.toContain(HUGE);
    // Nothing but the run folder in the output directory: the report's temporary directory was renamed into place.
    expect(fs.readdirSync(path.dirname(runFolder))).toEqual([runId]);
  });
});
