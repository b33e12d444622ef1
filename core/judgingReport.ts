/** What report.md and report.html say about the judges themselves (repeated samples; panels), for every protocol. */
import { reliabilityMarkdown, reliabilitySections } from './reliabilityReport';
import type { Reliability } from './reliability';

export function judgingSections(report: Record<string, unknown>): Array<[string, string, string]> {
  return [...reliabilitySections(report)];
}

export function judgingMarkdown(report: Record<string, unknown>): string[] {
  return [...reliabilityMarkdown(report.reliability as Reliability | undefined)];
}
