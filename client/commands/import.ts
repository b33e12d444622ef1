import { InputError } from '../../core/inputError';
import type { Command } from '../args';
import { openStore } from '../../stores';
import { importCabResults } from '../../rubrics/cab/importResults';

const USAGE =
  'judgeflow import cab-results FILE [--snapshot ID] [--run-id ID] [--started-at ISO] [--judge-model NAME] [--json]\n' +
  '       (FILE: the evaluation_statistics_*.xlsx or final_evaluation_results_*.csv the CryptoAnalystBench reference harness wrote)';

/** What `import` can read, by subcommand: each turns another tool's output into stored runs. */
const subcommands: Record<string, (file: string, values: Record<string, unknown>) => Promise<number>> = {
  'cab-results': async (file, values) => {
    const str = (k: string) => (typeof values[k] === 'string' && values[k] ? (values[k] as string) : undefined);
    const startedAt = str('started-at');
    if (startedAt !== undefined && Number.isNaN(Date.parse(startedAt))) throw new InputError(`--started-at "${startedAt}" is not a date and time; use ISO 8601, e.g. 2026-03-05T10:00:00Z`);
    const store = await openStore();
    {
      const r = await importCabResults(store, file, { runId: str('run-id'), snapshotId: str('snapshot'), startedAt: startedAt && new Date(startedAt).toISOString(), judgeModel: str('judge-model') });
      if (values.json) console.log(JSON.stringify(r));
      else
        console.log(
          `Imported ${file} as run ${r.runId}: ${r.queries} queries × ${r.copilots.length} models (${r.copilots.join(', ')}), snapshot ${r.snapshotId}; ` +
            (r.fillInsUnknown
              ? 'a CSV carries no reasonings, so the reference\'s fill-ins for failures (scores of 1) cannot be recognised and are kept as scores. '
              : `${r.failed} rows were the reference's fill-ins for a failure and are stored as failed (missing data). `) +
            `See it beside other runs: judgeflow trend --runs ...,${r.runId}`,
        );
      return 0;
    }
  },
};

export const importCommand: Command = {
  name: 'import',
  summary: "store another tool's results as a run (cab-results: a CryptoAnalystBench reference run), to sit in trend, compare and gate",
  usage: USAGE,
  options: { snapshot: { type: 'string' }, 'run-id': { type: 'string' }, 'started-at': { type: 'string' }, 'judge-model': { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [what, file, ...extra] = positionals;
    const handler = what ? subcommands[what] : undefined;
    if (!handler) throw new InputError(`import ${what ?? ''}: expected one of ${Object.keys(subcommands).join(', ')}\nUsage: ${USAGE}`);
    if (!file || extra.length) throw new InputError(`import ${what} takes exactly one FILE\nUsage: ${USAGE}`);
    return handler(file, values);
  },
};
