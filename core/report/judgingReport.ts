/** What report.md and report.html say about the judges themselves (repeated samples; panels) and the grounding checks, for every protocol. */
import type ExcelJS from 'exceljs';
import {
  HEADER as RELIABILITY_HEADER,
  reliabilityMarkdown,
  reliabilitySections,
  rows as reliabilityRows,
} from './reliabilityReport';
import { sheet } from './xlsx';
import type { FailureReason } from '../stats/failureReasons';
import { table } from './markdown';
import { statsSections } from './statsMarkdown';
import { dataTable, esc } from './html/page';
import type { Reliability } from '../stats/reliability';
import type { Panel } from '../stats/panel';
import { judgeFailuresSummary, panelMarkdown, panelSections, tables as panelTables } from './panelReport';
import type { CalibratedWinRates } from '../study/calibrated';
import { calibratedSections } from '../study/calibratedReport';
import { groundingMarkdown, groundingSections, groundingSheets } from '../grounding/view';
import type { GroundingReport } from '../grounding/report';

export function judgingSections(
  report: Record<string, unknown>,
  studies: Array<{ study: string; calibrated: CalibratedWinRates }> = [],
): Array<[string, string, string]> {
  return [
    ...statsSections(report),
    ...failureSections(report),
    ...panelSections(report),
    ...reliabilitySections(report),
    ...groundingSections(report),
    ...calibratedSections(studies),
  ];
}

export function judgingMarkdown(report: Record<string, unknown>): string[] {
  return [
    ...failureMarkdown(report),
    ...panelMarkdown(report.panel as Panel | undefined),
    ...reliabilityMarkdown(report.reliability as Reliability | undefined),
    ...groundingMarkdown(report.grounding as GroundingReport | undefined),
  ];
}

/** report.json's `failureReasons` as one table, for report.md and report.html alike. */
function failureTable(report: Record<string, unknown>) {
  const reasons = (report.failureReasons as FailureReason[] | undefined) ?? [];
  return reasons.length
    ? {
        header: ['failure', 'items', 'example', 'message'],
        rows: reasons.map((r) => [r.kind, r.count, `${r.example.queryId} / ${r.example.copilot}`, r.message]),
      }
    : null;
}

const FAILURES_NOTE =
  'Items that failed are missing data (no score), never a default score. The most frequent kinds, one message of each; responses.jsonl and results.csv have every item.';

function failureMarkdown(report: Record<string, unknown>): string[] {
  const t = failureTable(report);
  const judges = judgeFailuresSummary(report.panel as Panel | undefined);
  return [
    ...(judges ? ['', '## Judges that failed', '', judges, ''] : []),
    ...(t ? ['', '## Why items failed', '', FAILURES_NOTE, '', table(t.header, t.rows), ''] : []),
  ];
}

function failureSections(report: Record<string, unknown>): Array<[string, string, string]> {
  const t = failureTable(report);
  return t
    ? [
        [
          'failure-reasons',
          'Why items failed',
          `<p class="intro">${esc(FAILURES_NOTE)}</p>${dataTable('Failures by kind', t.header, t.rows, 'id="failure-reasons"')}`,
        ],
      ]
    : [];
}

/** Workbook sheets for the same blocks (protocols that write an .xlsx add them): Reliability, Panel leaderboards, agreement, self-preference. */
export function judgingSheets(wb: ExcelJS.Workbook, report: Record<string, unknown>): void {
  const r = report.reliability as Reliability | undefined;
  if (r) sheet(wb, 'Reliability', RELIABILITY_HEADER, reliabilityRows(r));
  groundingSheets(wb, report);
  const p = report.panel as Panel | undefined;
  if (!p) return;
  const t = panelTables(p);
  sheet(wb, 'Panel Leaderboards', t.leaderboards.header, t.leaderboards.rows);
  sheet(wb, 'Panel Agreement', t.agreement.header, [...t.agreement.rows, [], ...t.tau.rows]);
  sheet(wb, 'Panel Disagreements', t.disagreements.header, t.disagreements.rows);
  sheet(wb, 'Self-preference', t.self.header, t.self.rows);
}
