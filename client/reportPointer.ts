import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The line after "Report: …/report.json" pointing at the page a person reads: report.json is for tools, report.html
 * (written beside it) is what the README tells a user to open. Empty when the run wrote no HTML page.
 */
export function openInBrowser(reportPath: string | null | undefined): string {
  if (!reportPath) return '';
  const html = path.join(path.dirname(reportPath), 'report.html');
  return existsSync(html) ? `\nOpen it in a browser: ${html}` : '';
}
