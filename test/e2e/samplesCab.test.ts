import fs from 'node:fs';
import ExcelJS from 'exceljs';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import { runConfig, simCopilots, tempDir, withWorker, writeQueries } from '../support/harness';
import { biasedScoring, firstFavouringJudge, responseTextOf, schemaName, scoringPrompts } from '../support/cabJudge';
import { simServersForFile } from '../support/sims';

jest.setTimeout(180_000);

const BONUS = 2; // per dimension for whatever the judge sees first
const DIMS = ['relevance', 'temporal_relevance', 'depth', 'data_consistency'];
const SYSTEMS = { Nimbus: 'sim-thorough', Quasar: 'sim-copilot', Zephyr: 'sim-terse' };
const QUERIES = [
  'ETH staking yields',
  'SOL outage risk',
  'BTC ETF flows',
  'ARB unlock schedule',
  'LINK oracle fees',
  'AAVE borrowing rates',
].map((t, i) => ({
  id: `q${i + 1}`,
  text: `What should I know about ${t} this month?`,
  tags: ['DeFi'],
}));
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const sim = simServersForFile({
  judge: { handler: firstFavouringJudge(BONUS) },
  copilots: {},
});

test('CryptoAnalystBench with judge.samples: 3: three conversations per query, each system shown first once, means over samples, rank-1 changes counted', async () => {
  const dir = tempDir();
  const cfg = runConfig(dir, {
    protocol: 'cab',
    queries: writeQueries(dir, QUERIES),
    judge: { baseURL: sim.judge.url, model: 'first-favouring-judge', concurrency: 6, samples: 3 },
    copilots: simCopilots(sim.copilots.url, SYSTEMS),
    seed: 'cab-samples',
  });
  await withWorker('cab-samples', async ({ client, taskQueue, store }) => {
    const before = sim.judge.requests.length;
    const runId = 'run-cab-samples-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    const requests = sim.judge.requests.slice(before).map((r) => r.body);
    const systemOfText = new Map((await store.responses(runId)).map((r) => [r.text!, r.copilot]));
    expect(systemOfText.size).toBe(QUERIES.length * 3);

    // Per query: 3 conversations of 3 scoring turns and a ranking; across them every system was shown first exactly once.
    const scoring = requests.filter((b) => schemaName(b) === 'cab_scores');
    expect(scoring).toHaveLength(QUERIES.length * 3 * 3);
    expect(requests.filter((b) => schemaName(b) === 'cab_ranking')).toHaveLength(QUERIES.length * 3);
    const firsts = scoring
      .filter((b) => scoringPrompts(b).length === 1)
      .map((b) => systemOfText.get(responseTextOf(scoringPrompts(b)[0]))!);
    for (const s of Object.keys(SYSTEMS)) expect(firsts.filter((f) => f === s)).toHaveLength(QUERIES.length);

    // Each sample stored as its own row; reported dimension means are the means of every answer the judge gave.
    expect(await store.judgments(runId)).toHaveLength(QUERIES.length * 3 * 3);
    const dims: Record<string, Record<string, number[]>> = {};
    for (const body of scoring) {
      const prompts = scoringPrompts(body);
      const system = systemOfText.get(responseTextOf(prompts[prompts.length - 1]))!;
      const answer = biasedScoring(body, BONUS);
      for (const d of DIMS) ((dims[system] ??= {})[d] ??= []).push(answer[d].score);
    }
    for (const s of Object.keys(SYSTEMS)) {
      expect(report.systems[s]).toMatchObject({ n: QUERIES.length, failed: 0 });
      for (const d of DIMS) expect(report.systems[s].dimensions[d]).toBeCloseTo(avg(dims[s][d]), 9);
    }

    // Reliability: three samples per response; the first-favouring judge's winner moves with the presentation order.
    const rel = report.reliability;
    expect(rel).toMatchObject({
      samples: 3,
      units: QUERIES.length * 3,
      samplesOk: QUERIES.length * 9,
      samplesFailed: 0,
    });
    expect(Object.keys(rel.dimensions).sort()).toEqual([...DIMS].sort());
    expect(rel.rank1Changes.queries).toBe(QUERIES.length);
    expect(rel.rank1Changes.rate).toBeGreaterThan(0.5);
    expect(rel.total.withinUnitSd).toBeGreaterThan(0);

    // Position effects are measured per conversation: 3 per query, every system in every position once per query.
    expect(report.positionBias.nByPosition).toEqual([1, 2, 3].map(() => QUERIES.length * 3));
    for (const s of Object.keys(SYSTEMS)) expect(report.presentation[s]).toEqual([1, 2, 3].map(() => QUERIES.length));
    // On the 1–10 score (the mean of the four): the first-shown bonus is BONUS there, well above half of it.
    expect(report.positionBias.meanTotalByPosition[0]).toBeGreaterThan(
      report.positionBias.meanTotalByPosition[1] + BONUS / 2,
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(result.reportPath.replace('report.json', 'report.xlsx'));
    expect(wb.getWorksheet('Reliability')!.rowCount).toBe(1 + DIMS.length + 1);
  });
});
