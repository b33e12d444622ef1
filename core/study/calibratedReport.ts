/** Calibrated win rates beside the judge's own, as tables for study.md and for a run's report.html (when a study exists). */
import { dataTable, esc } from '../report/html/page';
import type { CalibratedWinRates } from './calibrated';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(1)}%`);
const interval = (ci: { low: number; high: number } | null) => (ci ? `${pct(ci.low)}–${pct(ci.high)}` : '–');

export const CALIBRATED_HEADER = [
  'Copilot',
  'Calibrated win rate',
  '95% CI',
  'Judge only',
  'Annotators only',
  'Annotated / all items',
  'More annotated items to halve the CI',
];

export function calibratedRows(c: CalibratedWinRates): Array<Array<string | number>> {
  return Object.entries(c.copilots).map(([name, x]) => [
    name,
    pct(x.winRate),
    interval(x.ci95),
    pct(x.judgeOnly),
    pct(x.humanOnly),
    `${x.annotatedItems} / ${x.items}`,
    x.moreLabelsToHalve ?? `– (${x.moreLabelsNote})`,
  ]);
}

export function calibratedIntro(c: CalibratedWinRates): string {
  return (
    `The judge of run ${c.judgeRunId} over all ${c.items} (query, pair) items of the run, corrected by the annotators on the ${c.annotatedItems} they annotated ` +
    `(PPI++ with a tuned λ${c.design === 'active' ? ", weighted by the active selection's inclusion probabilities" : ''}; wins among decisive preferences, ties within ${c.tieMargin} of the judge's totals; an interval from ${c.minimumAnnotatedQueries} annotated queries on). ` +
    (c.itemsWithoutJudgment
      ? `${c.itemsWithoutJudgment} items without both judgments are left out (${c.annotatedItemsWithoutJudgment} of them annotated). `
      : '') +
    "The interval covers both the judge's sampling over the run and the correction's over the annotated items."
  );
}

/** report.html sections, one per study of the run that has annotations. */
export function calibratedSections(
  studies: Array<{ study: string; calibrated: CalibratedWinRates }>,
): Array<[string, string, string]> {
  return studies.map(({ study, calibrated }) => [
    `calibrated-${study}`.replace(/[^A-Za-z0-9_-]/g, '-'),
    `Calibrated by study ${study}`,
    `<p class="intro">${esc(calibratedIntro(calibrated))}</p>` +
      dataTable(
        `Win rates: calibrated by people and the judge alone (study ${study})`,
        CALIBRATED_HEADER,
        calibratedRows(calibrated),
        'class="calibrated"',
      ),
  ]);
}
