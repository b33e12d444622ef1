import fs from 'node:fs';
import path from 'node:path';
import { parseCsv } from '../../core/io/csv';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import type { SimRequestLog } from '../../sim/server';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker, type TestWorld } from '../support/harness';
import { gradedText } from '../support/judges';
import { rejudgeRun } from '../support/rejudge';
import { simServersForFile } from '../support/sims';

jest.setTimeout(180_000);

// A judge with Gaussian noise of sd 2 points on every score, and one without (identical requests, identical answers).
const sim = simServersForFile({ judge: { judges: { 'noisy-judge': { noise: 2, seed: 7 } } }, copilots: {} });

const DIMS = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'];
const QUERIES = latticeGrid(16, 5).filter((q) => ['T1', 'T2', 'T9'].includes(q.task as string)); // 15 queries, no refusal task
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function config(dir: string, model: string, samples: number) {
  return runConfig(dir, {
    protocol: 'lattice',
    queries: QUERIES,
    judge: { baseURL: sim.judge.url, model, concurrency: 4, samples },
    copilots: simCopilots(sim.copilots.url, { Sorin: 'sim-thorough', Elsa: 'sim-copilot' }),
  });
}

async function run(world: TestWorld, model: string, samples: number) {
  const before = sim.judge.requests.length;
  const runId = `run-samples-${model}-${samples}-${Date.now()}`;
  const result = await world.client.workflow.execute(benchmarkRun, {
    taskQueue: world.taskQueue,
    workflowId: runId,
    args: [runInput(config(tempDir(), model, samples), runId)],
  });
  return {
    result,
    requests: sim.judge.requests.slice(before),
    report: JSON.parse(fs.readFileSync(result.reportPath, 'utf8')),
  };
}

/** What the judge answered, per graded response text: one scores object per call. */
function answersByText(requests: SimRequestLog[]): Map<string, Array<Record<string, number>>> {
  const out = new Map<string, Array<Record<string, number>>>();
  for (const r of requests) {
    const answer = JSON.parse(r.content!);
    const scores = Object.fromEntries(Object.entries(answer).map(([d, v]) => [d, (v as { score: number }).score]));
    out.set(gradedText(r.body), [...(out.get(gradedText(r.body)) ?? []), scores]);
  }
  return out;
}

test('judge.samples: 3 against a judge that varies by call: each response judged exactly 3 times, means of its answers reported, reliability measured', async () => {
  await withWorker('samples', async (world) => {
    const { result, requests, report } = await run(world, 'noisy-judge', 3);
    const responses = await world.store.responses(result.runId);
    expect(new Set(responses.map((r) => r.text)).size).toBe(30); // texts tell responses apart
    // Every response judged exactly 3 times, counted at the judge.
    const answers = answersByText(requests);
    expect(requests).toHaveLength(90);
    expect([...answers.keys()].sort()).toEqual(responses.map((r) => r.text!).sort());
    for (const calls of answers.values()) expect(calls).toHaveLength(3);
    // Samples of one response really differ (the judge is noisy), and each sample was stored as its own row.
    expect(
      [...answers.values()].filter((calls) => new Set(calls.map((c) => JSON.stringify(c))).size > 1).length,
    ).toBeGreaterThan(20);
    expect(await world.store.judgments(result.runId)).toHaveLength(90);

    // results.csv: every row's dimension scores are the mean of that response's three answers.
    const rows = parseCsv(
      fs.readFileSync(path.join(path.dirname(result.reportPath), 'results.csv'), 'utf8'),
      'results.csv',
    );
    const header = rows[0];
    for (const row of rows.slice(1)) {
      const text = responses.find(
        (r) => r.queryId === row[header.indexOf('query_id')] && r.copilot === row[header.indexOf('copilot')],
      )!.text!;
      for (const d of DIMS)
        expect(Number(row[header.indexOf(d)])).toBeCloseTo(avg(answers.get(text)!.map((a) => a[d])), 9);
    }
    // report.json: each copilot's dimension mean is the mean of its responses' means (= of all its answers here).
    for (const copilot of ['Sorin', 'Elsa']) {
      const mine = responses.filter((r) => r.copilot === copilot).map((r) => answers.get(r.text!)!);
      for (const d of DIMS)
        expect(report.copilots[copilot].dimensions[d]).toBeCloseTo(
          avg(mine.map((calls) => avg(calls.map((c) => c[d])))),
          9,
        );
      expect(report.copilots[copilot]).toMatchObject({ n: 15, failed: 0 });
    }

    // The reliability block: three samples, nothing failed, noise clearly visible.
    const rel = report.reliability;
    expect(rel).toMatchObject({
      samples: 3,
      units: 30,
      samplesRequested: 90,
      samplesOk: 90,
      samplesFailed: 0,
      unitsWithFailedSamples: 0,
      unitsWithoutScore: 0,
    });
    expect(Object.keys(rel.dimensions).sort()).toEqual(DIMS);
    for (const d of DIMS) {
      expect(rel.dimensions[d].units).toBe(30);
      expect(rel.dimensions[d].withinUnitSd).toBeGreaterThan(0.8);
      expect(rel.dimensions[d].alpha).toBeLessThan(0.85); // measured 0.45–0.71 (noise-free: 1)
      expect(rel.dimensions[d].disagreeShare).toBeGreaterThan(0.3);
    }
    const md = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8');
    expect(md).toContain('## Reliability of the judge (repeated samples)');
    expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.html'), 'utf8')).toContain(
      'id="reliability-table"',
    );

    // A noise-free judge: samples agree exactly, so reliability is 1.
    const steady = await run(world, 'steady-judge', 2);
    expect(steady.requests).toHaveLength(60);
    for (const d of DIMS)
      expect(steady.report.reliability.dimensions[d]).toMatchObject({
        units: 30,
        withinUnitSd: 0,
        disagreeShare: 0,
        alpha: 1,
      });
    expect(steady.report.reliability.total).toMatchObject({ withinUnitSd: 0, alpha: 1 });

    // Re-judging the noisy run with --samples 5 asks only for samples 4 and 5; the three it has come from the answer cache.
    const before = sim.judge.requests.length;
    const more = await rejudgeRun(world, result.runId, { samples: 5 }, `rejudge-samples-${Date.now()}`);
    expect(sim.judge.requests.length - before).toBe(60);
    const moreReport = JSON.parse(fs.readFileSync(more.reportPath, 'utf8'));
    expect(moreReport.reliability).toMatchObject({ samples: 5, samplesOk: 150 });
    const kept = await world.store.judgments(more.runId);
    const old = await world.store.judgments(result.runId);
    for (const j of old)
      expect(
        kept.find((k) => k.queryId === j.queryId && k.copilot === j.copilot && k.sample === j.sample)!.scores,
      ).toEqual(j.scores);
  });
});
