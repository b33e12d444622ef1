import type { RunRecord, ResultsStore } from '../../core/model/store';
import { openExistingStore } from '../../stores';
import type { Command } from '../args';
import { whereRunsLive } from '../existingStore';
import { connectClient } from '../connection';
import { reconcileRun } from '../reconcile';

export interface RunRow {
  runId: string;
  protocol: string;
  snapshotId: string;
  rubricVersion: string;
  judgeModel: string;
  status: RunRecord['status'];
  startedAt: string;
  finishedAt: string | null;
  sourceRunId: string | null;
  /** Headline figure per copilot (RunRecord.summary); null until the report is written. */
  scores: Record<string, number | null> | null;
  error: string | null;
}

/** Newest first; the status is the one recorded in the results store (judgeflow status asks Temporal). */
export async function listRunRows(store: ResultsStore): Promise<RunRow[]> {
  return (await store.listRuns()).map((r) => {
    const summary = (r.summary ?? null) as Record<string, unknown> | null;
    const error = summary && typeof summary.error === 'string' ? summary.error : null;
    return {
      runId: r.runId,
      protocol: r.protocol,
      snapshotId: r.snapshotId,
      rubricVersion: r.rubricVersion,
      judgeModel: r.judge.model,
      status: r.status,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      sourceRunId: r.sourceRunId,
      scores: summary && !error ? (summary as Record<string, number | null>) : null,
      error,
    };
  });
}

const scoreText = (row: RunRow) =>
  row.error
    ? `error: ${row.error.slice(0, 60)}`
    : row.scores
      ? Object.entries(row.scores)
          .map(([c, s]) => `${c} ${s === null ? '–' : s.toFixed(1)}`)
          .join(', ')
      : '';

function columns(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows]
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '))
    .join('\n');
}

/** Runs the store still calls running are checked against Temporal (terminated ones become failed); skipped when no server answers. */
async function reconcileRunning(store: ResultsStore): Promise<void> {
  const running = (await store.listRuns()).filter((r) => r.status === 'running');
  if (!running.length) return;
  const client = await Promise.race([
    connectClient().catch(() => null),
    new Promise<null>((r) => setTimeout(() => r(null), 3_000).unref()),
  ]);
  if (!client) return;
  try {
    for (const run of running) await reconcileRun(client, store, run.runId).catch(() => null);
  } finally {
    await client.connection.close();
  }
}

export const runsCommand: Command = {
  name: 'runs',
  summary: 'list runs in the results store, newest first',
  usage: 'judgeflow runs [--json]',
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    const store = await openExistingStore();
    if (store) await reconcileRunning(store);
    const rows = store ? await listRunRows(store) : [];
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else if (!rows.length) console.log(`No runs here yet: ${whereRunsLive()}.`);
    else
      console.log(
        columns(
          ['RUN', 'PROTOCOL', 'SNAPSHOT', 'RUBRIC', 'JUDGE', 'STATUS', 'STARTED', 'SCORES'],
          rows.map((r) => [
            r.sourceRunId ? `${r.runId} (re-judge of ${r.sourceRunId})` : r.runId,
            r.protocol,
            r.snapshotId,
            r.rubricVersion,
            r.judgeModel,
            r.status,
            r.startedAt,
            scoreText(r),
          ]),
        ),
      );
    return 0;
  },
};
