import path from 'node:path';
import { writeTextAtomic } from '../core/files';
import { compareRuns, type CompareOptions, type CompareRun, type Comparison } from '../core/compare';
import { renderComparison } from '../core/compareMarkdown';
import { buildCompareHtml } from '../core/compareHtml';
import type { ResultsStore, RunRecord } from '../core/store';
import type { Query } from '../core/types';
import { InputError } from '../core/inputError';
import { protocolFor } from '../rubrics';
import { consensusVerdicts } from '../activities/deps';

async function loadSide(store: ResultsStore, runId: string, which: string): Promise<{ run: RunRecord; side: CompareRun }> {
  const run = await store.getRun(runId);
  if (!run) throw new InputError(`${which}: run ${runId} is not in the results store ${store.location} (see judgeflow runs)`);
  const side: CompareRun = {
    runId: run.runId,
    protocol: run.protocol,
    snapshotId: run.snapshotId,
    rubricVersion: run.rubricVersion,
    judge: run.judge,
    copilots: run.copilots,
    judgments: await consensusVerdicts(store, run),
  };
  const groundingVersion = (run.config as { groundingVersion?: string }).groundingVersion;
  if (groundingVersion) side.grounding = await store.groundingChecks(run.runId, groundingVersion);
  return { run, side };
}

/** Compare two stored runs (B against A). */
export async function compareStoredRuns(store: ResultsStore, runIdA: string, runIdB: string, options: CompareOptions = {}): Promise<{ comparison: Comparison; runB: RunRecord }> {
  const a = await loadSide(store, runIdA, 'RUN_A');
  const b = await loadSide(store, runIdB, 'RUN_B');
  if (a.run.protocol !== b.run.protocol) throw new InputError(`run ${runIdA} is ${a.run.protocol} and run ${runIdB} is ${b.run.protocol}; only runs of one protocol can be compared`);
  // Each run's own snapshot: ids are positional, so across two snapshots a query pairs only on id AND text.
  const queries: { a: Query[]; b: Query[] } = { a: await store.snapshotQueries(a.run.snapshotId), b: await store.snapshotQueries(b.run.snapshotId) };
  return { comparison: compareRuns(a.side, b.side, queries, protocolFor(b.run.protocol), options), runB: b.run };
}

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
