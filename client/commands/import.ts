import { InputError } from '../../core/model/inputError';
import { optionalString, type Command } from '../args';
import { openStore } from '../../stores';
import { importCabResults } from '../../rubrics/cab/importResults';
import { importLatticeScores } from '../importLatticeScores';

const USAGE = [
  'judgeflow import lattice-scores FILE --queries QUERIES.json [--answers DIR [--prefix filtered_response_]] [--out DIR] [--rubric DIR]',
  'judgeflow import cab-results FILE [--snapshot ID] [--run-id ID] [--started-at ISO] [--judge-model NAME] [--json]',
  '',
  '  lattice-scores FILE   a scores file written by the LATTICE reference harness (scoring/batch.py)',
  "    --queries           the query file it scored (the reference's JSON array, or judgeflow JSON Lines); matched by query text",
  '    --answers           the folder of filtered_response_<agent>.json files, so report.html shows the answers (optional)',
  '    --out               where the report goes, as <out>/<RUN_ID>/ (default: runs)',
  '  cab-results FILE      the evaluation_statistics_*.xlsx or final_evaluation_results_*.csv the CryptoAnalystBench reference harness wrote',
  '',
  'The run is completed and reportable (judgeflow report, compare, gate, trend); importing the same files again finds it.',
].join('\n');

const str = (values: Record<string, unknown>, k: string) =>
  typeof values[k] === 'string' && values[k] ? (values[k] as string) : undefined;

/** What `import` can read, by subcommand: each turns another tool's output into stored runs. */
const subcommands: Record<string, (file: string, values: Record<string, unknown>) => Promise<number>> = {
  'lattice-scores': async (file, values) => {
    const queriesFile = optionalString(values.queries);
    if (!queriesFile)
      throw new InputError(
        `missing --queries: the query file the scores file scored (its entries are matched by query text)\nUsage: ${USAGE}`,
      );
    const store = await openStore();
    const r = await importLatticeScores(store, {
      file,
      queriesFile,
      output: optionalString(values.out) ?? 'runs',
      answersDir: optionalString(values.answers),
      prefix: optionalString(values.prefix),
      rubricDir: optionalString(values.rubric),
    });
    if (values.json) console.log(JSON.stringify(r));
    else
      console.log(
        `Imported run ${r.runId}: ${r.queries} queries × ${r.copilots.length} copilots (${r.copilots.join(', ')}), ${r.verdicts} verdicts, ${r.errors} errors or missing\nReport: ${r.reportPath}`,
      );
    return 0;
  },
  'cab-results': async (file, values) => {
    const startedAt = str(values, 'started-at');
    if (startedAt !== undefined && Number.isNaN(Date.parse(startedAt)))
      throw new InputError(
        `--started-at "${startedAt}" is not a date and time; use ISO 8601, e.g. 2026-03-05T10:00:00Z`,
      );
    const store = await openStore();
    {
      const r = await importCabResults(store, file, {
        runId: str(values, 'run-id'),
        snapshotId: str(values, 'snapshot'),
        startedAt: startedAt && new Date(startedAt).toISOString(),
        judgeModel: str(values, 'judge-model'),
      });
      if (values.json) console.log(JSON.stringify(r));
      else
        console.log(
          `Imported ${file} as run ${r.runId}: ${r.queries} queries × ${r.copilots.length} models (${r.copilots.join(', ')}), snapshot ${r.snapshotId}; ` +
            (r.fillInsUnknown
              ? "a CSV carries no reasonings, so the reference's fill-ins for failures (scores of 1) cannot be recognised and are kept as scores. "
              : `${r.failed} rows were the reference's fill-ins for a failure and are stored as failed (missing data). `) +
            `See it beside other runs: judgeflow trend --runs ...,${r.runId}`,
        );
      return 0;
    }
  },
};

export const importCommand: Command = {
  name: 'import',
  summary:
    "store another tool's results as a run (lattice-scores: the LATTICE reference's scores_*.json; cab-results: a CryptoAnalystBench reference run), to sit in report, compare, gate and trend",
  usage: USAGE,
  options: {
    queries: { type: 'string', short: 'q' },
    answers: { type: 'string' },
    prefix: { type: 'string' },
    out: { type: 'string', short: 'o' },
    rubric: { type: 'string' },
    snapshot: { type: 'string' },
    'run-id': { type: 'string' },
    'started-at': { type: 'string' },
    'judge-model': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, positionals }) {
    const [what, file, ...extra] = positionals;
    const handler = what ? subcommands[what] : undefined;
    if (!handler)
      throw new InputError(
        `${what ? `unknown format "${what}"` : 'missing the format'}; known: ${Object.keys(subcommands).join(', ')}\nUsage: ${USAGE}`,
      );
    if (!file || extra.length) throw new InputError(`import ${what} takes exactly one FILE\nUsage: ${USAGE}`);
    return handler(file, values);
  },
};
