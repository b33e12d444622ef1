/**
 * Comparing and gating two runs as the results store holds them (consensus verdicts of each run, each run's own
 * snapshot queries). Here in the activities layer because a schedule's alert step gates from an activity; the CLI's
 * compare and gate use the same functions (client/compareRuns.ts).
 */
import path from 'node:path';
import { writeTextAtomic } from '../core/io/files';
import { renderComparison } from '../core/compare/markdown';
import { buildCompareHtml } from '../core/compare/html';
import { compareRuns, type CompareOptions, type CompareRun, type Comparison } from '../core/compare/compare';
import { assertGateable, gate, type GateOptions, type GateResult } from '../core/compare/gate';
import { candidateProblems } from '../core/compare/gateCandidate';
import type { ResultsStore, RunRecord } from '../core/model/store';
import type { Query } from '../core/model/types';
import { InputError } from '../core/model/inputError';
import { protocolFor } from '../rubrics';
import { trend, type Trend } from '../core/compare/trend';
import { stability, type Stability } from '../core/stats/stability';
import { consensusVerdicts } from '../activities/deps';

async function loadSide(
  store: ResultsStore,
  runId: string,
  which: string,
): Promise<{ run: RunRecord; side: CompareRun }> {
  const run = await store.getRun(runId);
  if (!run)
    throw new InputError(`${which}: run ${runId} is not in the results store ${store.location} (see judgeflow runs)`);
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
export async function compareStoredRuns(
  store: ResultsStore,
  runIdA: string,
  runIdB: string,
  options: CompareOptions = {},
): Promise<{ comparison: Comparison; runB: RunRecord }> {
  const a = await loadSide(store, runIdA, 'RUN_A');
  const b = await loadSide(store, runIdB, 'RUN_B');
  if (a.run.protocol !== b.run.protocol)
    throw new InputError(
      `run ${runIdA} is ${a.run.protocol} and run ${runIdB} is ${b.run.protocol}; only runs of one protocol can be compared`,
    );
  // Each run's own snapshot: ids are positional, so across two snapshots a query pairs only on id AND text.
  const queries: { a: Query[]; b: Query[] } = {
    a: await store.snapshotQueries(a.run.snapshotId),
    b: await store.snapshotQueries(b.run.snapshotId),
  };
  return { comparison: compareRuns(a.side, b.side, queries, protocolFor(b.run.protocol), options), runB: b.run };
}

/**
 * The gate over two stored runs: refused (InputError) unless both ran one snapshot of one protocol. `problems` says why
 * the candidate cannot pass whatever the scores say (not completed, too little paired coverage: core/compare/gateCandidate.ts).
 */
export async function gateStoredRuns(
  store: ResultsStore,
  baseline: string,
  candidate: string,
  options: CompareOptions & GateOptions & { minCoverage?: number } = {},
): Promise<{ comparison: Comparison; result: GateResult; problems: string[] }> {
  const a = await store.getRun(baseline);
  const b = await store.getRun(candidate);
  // Named by the gate's own flags: the user typed --baseline and --candidate, not compare's RUN_A and RUN_B.
  if (!a)
    throw new InputError(
      `--baseline: run ${baseline} is not in the results store ${store.location} (see judgeflow runs)`,
    );
  if (!b)
    throw new InputError(
      `--candidate: run ${candidate} is not in the results store ${store.location} (see judgeflow runs)`,
    );
  assertGateable(a, b);
  const { comparison } = await compareStoredRuns(store, baseline, candidate, options);
  return {
    comparison,
    result: gate(comparison, options),
    problems: candidateProblems(b, comparison, options.minCoverage),
  };
}

/**
 * The trend over stored runs, in time order. Runs still running or failed are listed (with what they have judged);
 * runs of another protocol than the first are refused.
 */
export async function trendStoredRuns(
  store: ResultsStore,
  runIds: string[],
  options: CompareOptions = {},
): Promise<Trend> {
  const loaded = [];
  const snapshots = new Map<string, Query[]>();
  for (const runId of runIds) {
    const { run, side } = await loadSide(store, runId, 'trend');
    if (loaded.length && run.protocol !== loaded[0].protocol)
      throw new InputError(
        `run ${runId} is ${run.protocol} and run ${loaded[0].runId} is ${loaded[0].protocol}; a trend follows runs of one protocol`,
      );
    if (!snapshots.has(run.snapshotId)) snapshots.set(run.snapshotId, await store.snapshotQueries(run.snapshotId));
    loaded.push({ ...side, startedAt: run.startedAt, status: run.status, queries: snapshots.get(run.snapshotId)! });
  }
  if (!loaded.length) return { runs: [] };
  return trend(loaded, protocolFor(loaded[0].protocol), options);
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

/** Answer stability over stored runs: every run's ok answers and every judge sample (core/stats/stability.ts). */
export async function stabilityOfStoredRuns(
  store: ResultsStore,
  runIds: string[],
  options: { threshold?: number } = {},
): Promise<Stability> {
  const runs = [];
  for (const runId of runIds) {
    const run = await store.getRun(runId);
    if (!run)
      throw new InputError(
        `stability: run ${runId} is not in the results store ${store.location} (see judgeflow runs)`,
      );
    runs.push({
      runId,
      startedAt: run.startedAt,
      copilots: run.copilots,
      queries: await store.snapshotQueries(run.snapshotId),
      responses: await store.responses(runId),
      judgments: await store.judgments(runId, run.rubricVersion),
    });
  }
  return stability(runs, options);
}
