import type { Comparison, PairedDelta } from './compare';
import { fmt, mdCode, mdText, table } from '../report/markdown';

const signed = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined ? '–' : `${x > 0 ? '+' : ''}${x.toFixed(digits)}`;
const pFmt = (p: number | null) => (p === null ? '–' : p < 0.001 ? '<0.001' : p.toFixed(3));
const ci = (d: PairedDelta) => (d.ci95 ? `${signed(d.ci95.low)} … ${signed(d.ci95.high)} (n ${d.ci95.n})` : '–');
const mark = (d: PairedDelta) => (d.significant ? `**${signed(d.delta, 2)}**` : signed(d.delta, 2));
const oneLine = (s: string, max = 160) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function renderComparison(c: Comparison): string {
  const names = Object.keys(c.copilots).sort(
    (x, y) => (c.copilots[x].rankB ?? 1e9) - (c.copilots[y].rankB ?? 1e9) || (x < y ? -1 : 1),
  );
  const side = (r: Comparison['runA']) =>
    `run \`${r.runId}\` · rubric \`${r.rubricVersion}\` · judge ${mdCode(r.judge.model)} (temperature ${r.judge.temperature})`;
  const out: string[] = [
    `# Compare ${mdText(c.runA.runId)} → ${mdText(c.runB.runId)}\n`,
    `- A: ${side(c.runA)}`,
    `- B: ${side(c.runB)}`,
    `- ${c.sameSnapshot ? `same snapshot \`${c.runA.snapshotId}\`` : `**different snapshots** (\`${c.runA.snapshotId}\` vs \`${c.runB.snapshotId}\`): only queries with the same id and the same normalised text are paired`}` +
      `; rubric ${c.rubricChanged ? 'changed' : 'unchanged'}; judge ${c.judgeChanged ? 'changed' : 'unchanged'}`,
    `- queries paired: ${c.pairing.paired}; unpaired: ${c.pairing.unpairedA} in A, ${c.pairing.unpairedB} in B` +
      `${c.pairing.textMismatch ? ` (${c.pairing.textMismatch} share an id but not the text)` : ''}\n`,
    `Δ = B − A, paired over the queries a copilot has an ok judgment for in both runs. **Bold** = significant at α = ${c.alpha} (${c.test}).\n`,
    '## Overall\n',
    table(
      [
        'copilot',
        'rank A',
        'rank B',
        'score A',
        'score B',
        'paired n',
        'Δ',
        '95% CI',
        'p',
        'p (Holm)',
        'significant',
        'judged only in A / B',
      ],
      names.map((n) => {
        const x = c.copilots[n];
        return [
          n,
          x.rankA,
          x.rankB,
          fmt(x.scoreA),
          fmt(x.scoreB),
          x.overall.n,
          mark(x.overall),
          ci(x.overall),
          pFmt(x.overall.pValue),
          pFmt(x.overall.pAdjusted),
          x.overall.significant ? 'yes' : 'no',
          `${x.okOnlyInA} / ${x.okOnlyInB}`,
        ];
      }),
    ),
    "\nScores are each run's mean per-response score over all its ok judgments (the protocol's headline: LATTICE's total; CryptoAnalystBench the mean of the four dimensions, 1–10); ranks follow them (1 = best).\n",
  ];
  if (c.onlyInA.length || c.onlyInB.length)
    out.push(
      `Copilots in one run only: A ${mdText(c.onlyInA.join(', ') || '–')}; B ${mdText(c.onlyInB.join(', ') || '–')}.\n`,
    );

  const dims = [...new Set(names.flatMap((n) => Object.keys(c.copilots[n].dimensions)))];
  if (dims.length) {
    out.push(
      '## Dimensions (Δ, p)\n',
      table(
        ['copilot', ...dims],
        names.map((n) => [
          n,
          ...dims.map((d) =>
            c.copilots[n].dimensions[d]
              ? `${mark(c.copilots[n].dimensions[d])} (p ${pFmt(c.copilots[n].dimensions[d].pValue)}, Holm ${pFmt(c.copilots[n].dimensions[d].pAdjusted)})`
              : null,
          ),
        ]),
      ),
      '',
    );
  }
  const flags = [...new Set(names.flatMap((n) => Object.keys(c.copilots[n].taxonomy)))].sort();
  if (flags.length) {
    const rate = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(0)}%`);
    out.push(
      '## Error-taxonomy rates (A → B, Δ in points; not dimensions)\n',
      table(
        ['copilot', ...flags],
        names.map((n) => [
          n,
          ...flags.map((f) => {
            const t = c.copilots[n].taxonomy[f];
            return t ? `${rate(t.a)} → ${rate(t.b)} (${signed(t.delta === null ? null : t.delta * 100, 0)})` : null;
          }),
        ]),
      ),
      '',
    );
  }
  if (names.some((n) => c.copilots[n].meanRank)) {
    out.push(
      '## Mean rank within the query (lower is better)\n',
      table(
        ['copilot', 'A', 'B', 'Δ'],
        names.map((n) => [
          n,
          fmt(c.copilots[n].meanRank?.a, 2),
          fmt(c.copilots[n].meanRank?.b, 2),
          signed(c.copilots[n].meanRank?.delta, 2),
        ]),
      ),
      '',
    );
  }
  const labels = [...new Set(names.flatMap((n) => Object.keys(c.copilots[n].groups)))];
  for (const label of labels) {
    const values = [...new Set(names.flatMap((n) => Object.keys(c.copilots[n].groups[label] ?? {})))].sort((x, y) =>
      x.localeCompare(y, undefined, { numeric: true }),
    );
    out.push(
      `## By ${mdText(label)} (Δ of totals)\n`,
      table(
        [label, ...names],
        values.map((v) => [
          v,
          ...names.map((n) =>
            c.copilots[n].groups[label]?.[v]
              ? `${signed(c.copilots[n].groups[label][v].delta)} (n ${c.copilots[n].groups[label][v].n})`
              : null,
          ),
        ]),
      ),
      '',
    );
  }

  if (c.grounding) {
    const rate = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
    const pp = (x: number | null | undefined) => (x === null || x === undefined ? '–' : signed(x * 100, 1));
    out.push(
      '## Grounding: verification rate (A → B, Δ in points)\n',
      table(
        ['copilot', 'A', 'B', 'paired queries', 'Δ', 'p', 'p (Holm)', 'significant'],
        Object.entries(c.grounding).map(([n, g]) => [
          n,
          rate(g.rateA),
          rate(g.rateB),
          g.verificationRate.n,
          g.verificationRate.significant ? `**${pp(g.verificationRate.delta)}**` : pp(g.verificationRate.delta),
          pFmt(g.verificationRate.pValue),
          pFmt(g.verificationRate.pAdjusted),
          g.verificationRate.significant ? 'yes' : 'no',
        ]),
      ),
      "\nPer query: the share of its claims the copilot's own context supports; paired over queries with claims checked in both runs.\n",
    );
  }
  out.push(`## Most moved (${c.movers.length})\n`);
  if (!c.movers.length) out.push('No paired response changed its total.\n');
  c.movers.forEach((m, i) => {
    const labelText = Object.entries(m.labels)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    out.push(
      `### ${i + 1}. ${mdText(m.queryId)} · ${mdText(m.copilot)} · ${fmt(m.a.total)} → ${fmt(m.b.total)} (${signed(m.delta)})\n`,
      mdText(`${labelText ? `${labelText} — ` : ''}${oneLine(m.query)}`) + '\n',
    );
    // Only the dimensions: flags (e.g. error taxonomy) have their own table above.
    const dimIds = [...new Set([...Object.keys(m.a.scores), ...Object.keys(m.b.scores)])].filter((d) =>
      dims.includes(d),
    );
    out.push(
      table(
        ['dimension', 'A', 'A rationale', 'B', 'B rationale'],
        dimIds.map((d) => [
          d,
          m.a.scores[d] ?? null,
          oneLine(m.a.rationales?.[d] ?? ''),
          m.b.scores[d] ?? null,
          oneLine(m.b.rationales?.[d] ?? ''),
        ]),
      ),
      '',
    );
  });
  return out.join('\n');
}
