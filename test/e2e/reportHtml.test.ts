import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { compareStoredRuns, writeComparison } from '../../client/compareRuns';
import type { SimServer } from '../../sim/server';
import {
  latticeGrid,
  runConfig,
  simCopilots,
  tempDir,
  withWorker,
  writeQueries,
  type TestWorld,
} from '../support/harness';
import { simServersForFile } from '../support/sims';
import { rejudgeRun } from '../support/rejudge';
import { copyRubric, D2_NEW, D2_OLD, editOnce } from '../support/rubricCopy';
import { launchChromium, watchedPage } from '../support/browserPage';
import { evilCopilot, expectInert } from '../support/evilCopilot';

jest.setTimeout(120_000);

const sim = simServersForFile({ judge: {}, copilots: { handler: evilCopilot } });
const CAST = { Sorin: 'sim-thorough', Terse: 'sim-terse', Evil: 'sim-evil' };
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

type Marks = Array<{
  label: string | null;
  value: string | null;
  low: string | null;
  high: string | null;
  part: string | null;
  text: string;
  row: string | null;
  col: string | null;
  series: string | null;
  group: string | null;
}>;
const marks = (page: Page, selector: string): Promise<Marks> =>
  page.$$eval(selector, (nodes) =>
    nodes.map((n) => ({
      label: n.getAttribute('data-label'),
      value: n.getAttribute('data-value'),
      low: n.getAttribute('data-low'),
      high: n.getAttribute('data-high'),
      part: n.getAttribute('data-part'),
      row: n.getAttribute('data-row'),
      col: n.getAttribute('data-col'),
      series: n.getAttribute('data-series'),
      group: n.getAttribute('data-group'),
      text: n.textContent ?? '',
    })),
  );
/** The chart's exact figure equals report.json's, and the printed one is it rounded. */
function expectFigure(
  mark: { value: string | null; text: string } | undefined,
  expected: number | null,
  digits: number,
): void {
  expect(mark).toBeDefined();
  if (expected === null) return expect(mark!.value).toBe('');
  expect(Number(mark!.value)).toBeCloseTo(expected, 9);
  expect(mark!.text).toContain(expected.toFixed(digits));
}

/** Open a report from disk with every request routed: only the file itself may load. */
async function openOffline(file: string, viewport?: { width: number; height: number }) {
  const url = pathToFileURL(file).href;
  const { page, seen } = await watchedPage(browser, (u) => u === url, viewport);
  await page.goto(url);
  await page.waitForLoadState('load');
  return { page, seen, url };
}

/** Sum of the usage the sim returned, per model, over requests [from, to). */
function usageByModel(
  server: SimServer,
  from: number,
): Record<string, { prompt: number; completion: number; calls: number }> {
  const out: Record<string, { prompt: number; completion: number; calls: number }> = {};
  for (const r of server.requests.slice(from)) {
    const u = (out[r.model] ??= { prompt: 0, completion: 0, calls: 0 });
    u.calls++;
    u.prompt += r.usage?.prompt_tokens ?? 0;
    u.completion += r.usage?.completion_tokens ?? 0;
  }
  return out;
}

async function run(world: TestWorld, cfg: ReturnType<typeof runConfig>, runId: string) {
  const result = await world.client.workflow.execute(benchmarkRun, {
    taskQueue: world.taskQueue,
    workflowId: runId,
    args: [runInput(cfg, runId)],
  });
  return {
    result,
    report: JSON.parse(fs.readFileSync(result.reportPath, 'utf8')),
    html: path.join(path.dirname(result.reportPath), 'report.html'),
  };
}

test('LATTICE, CryptoAnalystBench and compare reports: offline, charts equal report.json, drill-down, inert answers, tokens equal the sim usage', async () => {
  await withWorker('html-report', async (world) => {
    const dir = tempDir('jf-html-');
    const stamp = Date.now();

    // ---- LATTICE ---------------------------------------------------------------------------
    const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T9', 'T16'].includes(q.task as string));
    const latticeCfg = runConfig(dir, {
      protocol: 'lattice',
      queries,
      judge: { baseURL: sim.judge.url, model: 'sim-judge' },
      copilots: simCopilots(sim.copilots.url, CAST),
      pricing: {
        'sim-thorough': { inputPerMTok: 2, outputPerMTok: 8 },
        'sim-judge': { inputPerMTok: 1, outputPerMTok: 4 },
      },
    });
    const judgeFrom = sim.judge.requests.length;
    const copilotFrom = sim.copilots.requests.length;
    const lattice = await run(world, latticeCfg, `html-lattice-${stamp}`);

    // Token counts in report.json (and the page) are exactly the usage the servers returned.
    const copilotUsage = usageByModel(sim.copilots, copilotFrom);
    const judgeUsage = usageByModel(sim.judge, judgeFrom);
    for (const [name, model] of Object.entries(CAST)) {
      expect(lattice.report.cost.copilots[name]).toMatchObject({
        calls: copilotUsage[model].calls,
        promptTokens: copilotUsage[model].prompt,
        completionTokens: copilotUsage[model].completion,
        failed: 0,
      });
    }
    expect(lattice.report.cost.judge['sim-judge']).toMatchObject({
      calls: judgeUsage['sim-judge'].calls,
      promptTokens: judgeUsage['sim-judge'].prompt,
      completionTokens: judgeUsage['sim-judge'].completion,
    });
    const sorin = lattice.report.cost.copilots.Sorin;
    expect(sorin.estimatedCostUsd).toBeCloseTo((sorin.promptTokens * 2 + sorin.completionTokens * 8) / 1e6, 12);
    expect(lattice.report.cost.copilots.Terse.estimatedCostUsd).toBeNull(); // no price for sim-terse

    {
      const { page, seen, url } = await openOffline(lattice.html);
      const copilots = lattice.report.copilots;
      const board = await marks(page, '#chart-leaderboard .mark');
      expect(board.map((m) => m.label).sort()).toEqual(Object.keys(CAST).sort());
      for (const m of board) {
        expectFigure(m, copilots[m.label!].score, 1);
        expect(Number(m.low)).toBeCloseTo(copilots[m.label!].ci95.low, 9);
        expect(Number(m.high)).toBeCloseTo(copilots[m.label!].ci95.high, 9);
      }
      const dims = await marks(page, '#chart-dimensions .mark');
      expect(dims).toHaveLength(3 * 7);
      for (const m of dims) expectFigure(m, copilots[m.series!].dimensions[m.group!], 1);
      const tasks = await marks(page, '#chart-tasks td.mark');
      expect(tasks).toHaveLength(16 * 3);
      for (const m of tasks) expectFigure(m, copilots[m.col!].tasks[m.row!], 1);
      const categories = await marks(page, '#chart-categories td.mark');
      for (const m of categories) expectFigure(m, copilots[m.col!].categories[m.row!], 1);
      // The header says what was run.
      const header = await page.textContent('header');
      for (const s of [
        lattice.result.runId,
        lattice.report.snapshotId,
        lattice.report.rubricVersion,
        'sim-judge',
        'temperature',
        'seed',
        'judgeflow',
      ])
        expect(header).toContain(s);
      // Cost table shows the same token counts.
      const costRow = await page.$eval('#cost-table', (t) =>
        Array.from(t.querySelectorAll('tbody tr')).map((r) => r.textContent ?? ''),
      );
      expect(costRow.find((r) => r.startsWith('copilot Sorin'))).toContain(String(sorin.promptTokens));

      // Drill-down: find one query by its text, open it with the keyboard, read the judge's rationales.
      const target = queries.find((q) => q.task === 'T9' && q.category === 'C3')!;
      await page.fill('#drill-search', String(target.text));
      await page.selectOption('#drill-copilot', 'Sorin');
      const rows = page.locator('#drill-table tbody tr');
      await expect(rows.count()).resolves.toBe(1);
      await rows.first().focus();
      await page.keyboard.press('Enter');
      const detail = await page.textContent('#drill-detail');
      expect(detail).toContain(String(target.text));
      const judgment = (await world.store.getJudgment(
        lattice.result.runId,
        String(target.id),
        'Sorin',
        lattice.report.rubricVersion,
      ))!;
      for (const rationale of Object.values(judgment.rationales!)) expect(detail).toContain(rationale);

      // The hostile answer is shown as text: no script ran, nothing loaded, no javascript: link.
      await page.fill('#drill-search', '');
      await page.selectOption('#drill-copilot', 'Evil');
      await rows.first().click();
      await expectInert(page, '#drill-detail .answer');
      await page.waitForTimeout(200);
      expect(seen).toEqual({ consoleErrors: [], dialogs: [], requests: [url] });
      await page.close();
    }
    {
      // Phone width: the page itself never scrolls sideways (wide tables scroll inside their box).
      const { page, seen } = await openOffline(lattice.html, { width: 390, height: 800 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(seen.consoleErrors).toEqual([]);
      await page.close();
    }

    // ---- CryptoAnalystBench --------------------------------------------------------------------
    const cabQueries = writeQueries(
      dir,
      Array.from({ length: 6 }, (_, i) => ({
        id: `c${i + 1}`,
        text: `Is ${['SOL', 'ETH', 'HYPE', 'PEPE', 'AAVE', 'TAO'][i]} a buy this week given the unlock schedule?`,
        tags: i % 2 ? 'DeFi' : 'Meme Coins',
      })),
      'cab.jsonl',
    );
    const cabCfg = runConfig(dir, {
      protocol: 'cab',
      queries: cabQueries,
      judge: { baseURL: sim.judge.url, model: 'sim-judge' },
      copilots: simCopilots(sim.copilots.url, CAST),
      evaluationDate: '2026-03-05',
      errorTaxonomy: true,
    });
    const cab = await run(world, cabCfg, `html-cab-${stamp}`);
    {
      const { page, seen, url } = await openOffline(cab.html);
      const systems = cab.report.systems;
      const totals = await marks(page, '#chart-totals .mark');
      expect(totals).toHaveLength(3);
      for (const m of totals) {
        expectFigure(m, systems[m.label!].score, 2);
        expect(Number(m.low)).toBeCloseTo(systems[m.label!].ci95.low, 9);
      }
      const ranks = await marks(page, '#chart-ranks .mark');
      for (const m of ranks) expect(Number(m.value)).toBe(systems[m.label!].rankCounts[Number(m.part)]);
      expect(ranks.reduce((n, m) => n + Number(m.value), 0)).toBe(
        Object.values(systems).reduce(
          (n: number, s: any) => n + s.rankCounts.reduce((a: number, b: number) => a + b, 0),
          0,
        ),
      );
      const byPosition = await marks(page, '#chart-position-total .mark');
      byPosition.forEach((m, p) => expectFigure(m, cab.report.positionBias.meanTotalByPosition[p], 2));
      const rank1 = await marks(page, '#chart-position-rank1 .mark');
      rank1.forEach((m, p) => expect(Number(m.value)).toBeCloseTo(cab.report.positionBias.rank1RateByPosition[p], 9));
      expect(await page.textContent('#position-verdict')).toMatch(
        cab.report.positionBias.significant ? /Order matters/ : /No order effect/,
      );
      const tags = await marks(page, '#chart-tags td.mark');
      for (const m of tags) expectFigure(m, cab.report.tags[m.row!][m.col!]?.score ?? null, 2);
      const schedule = await marks(page, '#chart-presentation td.mark');
      for (const m of schedule)
        expect(Number(m.value)).toBe(cab.report.presentation[m.row!][Number(m.col!.slice(1)) - 1]);
      expect(await page.$$('#chart-taxonomy td.mark')).toHaveLength(3 * 7);
      // The error-clustering section: one row per cluster in report.json.
      expect(await page.$$('#error-clustering tbody tr')).toHaveLength(cab.report.errorClusters.length);

      await page.fill('#drill-search', 'HYPE');
      await page.selectOption('#drill-copilot', 'Evil');
      await page.locator('#drill-table tbody tr').first().press('Enter');
      await expectInert(page, '#drill-detail .answer');
      expect(await page.textContent('#drill-detail')).toContain('ranking');
      await page.waitForTimeout(200);
      expect(seen).toEqual({ consoleErrors: [], dialogs: [], requests: [url] });
      await page.close();
    }

    // ---- compare: the LATTICE run re-judged under an edited rubric ------------------------------------
    const rubricDir = copyRubric('lattice');
    editOnce(path.join(rubricDir, 'rubric.yaml'), D2_OLD, D2_NEW);
    const rejudged = await rejudgeRun(world, lattice.result.runId, { rubricDir }, `html-rejudge-${stamp}`);
    expect(fs.existsSync(path.join(path.dirname(rejudged.reportPath), 'report.html'))).toBe(true);
    const { comparison } = await compareStoredRuns(world.store, lattice.result.runId, rejudged.runId, { top: 4 });
    const files = writeComparison(path.join(dir, 'compare'), comparison);
    {
      const { page, seen, url } = await openOffline(files.html);
      const forest = await marks(page, '#chart-forest .mark');
      expect(forest.map((m) => m.label).sort()).toEqual(Object.keys(comparison.copilots).sort());
      for (const m of forest) {
        const d = comparison.copilots[m.label!].overall;
        expectFigure(m, d.delta, 2);
        expect(Number(m.low)).toBeCloseTo(d.ci95!.low, 9);
        expect(m.text).toContain(d.significant ? 'significant' : `p ${d.pValue!.toFixed(3)}`);
      }
      const movers = await page.$$eval('.mover', (ns) =>
        ns.map((n) => ({
          q: n.getAttribute('data-query'),
          c: n.getAttribute('data-copilot'),
          text: n.textContent ?? '',
        })),
      );
      expect(movers).toHaveLength(comparison.movers.length);
      comparison.movers.forEach((m, i) => {
        expect(movers[i]).toMatchObject({ q: m.queryId, c: m.copilot });
        expect(movers[i].text).toContain(Object.values(m.a.rationales!)[0]);
        expect(movers[i].text).toContain(Object.values(m.b.rationales!)[0]);
      });
      expect(seen).toEqual({ consoleErrors: [], dialogs: [], requests: [url] });
      await page.close();
    }
  });
});
