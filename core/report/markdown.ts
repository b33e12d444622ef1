/** Tiny Markdown helpers shared by every report. */
import type { CostSummary } from '../stats/cost';
import { COST_CAPTION, costHeader, costNote, costRows } from './costTable';

export const fmt = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits);

/**
 * Text from outside (judge rationales, queries, tags, names) placed in Markdown: `<` and `>` become entities, so HTML
 * in it (a `<script>` in a rationale) is shown as text, never run, by viewers that render HTML inside Markdown.
 */
export function mdText(value: unknown): string {
  return String(value).replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An inline code span for an outside value (a model name): a backtick inside it cannot end the span early. */
export function mdCode(value: unknown): string {
  return `\`${String(value).replace(/`/g, "'")}\``;
}

export function table(header: string[], rows: Array<Array<string | number | null>>): string {
  const line = (cells: Array<string | number | null>) =>
    `| ${cells.map((c) => (c === null ? '–' : mdText(c).replace(/\|/g, '\\|'))).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function simulatedBanner(simulated: boolean): string {
  return simulated
    ? "> **Simulated run.** Copilots and judge were played by judgeflow's local simulator (no LLM provider was called). The figures demonstrate the pipeline, not any product.\n\n"
    : '';
}

/** report.md's cost section: the table report.html has (core/report/costTable.ts). */
export function costMarkdown(cost: CostSummary | undefined): string[] {
  if (!cost) return [];
  return [
    '',
    '## What the run cost',
    '',
    `${COST_CAPTION}:`,
    '',
    table(costHeader(cost), costRows(cost)),
    '',
    costNote(cost, mdCode),
  ];
}
