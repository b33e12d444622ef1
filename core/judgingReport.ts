/** What report.md and report.html say about the judges themselves (repeated samples; panels), for every protocol. */
import { reliabilityMarkdown, reliabilitySections } from './reliabilityReport';
import type { Reliability } from './reliability';
import type { Panel } from './panel';
import { panelMarkdown, panelSections } from './panelReport';

export function judgingSections(report: Record<string, unknown>): Array<[string, string, string]> {
  return [...panelSections(report), ...reliabilitySections(report)];
}

export function judgingMarkdown(report: Record<string, unknown>): string[] {
  return [...panelMarkdown(report.panel as Panel | undefined), ...reliabilityMarkdown(report.reliability as Reliability | undefined)];
}
