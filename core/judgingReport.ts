/** What report.md and report.html say about the judges themselves (repeated samples; panels) and the grounding checks, for every protocol. */
import type ExcelJS from 'exceljs';
import { HEADER as RELIABILITY_HEADER, reliabilityMarkdown, reliabilitySections, rows as reliabilityRows } from './reliabilityReport';
import { sheet } from './xlsx';
import type { Reliability } from './reliability';
import type { Panel } from './panel';
import { panelMarkdown, panelSections, tables as panelTables } from './panelReport';
import type { CalibratedWinRates } from './study/calibrated';
import { calibratedSections } from './study/calibratedReport';
import { groundingMarkdown, groundingSections, groundingSheets } from './groundingView';
import type { GroundingReport } from './groundingReport';

export function judgingSections(report: Record<string, unknown>, studies: Array<{ study: string; calibrated: CalibratedWinRates }> = []): Array<[string, string, string]> {
  return [...panelSections(report), ...reliabilitySections(report), ...groundingSections(report), ...calibratedSections(studies)];
}

export function judgingMarkdown(report: Record<string, unknown>): string[] {
  return [...panelMarkdown(report.panel as Panel | undefined), ...reliabilityMarkdown(report.reliability as Reliability | undefined), ...groundingMarkdown(report.grounding as GroundingReport | undefined)];
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
