/**
 * How answers and charts look to a reader: numbered lists keep their numbers (report.html's page script and the
 * annotation app's renderer), every copilot's answer to one query can be read side by side, task and category ids come
 * with their names, and no chart label runs out of its chart, however long a copilot's or a dimension's name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { renderMarkdown } from '../../../../core/study/safeMarkdown';
import { htmlPage } from '../../../../core/report/html/page';
import { groupedBars, intervalChart, stackedBars, columnChart, wrapLabel } from '../../../../core/report/html/charts';
import type { DrillData } from '../../../../core/report/html/runReport';
import { launchChromium, watchedPage } from '../../../support/browserPage';
import { tempDir } from '../../../support/harness';

// An LLM's numbered list with a blank line between items, and one interrupted by a paragraph that resumes at 3.
const LOOSE = '1. Size the position.\n\n2. Set a stop.\n\n3. Re-check weekly.';
const INTERRUPTED = '1. First step.\n2. Second step.\n\nA note between the steps.\n\n3. Third step.\n4. Fourth step.';

test('the annotation app’s renderer keeps a numbered list’s numbers: one list across blank lines, and a resumed list starts at its own number', () => {
  expect(renderMarkdown(LOOSE)).toBe(
    '<ol><li>Size the position.</li><li>Set a stop.</li><li>Re-check weekly.</li></ol>',
  );
  expect(renderMarkdown(INTERRUPTED)).toBe(
    '<ol><li>First step.</li><li>Second step.</li></ol>\n<p>A note between the steps.</p>\n<ol start="3"><li>Third step.</li><li>Fourth step.</li></ol>',
  );
  // Bullets after a blank line still make one list; a numbered list after bullets is a list of its own.
  expect(renderMarkdown('- a\n\n- b\n\n1. c')).toBe('<ul><li>a</li><li>b</li></ul>\n<ol><li>c</li></ol>');
  // A pipe escaped inside a table cell (as report tables write them) is a pipe, not a column.
  expect(renderMarkdown('| a | b |\n|---|---|\n| x \\| y | z |')).toContain('<td>x | y</td><td>z</td>');
});

test('wrapLabel wraps long names onto two lines at word boundaries and ends a longer one in an ellipsis', () => {
  expect(wrapLabel('Short')).toEqual(['Short']);
  expect(wrapLabel('D4 Risk Awareness and Uncertainty Communication for Retail Users', 30)).toEqual([
    'D4 Risk Awareness and',
    'Uncertainty Communication for…',
  ]);
  expect(wrapLabel('x'.repeat(50), 20)).toEqual([`${'x'.repeat(19)}…`]);
});

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function open(html: string): Promise<Page> {
  const file = path.join(tempDir('jf-render-'), 'page.html');
  fs.writeFileSync(file, html);
  const url = pathToFileURL(file).href;
  const { page, seen } = await watchedPage(browser, (u) => u === url);
  await page.goto(url);
  expect(seen.consoleErrors).toEqual([]);
  return page;
}

test('report.html’s drill-down: numbered lists keep their numbers, labels carry names, and one query’s answers show side by side', async () => {
  const row = (c: string, text: string | null, total: number | null) => ({
    q: 'q7',
    c,
    rs: text === null ? 'failed' : 'ok',
    js: text === null ? 'none' : 'ok',
    total,
    rank: null,
    position: null,
    scores: total === null ? null : { D1: 7, Refusal: 5 },
    rationales: null,
    text,
    error: text === null ? 'failed: http 500' : null,
  });
  const drill: DrillData = {
    dimensions: [
      { id: 'D1', name: 'Accuracy' },
      { id: 'Refusal', name: 'Refusal' },
    ],
    copilots: ['Aurora', 'Borealis', 'Cirrus'],
    labelName: 'task / category',
    labels: ['C4 Decision', 'T7 Yield and DeFi Opportunities'],
    hasRank: false,
    queries: { q7: { text: 'Should I stake with Lido?', labels: ['T7 Yield and DeFi Opportunities', 'C4 Decision'] } },
    rows: [row('Aurora', LOOSE, 81), row('Borealis', INTERRUPTED, 64), row('Cirrus', null, null)],
  };
  const page = await open(
    htmlPage({ title: 't', header: '<h1>t</h1>', body: '<section id="drill"></section>', data: { drill } }),
  );
  await page.click('#drill-table tbody tr[data-row="0"]');
  const lists = async () =>
    page.$$eval('#drill-detail ol', (ols) =>
      ols.map((o) => ({ start: (o as HTMLOListElement).start, items: o.querySelectorAll('li').length })),
    );
  expect(await lists()).toEqual([{ start: 1, items: 3 }]);
  expect(await page.textContent('#drill-detail')).toContain('T7 Yield and DeFi Opportunities, C4 Decision');
  // A dimension whose id is its name is named once.
  expect(
    await page.$$eval('#drill-detail table.rationales th[scope=row]', (ths) => ths.map((t) => t.textContent)),
  ).toEqual(['D1 Accuracy', 'Refusal']);

  await page.click('#drill-table tbody tr[data-row="1"]');
  expect(await lists()).toEqual([
    { start: 1, items: 2 },
    { start: 3, items: 2 },
  ]);

  await page.click('#drill-detail button.every-copilot');
  const columns = await page.$$eval('#side-by-side .side', (cols) =>
    cols.map((c) => ({
      copilot: c.getAttribute('data-copilot'),
      text: c.textContent ?? '',
      ols: c.querySelectorAll('ol').length,
    })),
  );
  expect(columns.map((c) => c.copilot)).toEqual(['Aurora', 'Borealis', 'Cirrus']);
  expect(columns[0].text).toContain('total 81.0');
  expect(columns[0].ols).toBe(1);
  expect(columns[1].ols).toBe(2);
  expect(columns[2].text).toContain('No response (failed)');
  expect(await page.textContent('#drill-detail')).toContain('Should I stake with Lido?');
  // The columns sit side by side on a wide screen.
  const tops = await page.$$eval('#side-by-side .side', (cols) =>
    cols.map((c) => Math.round(c.getBoundingClientRect().top)),
  );
  expect(new Set(tops).size).toBe(1);
  // And each column leads back to that answer's scores.
  await page.click('#side-by-side .side[data-copilot="Borealis"] button');
  expect(await page.textContent('#drill-detail h3')).toBe('q7 — Borealis');
});

test('chart labels stay inside their chart, however long the copilot and dimension names', async () => {
  const long = 'Borealis Research Copilot Enterprise Edition (GPT-4.1, tools, web search)';
  const dimension = 'D4 Risk Awareness and Uncertainty Communication';
  const charts = [
    intervalChart({
      id: 'c1',
      title: 'leaderboard',
      items: [
        { label: long, value: 61, low: 55, high: 67, note: 'tier A' },
        { label: 'Terse', value: 20, low: 18, high: 22 },
      ],
      domain: [0, 100],
    }),
    intervalChart({
      id: 'c2',
      title: 'forest',
      items: [
        { label: long, value: -2.5, low: -4, high: -1, note: 'p 0.004, Holm 0.008, significant', emphasis: true },
      ],
      domain: [-5, 5],
      mark: 'point',
      digits: 2,
    }),
    groupedBars({
      id: 'c3',
      title: 'dims',
      groups: ['D4', 'D1'],
      groupNames: [dimension, 'D1 Accuracy'],
      series: [long, 'Terse'],
      values: [
        [6, 4],
        [7, 3],
      ],
      domain: [0, 10],
    }),
    stackedBars({ id: 'c4', title: 'ranks', rows: [{ label: long, parts: [3, 1] }], partNames: ['1st', '2nd'] }),
    columnChart({
      id: 'c5',
      title: 'win rates',
      labels: [long, 'Terse', 'Aurora Pro Max Ultra'],
      values: [0.6, 0.3, 0.1],
      domain: [0, 1],
      valueName: 'win rate',
    }),
  ];
  const page = await open(htmlPage({ title: 't', header: '<h1>t</h1>', body: charts.join('') }));
  const outside = await page.$$eval('svg.chart', (svgs) =>
    svgs.flatMap((svg) => {
      const box = (svg as SVGSVGElement).viewBox.baseVal;
      return Array.from(svg.querySelectorAll('text')).flatMap((t) => {
        const b = (t as SVGTextElement).getBBox();
        return b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5
          ? [
              `${svg.closest('figure')?.id}: "${t.textContent}" spans ${b.x.toFixed(0)}–${(b.x + b.width).toFixed(0)} of 0–${box.width}`,
            ]
          : [];
      });
    }),
  );
  expect(outside).toEqual([]);
  // Neighbouring column labels do not run into each other.
  const columnLabels = await page.$$eval('#c5 g.mark > text:last-child', (ts) =>
    ts.map((t) => (t as SVGTextElement).getBBox()).map((b) => [b.x, b.x + b.width]),
  );
  for (let i = 1; i < columnLabels.length; i++)
    expect(columnLabels[i][0]).toBeGreaterThanOrEqual(columnLabels[i - 1][1]);
  // The whole name is kept: in the tooltip of a cut label and in the table under the chart.
  expect(await page.$$eval('#c5 title', (ts) => ts.map((t) => t.textContent))).toContain(long);
  expect(await page.textContent('#c1 details table')).toContain(long);
});
