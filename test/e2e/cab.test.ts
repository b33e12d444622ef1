import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { benchmarkRun } from '../../workflows';
import { parseCsv } from '../../core/io/csv';
import { blockedAnova, chiSquareUniform } from '../../core/stats/stats';
import { runInput } from '../../client/startRun';
import { runConfig, tempDir, withWorker } from '../support/harness';
import { cabDatasetFile } from '../support/cabDataset';
import {
  biasedScoring,
  firstFavouringJudge,
  labelOf,
  queryTextOf,
  rankingByTotals,
  schemaName,
  scoringPrompts,
} from '../support/cabJudge';
import { simServersForFile } from '../support/sims';

// The published CryptoAnalystBench CSV, read where it is, when ../shared has it; else a CAB-shaped fixture of 198 rows.
const DATASET = cabDatasetFile(tempDir('jf-cab-dataset-'));
const SYSTEMS = ['NimbusX', 'QuasarX', 'ZephyrX', 'OrchidX'];
const DIMS = ['relevance', 'temporal_relevance', 'depth', 'data_consistency'];
const BONUS = 2; // per dimension, so +2 on the score (mean of the four) of whatever the judge sees first
const Q = 198; // the whole dataset; not a multiple of 4, so position counts are 49 or 50: the "one-count imbalance" case
/** The reference's dimension headings, in script.py's order. */
const REFERENCE_ORDER = ['TEMPORAL RELEVANCE', 'DATA CONSISTENCY', 'DEPTH', 'RELEVANCE [relevance]'];
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const sim = simServersForFile({
  judge: { handler: firstFavouringJudge(BONUS) },
  copilots: {},
});

test('identical answers get equal means under a judge that favours position 1; the position-bias block flags the effect; figures match the judge answers', async () => {
  const { judge, copilots } = sim;
  const cfg = runConfig(tempDir(), {
    protocol: 'cab',
    queries: DATASET,
    judge: { baseURL: judge.url, model: 'biased-judge', concurrency: 16 },
    // Four systems, one model: every system gives the same answer to each query.
    copilots: SYSTEMS.map((name) => ({
      name,
      type: 'openai',
      baseURL: copilots.url,
      model: 'sim-thorough',
      concurrency: 16,
    })),
    seed: 'bias-check',
  });

  await withWorker('cab-bias', async ({ client, taskQueue, store }) => {
    const before = judge.requests.length;
    const runId = 'run-cab-bias-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    const requests = judge.requests.slice(before).map((r) => r.body);
    const run = (await store.getRun(runId))!;

    expect(
      (await store.responses(runId))
        .filter((r) => r.status !== 'ok')
        .map((r) => `${r.queryId}/${r.copilot}: ${r.errorMessage}`),
    ).toEqual([]);
    // Every query: four scoring turns and one ranking, no re-asks; the judge never sees a system name.
    expect(requests.filter((b) => schemaName(b) === 'cab_scores')).toHaveLength(Q * 4);
    expect(requests.filter((b) => schemaName(b) === 'cab_ranking')).toHaveLength(Q);
    const everything = JSON.stringify(requests);
    for (const s of SYSTEMS) expect(everything).not.toContain(s);
    // Default evaluation date: the day the run started.
    expect(requests[0].messages[0].content).toContain(`Evaluation date: ${run.startedAt.slice(0, 10)}`);
    expect(requests.every((b) => b.temperature === 0.1)).toBe(true);

    // Map labels back to systems with the stored presentation order, then recompute from the judge's answers.
    const idOf = new Map((await store.snapshotQueries(run.snapshotId)).map((q) => [q.text, q.id]));
    const orderOf = new Map((await store.judgeUnits(runId)).map((u) => [u.queryId, u.copilots]));
    const systemOf = (body: any, label: string) =>
      orderOf.get(idOf.get(queryTextOf(body))!)![Number(label.slice('Response #'.length)) - 1];
    const dims: Record<string, Record<string, number[]>> = Object.fromEntries(
      SYSTEMS.map((s) => [s, Object.fromEntries(DIMS.map((d) => [d, []]))]),
    );
    const totals: Record<string, number[]> = Object.fromEntries(SYSTEMS.map((s) => [s, []]));
    const ranks: Record<string, number[]> = Object.fromEntries(SYSTEMS.map((s) => [s, []]));
    const totalsByPosition: number[][] = [[], [], [], []];
    const totalRows: Array<{ block: string; nuisance: string[]; factor: string; y: number }> = [];
    const rank1ByPosition = [0, 0, 0, 0];
    for (const body of requests) {
      if (schemaName(body) === 'cab_scores') {
        const prompts = scoringPrompts(body);
        const label = labelOf(prompts[prompts.length - 1]);
        expect(label).toBe(`Response #${prompts.length}`);
        const answer = biasedScoring(body, BONUS);
        const system = systemOf(body, label);
        DIMS.forEach((d) => dims[system][d].push(answer[d].score));
        // A response's score: the mean of its four (what the position effects are measured on).
        const total = DIMS.reduce((s, d) => s + answer[d].score, 0) / 4;
        totals[system].push(total);
        // Each scoring turn repeats the criteria, in the reference's order, once; no time of writing by default.
        const turn = prompts[prompts.length - 1];
        const at = REFERENCE_ORDER.map((name) => turn.indexOf(name));
        expect(at.every((i) => i > 0)).toBe(true);
        expect([...at].sort((x, y) => x - y)).toEqual(at);
        for (const name of REFERENCE_ORDER) expect(turn.split(name).length - 1).toBe(1);
        expect(turn).not.toMatch(/written at/i);
        totalsByPosition[prompts.length - 1].push(total);
        totalRows.push({
          block: idOf.get(queryTextOf(body))!,
          nuisance: [system],
          factor: String(prompts.length),
          y: total,
        });
      } else {
        const { ranking } = rankingByTotals(body);
        ranking.forEach((label, k) => ranks[systemOf(body, label)].push(k + 1));
        rank1ByPosition[Number(ranking[0].slice('Response #'.length)) - 1]++;
      }
    }

    const presentation = report.presentation as Record<string, number[]>;
    // The key's name before the rename stays in report.json for one release.
    expect(report.schedule).toEqual(presentation);
    for (const s of SYSTEMS) {
      const got = report.systems[s];
      expect(got.n).toBe(Q);
      expect(got.failed).toBe(0);
      for (const d of DIMS) expect(got.dimensions[d]).toBeCloseTo(avg(dims[s][d]), 9);
      // The headline is the reference's "Avg Total": the mean of the four dimension means (1–10); a sum only under its name.
      expect(got.score).toBeCloseTo(DIMS.reduce((sum, d) => sum + avg(dims[s][d]), 0) / 4, 9);
      expect(got.sumOfDimensionMeans).toBeCloseTo(
        DIMS.reduce((sum, d) => sum + avg(dims[s][d]), 0),
        9,
      );
      expect(got.total).toBeUndefined();
      expect(got.meanRank).toBeCloseTo(avg(ranks[s]), 9);
      expect(got.rankCounts).toEqual([1, 2, 3, 4].map((k) => ranks[s].filter((r) => r === k).length));
      // Positions balanced within one, and the presentation order shown is what the judge saw.
      expect(Math.max(...presentation[s]) - Math.min(...presentation[s])).toBeLessThanOrEqual(1);
      expect(presentation[s].reduce((a, b) => a + b, 0)).toBe(Q);
    }
    // Identical answers: the only difference between two systems is how often each was first, so
    // score(A) − score(B) = BONUS·(first(A) − first(B))/Q exactly, at most one count's worth.
    for (const a of SYSTEMS) {
      for (const b of SYSTEMS) {
        const diff = report.systems[a].score - report.systems[b].score;
        expect(diff).toBeCloseTo((BONUS * (presentation[a][0] - presentation[b][0])) / Q, 9);
        expect(Math.abs(diff)).toBeLessThanOrEqual(BONUS / Q + 1e-9);
      }
    }

    // The position-bias block sees the bonus and calls it larger than chance.
    const pb = report.positionBias;
    expect(pb.meanTotalByPosition).toEqual(totalsByPosition.map((t) => expect.closeTo(avg(t), 9)));
    expect(pb.rank1RateByPosition).toEqual(rank1ByPosition.map((c) => expect.closeTo(c / Q, 9)));
    expect(rank1ByPosition[0]).toBe(Q);
    // Every query shows all 4 systems, so the statistic is the plain χ² of the counts (its p is by simulation).
    expect(pb.rank1Test.statistic).toBeCloseTo(chiSquareUniform(rank1ByPosition).statistic, 9);
    // Totals by position after query and system blocks, recomputed from what the judge answered.
    const blocked = blockedAnova(totalRows);
    expect(pb.totalsTest.dfBetween).toBe(blocked.dfFactor);
    expect(pb.totalsTest.dfWithin).toBe(blocked.dfResidual);
    expect(pb.totalsTest.pValue).toBe(blocked.pValue);
    expect(pb.rank1Test.pValue).toBeLessThan(0.001);
    expect(pb.totalsTest.pValue).toBeLessThan(0.001);
    expect(pb.significant).toBe(true);
    expect(report.protocol).toBe('cab');
    expect(report.rankingFailures).toBe(0);
    expect(report.tags['Comparative & Performance Analysis'][SYSTEMS[0]].n).toBe(14);

    // The other files: one CSV row per query × system, markdown with the bias verdict, the workbook's sheets.
    const out = path.dirname(result.reportPath);
    expect(parseCsv(fs.readFileSync(path.join(out, 'results.csv'), 'utf8'), 'results.csv')).toHaveLength(1 + Q * 4);
    const md = fs.readFileSync(path.join(out, 'report.md'), 'utf8');
    expect(md).toContain('more than chance would explain');
    for (const s of SYSTEMS) expect(md).toContain(`| ${s} | ${presentation[s].join(' | ')} |`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, 'report.xlsx'));
    expect(wb.worksheets.map((w) => w.name)).toEqual(
      expect.arrayContaining([
        'Evaluation Results',
        'Per-Model Statistics',
        'Tag-wise Rankings',
        'Position Bias',
        'Presentation Order',
        'Error Clustering',
        'Reference Rules',
      ]),
    );
    // Nothing failed: the reference's rules for failures change nothing.
    expect(report.referenceRules.differ).toEqual({ scores: 0, ranks: 0, flags: 0 });
    for (const s of SYSTEMS) expect(report.referenceRules.systems[s].score).toBeCloseTo(report.systems[s].score, 9);
    // The clustering sheet: per system and dimension, the responses scoring ≤ 8 (this judge gives 3..9), no flags judged.
    for (const s of SYSTEMS) {
      const low = report.errorClusters.filter((c: any) => c.copilot === s && c.dimension === 'depth');
      expect(low).toHaveLength(1);
      expect(low[0].flag).toBeNull();
      expect(low[0].occurrences).toBe(dims[s].depth.filter((x) => x <= 8).length);
    }
    expect(wb.getWorksheet('Evaluation Results')!.rowCount).toBe(1 + Q * 4);
  });
});
