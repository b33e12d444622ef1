import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { SimHandler } from '../../sim/types';
import { renderReport } from '../../services/runReport';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { startViewServer } from '../../client/view/server';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { launchChromium, watchedPage } from '../support/browserPage';
import { evilCopilot, expectInert } from '../support/evilCopilot';

jest.setTimeout(120_000);

// The run's progress must be seen moving, however fast the run and however slow the view's queries on a loaded machine:
// Sorin's answers hold at its 4th and 8th question (of its 10) until the page has shown one, then two, progress texts.
// Sorin asks its first question alone, then 2–7 in one activity and 8–10 in another (workflows/limits/itemGroupSize.ts),
// so the 8th is held in a later activity than the one whose end moves the progress: the hold cannot deadlock the run.
let progressShown = 0;
const shown = (n: number) =>
  new Promise<void>((resolve) => {
    const look = () => (progressShown >= n ? resolve() : void setTimeout(look, 50).unref());
    look();
  });
let sorinAsked = 0;
const heldCopilot: SimHandler = async (body, ...rest) => {
  if (body.model === 'sim-thorough') {
    sorinAsked++;
    if (sorinAsked === 4) await shown(1);
    if (sorinAsked === 8) await shown(2);
  }
  return evilCopilot(body, ...rest);
};
const sim = simServersForFile({ judge: { latencyMs: 20 }, copilots: { handler: heldCopilot, latencyMs: 120 } });
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

test('judgeflow view lists a run started while it is open, shows its progress changing, then its report; answers stay inert; read-only', async () => {
  await withWorker('view', async (world) => {
    const view = await startViewServer({
      store: world.store,
      port: 0,
      temporal: async () => world.client,
      pollMs: 250,
      webUi: 'http://127.0.0.1:8233',
    });
    try {
      expect(view.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/); // bound to this machine unless told otherwise
      expect((await fetch(`${view.url}api/runs`, { method: 'POST' })).status).toBe(405);
      expect((await fetch(`${view.url}api/runs`, { method: 'DELETE' })).status).toBe(405);

      const { page, seen } = await watchedPage(browser, (u) => u.startsWith(view.url));
      await page.goto(view.url);
      await page.waitForSelector('#runs-live tbody', { state: 'attached' });

      const runId = `view-run-${Date.now()}`;
      const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T16'].includes(q.task as string));
      const cfg = runConfig(tempDir('jf-view-'), {
        protocol: 'lattice',
        queries,
        judge: { baseURL: sim.judge.url, model: 'sim-judge' },
        copilots: simCopilots(sim.copilots.url, { Sorin: 'sim-thorough', Evil: 'sim-evil' }).map((c) => ({
          ...c,
          concurrency: 1,
        })),
      });
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });

      // The run appears without a reload, and its progress (from the workflow's progress query) moves.
      await page.waitForSelector(`tr[data-run="${runId}"]`, { timeout: 20_000 });
      const seenProgress = new Set<string>();
      let finished = false;
      void handle.result().finally(() => (finished = true));
      while (!finished) {
        const text = await page
          .locator(`[data-progress="${runId}"]`)
          .textContent({ timeout: 500 })
          .catch(() => null);
        if (text) seenProgress.add(text);
        progressShown = seenProgress.size;
        await page.waitForTimeout(100);
      }
      expect(seenProgress.size).toBeGreaterThanOrEqual(2);
      expect([...seenProgress].some((t) => /^collect \d+\/20/.test(t))).toBe(true);
      await page.waitForFunction(
        (id) => document.querySelector(`[data-run-status="${id}"]`)?.textContent === 'completed',
        runId,
        { timeout: 10_000 },
      );
      expect(await page.getAttribute(`tr[data-run="${runId}"] a[target=_blank]`, 'href')).toBe(
        `http://127.0.0.1:8233/namespaces/default/workflows/${runId}`,
      );

      // A failure screenshot in the store (as a browser copilot's collect activity keeps one), with a name to be made safe.
      const shot = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('not really a picture')]);
      const shotId = await world.store.putArtefact({
        runId,
        name: 'Evil q1/../x.png',
        contentType: 'image/png',
        bytes: shot,
      });

      // Its report, from the same renderer as report.html; the hostile answer executes nothing here either.
      await page.click(`tr[data-run="${runId}"] a[href="/runs/${runId}"]`);
      await page.waitForSelector('#drill-table');
      expect(await page.textContent('h1')).toContain(`LATTICE report — run ${runId}`);
      // The report links the artefact relatively; the view serves that link from the store.
      const href = (await page.getAttribute('#artefacts a', 'href'))!;
      expect(href).toBe(`artefacts/${shotId}-x.png`);
      const served = await fetch(new URL(href, page.url()));
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await served.arrayBuffer()).equals(shot)).toBe(true);
      // The same link works next to a report rendered anywhere from the store.
      const out = path.join(tempDir('jf-view-report-'), 'report');
      await renderReport({ store: world.store, env: process.env }, runId, out);
      expect(JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')).artefacts).toEqual([
        {
          ref: `artefact:${shotId}`,
          name: 'Evil q1/../x.png',
          contentType: 'image/png',
          size: shot.length,
          file: href,
        },
      ]);
      expect(fs.readFileSync(path.join(out, href)).equals(shot)).toBe(true);
      await page.selectOption('#drill-copilot', 'Evil');
      await page.locator('#drill-table tbody tr').first().press('Enter');
      await expectInert(page, '#drill-detail .answer');

      // Any two runs compare (here a run with itself: every delta is zero); schedules list from Temporal.
      await page.goto(`${view.url}compare?a=${runId}&b=${runId}`);
      expect(
        await page.$$eval('#chart-forest .mark', (ms) => ms.map((m) => Number(m.getAttribute('data-value')))),
      ).toEqual([0, 0]);
      expect((await page.goto(`${view.url}schedules`))!.status()).toBe(200);
      await page.goto(`${view.url}snapshots`);
      expect(await page.textContent('main')).toContain((await world.store.getRun(runId))!.snapshotId);
      await page.waitForTimeout(200);
      expect(seen.dialogs).toEqual([]);
      expect(seen.consoleErrors).toEqual([]);
      expect(seen.requests.every((u) => u.startsWith(view.url))).toBe(true);
    } finally {
      await view.close();
    }
  });
});
