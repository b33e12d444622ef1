import { InputError } from '../../core/model/inputError';
import type { ResultsStore } from '../../core/model/store';
import type { Trend } from '../../core/compare/trend';
import { trendStoredRuns } from '../../services/storedComparison';
import type { Command } from '../args';
import { requireExistingStore } from '../existingStore';

const USAGE = 'judgeflow trend --schedule NAME | --runs RUN,RUN,... [--json]';

/** The runs a schedule started, oldest first (the store lists its snapshots newest first). */
export async function scheduleRunIds(store: ResultsStore, schedule: string): Promise<string[]> {
  const rows = await store.scheduleSnapshots(schedule);
  if (!rows.length)
    throw new InputError(
      `schedule "${schedule}" has made no snapshot in the results store ${store.location} yet (see judgeflow schedule describe ${schedule})`,
    );
  return rows.flatMap((r) => (r.runId ? [r.runId] : [])).reverse();
}

/** The runs `--schedule NAME` or `--runs A,B,C` name (exactly one of them), for trend and stability. */
export async function runIdsFrom(
  store: ResultsStore,
  values: Record<string, unknown>,
  usage: string,
): Promise<string[]> {
  const schedule = typeof values.schedule === 'string' ? values.schedule : undefined;
  const runs = typeof values.runs === 'string' ? values.runs : undefined;
  if (Boolean(schedule) === Boolean(runs))
    throw new InputError(`give exactly one of --schedule NAME or --runs RUN,RUN,...\nUsage: ${usage}`);
  if (schedule) return scheduleRunIds(store, schedule);
  const ids = runs!
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (!ids.length) throw new InputError(`--runs: expected run ids separated by commas (got "${runs}")`);
  return ids;
}

const fixed = (x: number | null, digits = 2) => (x === null ? '–' : x.toFixed(digits));
const signed = (x: number | null) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);

export function renderTrend(t: Trend): string {
  if (!t.runs.length) return 'No runs yet.';
  const lines: string[] = [];
  for (const r of t.runs) {
    lines.push(
      `${r.startedAt}  ${r.runId}  snapshot ${r.snapshotId}${r.status === 'completed' ? '' : `  (${r.status})`}`,
    );
    if (r.vsPrevious && r.vsPrevious.overlap.by !== 'id')
      lines.push(
        `  vs ${r.vsPrevious.runId}: another snapshot, compared on ${r.vsPrevious.overlap.paired} shared queries (${r.vsPrevious.overlap.unpairedB} new, ${r.vsPrevious.overlap.unpairedA} gone)`,
      );
    for (const [c, s] of Object.entries(r.copilots)) {
      const v = r.vsPrevious?.copilots[c];
      const mark = r.vsPrevious?.regressions.includes(c)
        ? '  REGRESSION'
        : r.vsPrevious?.improvements.includes(c)
          ? '  improved'
          : '';
      const vs = v ? `  Δ ${signed(v.delta)} over ${v.n}, p ${fixed(v.p, 3)}, Holm ${fixed(v.pHolm, 3)}${mark}` : '';
      lines.push(
        `  ${c}: ${fixed(s.score)} [${fixed(s.ci95?.low ?? null)}, ${fixed(s.ci95?.high ?? null)}] n ${s.n}${vs}`,
      );
    }
  }
  return lines.join('\n');
}

export const trendCommand: Command = {
  name: 'trend',
  summary:
    "each copilot's score over a schedule's runs (or a list of runs), with the paired test against the run before",
  usage: USAGE,
  options: { schedule: { type: 'string' }, runs: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    if (positionals.length) throw new InputError(`unexpected argument "${positionals[0]}"\nUsage: ${USAGE}`);
    const store = await requireExistingStore();
    const runIds = await runIdsFrom(store, values, USAGE);
    const t = await trendStoredRuns(store, runIds);
    console.log(values.json ? JSON.stringify(t, null, 2) : renderTrend(t));
    return 0;
  },
};
