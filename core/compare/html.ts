/** compare's report.html: a forest plot of per-copilot deltas, per-dimension deltas, rank changes and the most-moved queries with both rationales. */
import type { Comparison, Mover } from './compare';
import { heatmap, intervalChart, niceCeil } from '../report/html/charts';
import { dataTable, esc, factList, htmlPage, num, section, toc } from '../report/html/page';

const signed = (x: number | null | undefined, d = 2) =>
  x === null || x === undefined ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;
const pText = (p: number | null) => (p === null ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3));

function moverBlock(m: Mover, i: number): string {
  const dims = [
    ...new Set([
      ...Object.keys(m.a.scores),
      ...Object.keys(m.b.scores),
      ...Object.keys(m.a.rationales ?? {}),
      ...Object.keys(m.b.rationales ?? {}),
    ]),
  ];
  const rows = dims
    .map(
      (d) =>
        `<tr><th scope="row">${esc(d)}</th><td class="num">${esc(m.a.scores[d] ?? '–')}</td><td class="rationale">${esc(m.a.rationales?.[d] ?? '')}</td><td class="num">${esc(m.b.scores[d] ?? '–')}</td><td class="rationale">${esc(m.b.rationales?.[d] ?? '')}</td></tr>`,
    )
    .join('');
  const labels = Object.entries(m.labels)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `<article class="detail mover" id="mover-${i}" data-query="${esc(m.queryId)}" data-copilot="${esc(m.copilot)}" data-delta="${m.delta}"><h3>${esc(m.queryId)} — ${esc(m.copilot)}: ${esc(signed(m.delta))}</h3><p class="muted">${esc(labels)} · total ${num(m.a.total)} → ${num(m.b.total)}${
    m.a.rank !== null || m.b.rank !== null ? ` · rank ${esc(m.a.rank ?? '–')} → ${esc(m.b.rank ?? '–')}` : ''
  }</p><p class="query-text">${esc(m.query)}</p><div class="table-wrap"><table class="rationales"><caption>Scores and rationales in run A and run B</caption><thead><tr><th scope="col">dimension</th><th scope="col">A</th><th scope="col">A rationale</th><th scope="col">B</th><th scope="col">B rationale</th></tr></thead><tbody>${rows}</tbody></table></div></article>`;
}

export function buildCompareHtml(c: Comparison): string {
  const names = Object.keys(c.copilots);
  const deltas = names.map((n) => c.copilots[n].overall);
  const spread = Math.max(
    1,
    ...deltas.flatMap((d) => [Math.abs(d.ci95?.low ?? 0), Math.abs(d.ci95?.high ?? 0), Math.abs(d.delta ?? 0)]),
  );
  const forest = intervalChart({
    id: 'chart-forest',
    title:
      'Score change per copilot (B − A) over paired queries, with 95% intervals (Student t below 100 queries, BCa bootstrap from 100); filled = significant',
    items: names.map((n) => {
      const d = c.copilots[n].overall;
      return {
        label: n,
        value: d.delta,
        low: d.ci95?.low ?? null,
        high: d.ci95?.high ?? null,
        note: `p ${pText(d.pValue)}, Holm ${pText(d.pAdjusted)}${d.significant ? ', significant' : ''}`,
        emphasis: d.significant,
      };
    }),
    domain: [-niceCeil(spread), niceCeil(spread)],
    mark: 'point',
    digits: 2,
    valueName: 'Δ',
  });
  const dims = [...new Set(names.flatMap((n) => Object.keys(c.copilots[n].dimensions)))];
  const dimSpread = Math.max(
    0.5,
    ...names.flatMap((n) => dims.map((d) => Math.abs(c.copilots[n].dimensions[d]?.delta ?? 0))),
  );
  const dimensionDeltas = dims.length
    ? heatmap({
        id: 'chart-dimension-deltas',
        title: 'Change per dimension (B − A); * = significant',
        rowHeader: 'copilot',
        rows: names,
        cols: dims,
        values: names.map((n) => dims.map((d) => c.copilots[n].dimensions[d]?.delta ?? null)),
        domain: [-dimSpread, dimSpread],
        digits: 2,
        diverging: true,
        cellNote: (r, col) => (c.copilots[names[r]].dimensions[dims[col]]?.significant ? ' *' : ''),
      })
    : '';
  const rankTable = dataTable(
    'Scores and ranks',
    ['copilot', 'score A', 'score B', 'Δ paired', 'n paired', 'p', 'p (Holm)', 'significant', 'rank A', 'rank B'],
    names.map((n) => {
      const x = c.copilots[n];
      return [
        n,
        num(x.scoreA, 2),
        num(x.scoreB, 2),
        signed(x.overall.delta),
        x.overall.n,
        pText(x.overall.pValue),
        pText(x.overall.pAdjusted),
        x.overall.significant ? 'yes' : 'no',
        x.rankA,
        x.rankB,
      ];
    }),
  );
  const header = `<h1>Compare — ${esc(c.runB.runId)} against ${esc(c.runA.runId)}</h1>${factList([
    ['run A', c.runA.runId],
    ['run B', c.runB.runId],
    ['protocol', c.runA.protocol],
    ['snapshot A', c.runA.snapshotId],
    ['snapshot B', c.runB.snapshotId],
    ['rubric A → B', `${c.runA.rubricVersion} → ${c.runB.rubricVersion}${c.rubricChanged ? '' : ' (unchanged)'}`],
    ['judge A → B', `${c.runA.judge.model} → ${c.runB.judge.model}${c.judgeChanged ? '' : ' (unchanged)'}`],
    ['judge temperature A → B', `${c.runA.judge.temperature} → ${c.runB.judge.temperature}`],
    ['paired queries', `${c.pairing.paired} (by ${c.pairing.by})`],
    ['test', c.test],
    ['significance level (alpha)', c.alpha],
  ])}`;
  const sections: Array<[string, string, string]> = [
    [
      'forest',
      'Score changes',
      forest +
        `<p class="note">Positive means run B scored higher. Differences are paired by query. A change is significant when its Holm-adjusted p (across the copilots compared) is below alpha; the table gives both the unadjusted and the Holm p.</p>` +
        rankTable,
    ],
    ['dimension-deltas', 'Per dimension', dimensionDeltas],
    ['grounding-deltas', 'Grounding', groundingDeltaTable(c)],
    [
      'movers',
      'Most-moved queries',
      c.movers.length ? c.movers.map(moverBlock).join('') : '<p>No paired query moved.</p>',
    ],
  ];
  return htmlPage({
    title: `Compare ${c.runB.runId} vs ${c.runA.runId}`,
    header: header + toc(sections.map(([id, title]) => [id, title])),
    body: sections
      .filter(([, , html]) => html)
      .map(([id, title, html]) => section(id, title, html))
      .join('\n'),
    data: { comparison: { runA: c.runA.runId, runB: c.runB.runId } },
  });
}

/** Verification-rate deltas per copilot (empty when either run had no grounding checks). */
function groundingDeltaTable(c: Comparison): string {
  if (!c.grounding) return '';
  const rate = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
  return dataTable(
    "Verification rate (share of claims the copilot's own context supports), B − A in points, paired by query",
    ['copilot', 'A', 'B', 'paired queries', 'Δ (points)', 'p', 'p (Holm)', 'significant'],
    Object.entries(c.grounding).map(([n, g]) => [
      n,
      rate(g.rateA),
      rate(g.rateB),
      g.verificationRate.n,
      g.verificationRate.delta === null ? null : (g.verificationRate.delta * 100).toFixed(1),
      pText(g.verificationRate.pValue),
      pText(g.verificationRate.pAdjusted),
      g.verificationRate.significant ? 'yes' : 'no',
    ]),
  );
}
