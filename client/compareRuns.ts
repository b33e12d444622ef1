import path from 'node:path';
import { writeTextAtomic } from '../core/files';
import type { Comparison } from '../core/compare';
import { renderComparison } from '../core/compareMarkdown';
import { buildCompareHtml } from '../core/compareHtml';
import type { RunRecord } from '../core/store';

export { compareStoredRuns, gateStoredRuns } from '../activities/storedComparison';

/** Default output: next to run B's report, in compare-<RUN_A>/. */
export function defaultCompareDir(runB: RunRecord, runIdA: string): string {
  const output = (runB.config as { output?: string }).output ?? 'runs';
  return path.join(output, runB.runId, `compare-${runIdA}`);
}

/** Writes compare.json, compare.md and report.html, each whole then renamed into place. */
export function writeComparison(dir: string, comparison: Comparison): { json: string; markdown: string; html: string } {
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeTextAtomic(file, text);
    return file;
  };
  return {
    json: write('compare.json', JSON.stringify(comparison, null, 2) + '\n'),
    markdown: write('compare.md', renderComparison(comparison)),
    html: write('report.html', buildCompareHtml(comparison)),
  };
}
