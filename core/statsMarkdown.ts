/** Report sections every protocol shares: interval notes, separability tiers, length bias. */
import type { LengthBias } from './lengthBias';
import { fmt, mdText, table } from './markdown';
import type { Separability } from './separability';
import { BCA_MIN_N, type MeanInterval } from './stats';

/** "low–high (n 42)": n printed beside every interval. */
export const intervalText = (ci: MeanInterval | null, digits = 1) => (ci ? `${fmt(ci.low, digits)}–${fmt(ci.high, digits)} (n ${ci.n})` : null);

export const INTERVAL_NOTE =
  `95% intervals resample queries, not responses: a query's answers from every copilot (and all of its judgments) move together, so n is the number of queries. ` +
  `Student t for n < ${BCA_MIN_N}, BCa bootstrap (seeded by the run) from ${BCA_MIN_N} queries up.`;

const pText = (p: number | null) => (p === null ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3));

export function separabilitySection(s: Separability, digits = 1): string[] {
  const tierOf = (c: string) => s.tiers.findIndex((t) => t.includes(c)) + 1;
  return [
    '## Separability\n',
    `Which copilots this run can tell apart. Tiers (best first; copilots within a tier are not statistically separable at α = ${s.alpha} after Holm correction):\n`,
    ...s.tiers.map((t, i) => `${i + 1}. ${t.map(mdText).join(', ')}`),
    '',
    table(
      ['copilot A', 'copilot B', 'shared queries', 'mean A − B', 'p', 'p (Holm)', 'separable'],
      s.pairs.map((p) => [mdText(p.a), mdText(p.b), p.n, fmt(p.meanDiff, digits), pText(p.pValue), pText(p.pAdjusted), p.significant ? 'yes' : tierOf(p.a) === tierOf(p.b) ? 'no (same tier)' : 'no']),
    ),
    `\nMethod: ${s.method}.\n`,
  ];
}

export function lengthBiasSection(lb: LengthBias): string[] {
  return [
    '## Length bias\n',
    `Correlation between a response's length in ${lb.measure} and its ${lb.score}. A positive figure means longer answers scored higher; by itself it does not say whether they were better or the judge favours length, so compare copilots and the within-query figure.\n`,
    table(
      ['', 'responses', 'mean words', 'Pearson r', 'Spearman ρ'],
      [
        ['judge, all copilots', lb.judge.n, null, fmt(lb.judge.pearson, 2), fmt(lb.judge.spearman, 2)],
        ...Object.entries(lb.copilots).map(([c, x]) => [mdText(c), x.n, fmt(x.meanWords, 0), fmt(x.pearson, 2), fmt(x.spearman, 2)]),
      ],
    ),
    `\nWithin query (lengths and scores centred on each query's mean, so question difficulty drops out): r = ${fmt(lb.judge.withinQuery, 2)}.\n`,
  ];
}
