/** Report sections every protocol shares: interval notes, separability tiers, length bias. */
import type { LengthBias } from '../stats/lengthBias';
import { fmt, mdText, table } from './markdown';
import { dataTable, esc } from './html/page';
import type { Separability } from '../stats/separability';
import { BCA_MIN_N, type MeanInterval } from '../stats/stats';

/** "low–high (n 42)": n printed beside every interval. */
export const intervalText = (ci: MeanInterval | null, digits = 1) =>
  ci ? `${fmt(ci.low, digits)}–${fmt(ci.high, digits)} (n ${ci.n})` : null;

export const INTERVAL_NOTE =
  `95% intervals resample queries, not responses: a query's answers from every copilot (and all of its judgments) move together, so n is the number of queries. ` +
  `Student t for n < ${BCA_MIN_N}, BCa bootstrap (seeded by the run) from ${BCA_MIN_N} queries up.`;

const pText = (p: number | null) => (p === null ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3));

/** The separability block as text and one table: what report.md and report.html both show (one source for both). */
function separabilityParts(s: Separability, digits: number) {
  const tierOf = (c: string) => s.tiers.findIndex((t) => t.includes(c)) + 1;
  return {
    intro: `Which copilots this run can tell apart. Tiers (best first; copilots within a tier are not statistically separable at α = ${s.alpha} after Holm correction):`,
    tiers: s.tiers,
    header: ['copilot A', 'copilot B', 'shared queries', 'mean A − B', 'p', 'p (Holm)', 'separable'],
    rows: s.pairs.map((p) => [
      p.a,
      p.b,
      p.n,
      fmt(p.meanDiff, digits),
      pText(p.pValue),
      pText(p.pAdjusted),
      p.significant ? 'yes' : tierOf(p.a) === tierOf(p.b) ? 'no (same tier)' : 'no',
    ]),
    method: `Method: ${s.method}.`,
  };
}

export function separabilitySection(s: Separability, digits = 1): string[] {
  const parts = separabilityParts(s, digits);
  return [
    '## Separability\n',
    `${parts.intro}\n`,
    ...parts.tiers.map((t, i) => `${i + 1}. ${t.map(mdText).join(', ')}`),
    '',
    table(parts.header, parts.rows),
    `\n${parts.method}\n`,
  ];
}

function lengthBiasParts(lb: LengthBias) {
  return {
    intro: `Correlation between a response's length in ${lb.measure} and its ${lb.score}. A positive figure means longer answers scored higher; by itself it does not say whether they were better or the judge favours length, so compare copilots and the within-query figure.`,
    header: ['', 'responses', 'mean words', 'Pearson r', 'Spearman ρ'],
    rows: [
      ['judge, all copilots', lb.judge.n, null, fmt(lb.judge.pearson, 2), fmt(lb.judge.spearman, 2)],
      ...Object.entries(lb.copilots).map(([c, x]) => [
        c,
        x.n,
        fmt(x.meanWords, 0),
        fmt(x.pearson, 2),
        fmt(x.spearman, 2),
      ]),
    ] as Array<Array<string | number | null>>,
    within: `Within query (lengths and scores centred on each query's mean, so question difficulty drops out): r = ${fmt(lb.judge.withinQuery, 2)}.`,
  };
}

export function lengthBiasSection(lb: LengthBias): string[] {
  const parts = lengthBiasParts(lb);
  return ['## Length bias\n', `${parts.intro}\n`, table(parts.header, parts.rows), `\n${parts.within}\n`];
}

/** The same two blocks for report.html, from report.json's `separability` and `lengthBias` (when the protocol has them). */
export function statsSections(report: Record<string, unknown>): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  const sep = report.separability as Separability | undefined;
  if (sep?.pairs && sep.tiers) {
    const parts = separabilityParts(sep, 2);
    out.push([
      'separability',
      'Separability',
      `<p class="intro">${esc(parts.intro)}</p><ol id="separability-tiers">${parts.tiers.map((t) => `<li>${esc(t.join(', '))}</li>`).join('')}</ol>` +
        dataTable(
          'Every pair of copilots: paired difference and p-value',
          parts.header,
          parts.rows,
          'id="separability-pairs"',
        ) +
        `<p class="note">${esc(parts.method)}</p>`,
    ]);
  }
  const lb = report.lengthBias as LengthBias | undefined;
  if (lb?.judge) {
    const parts = lengthBiasParts(lb);
    out.push([
      'length-bias',
      'Length bias',
      `<p class="intro">${esc(parts.intro)}</p>${dataTable('Length and score', parts.header, parts.rows, 'id="length-bias"')}<p class="note">${esc(parts.within)}</p>`,
    ]);
  }
  return out;
}
