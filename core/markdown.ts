/** Tiny Markdown helpers shared by every report. */
export const fmt = (x: number | null | undefined, digits = 1) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits));

export function table(header: string[], rows: Array<Array<string | number | null>>): string {
  const line = (cells: Array<string | number | null>) => `| ${cells.map((c) => (c === null ? '–' : String(c).replace(/\|/g, '\\|'))).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function simulatedBanner(simulated: boolean): string {
  return simulated
    ? '> **Simulated run.** Copilots and judge were played by judgeflow\'s local simulator (no LLM provider was called). The figures demonstrate the pipeline, not any product.\n\n'
    : '';
}
