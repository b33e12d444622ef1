/** The `reliability` block in report.md and report.html, the same for every protocol. */
import { dataTable, esc } from './html/page';
import { fmt, mdText, table } from './markdown';
import { DISAGREE_POINTS, type JudgeReliability, type Reliability, type SpreadFigures } from '../stats/reliability';

const pct = (x: number | null) => (x === null ? null : `${(100 * x).toFixed(1)}%`);

export function rows(r: JudgeReliability): Array<Array<string | number | null>> {
  const row = (name: string, s: SpreadFigures) => [
    name,
    s.units,
    fmt(s.withinUnitSd, 2),
    pct(s.disagreeShare),
    fmt(s.alpha, 3),
  ];
  return [...Object.entries(r.dimensions).map(([d, s]) => row(d, s)), row('total', r.total)];
}

export const HEADER = [
  'score',
  'units',
  'within-unit SD',
  `samples ≥ ${DISAGREE_POINTS} points apart`,
  "Krippendorff's α (interval)",
];

function failuresText(r: JudgeReliability): string {
  return (
    `${r.samplesOk} of ${r.samplesRequested} samples succeeded (${r.samplesFailed} failed); ${r.unitsWithFailedSamples} units lost some samples and are scored on the rest, ` +
    `${r.unitsWithoutScore} lost all of them (no score).`
  );
}

function rank1Text(r: JudgeReliability): string {
  const c = r.rank1Changes;
  return c
    ? `The response ranked first changed between samples in ${c.changed} of ${c.queries} queries (${pct(c.rate) ?? '–'}).`
    : '';
}

export function reliabilityMarkdown(r: Reliability | null | undefined): string[] {
  if (!r) return [];
  return [
    '## Reliability of the judge (repeated samples)\n',
    `Every unit was judged ${r.samples} times independently; scores above are the mean of its successful samples. ${failuresText(r)} ${rank1Text(r)}\n`,
    table(HEADER, rows(r)),
    ...Object.entries(r.judges ?? {}).flatMap(([name, j]) => [
      `\nJudge ${mdText(name)}: ${failuresText(j)} ${rank1Text(j)}\n`,
      table(HEADER, rows(j)),
    ]),
    `\nMethod: ${r.method}. α = 1: every sample gave a unit the same score; α near 0: samples of one unit differ as much as different units do.\n`,
  ];
}

/** report.html section (id, title, html), or none when the run was judged once. */
export function reliabilitySections(report: Record<string, unknown>): Array<[string, string, string]> {
  const r = report.reliability as Reliability | undefined;
  if (!r) return [];
  const tables = [
    dataTable(`Agreement between the ${r.samples} samples of each unit`, HEADER, rows(r), 'id="reliability-table"'),
    ...Object.entries(r.judges ?? {}).map(([name, j]) =>
      dataTable(`Judge ${name}: agreement between its samples`, HEADER, rows(j)),
    ),
  ];
  const intro = `Every unit was judged ${r.samples} times independently; reported scores are the mean of its successful samples. ${failuresText(r)} ${rank1Text(r)}`;
  return [
    [
      'reliability',
      'Reliability of the judge',
      `<p class="intro">${esc(intro)}</p>${tables.join('')}<p class="note">Method: ${esc(r.method)}.</p>`,
    ],
  ];
}
