import path from 'node:path';
import { consensusJudgments } from '../../core/stats/consensus';
import { writeTextAtomic } from '../../core/io/files';
import { InputError } from '../../core/model/inputError';
import { panelAggregate, panelMinJudges, requireRubric, type StoredRunConfig } from '../../activities/deps';
import type { LatticeRubric } from '../../rubrics/lattice/rubric';
import { manifestAgentFile, toReferenceScores } from '../../rubrics/lattice/scoresFile';
import type { ResultsStore } from '../../core/model/store';
import { optionalString, type Command } from '../args';
import { requireExistingStore, whereRunsLive } from '../existingStore';
import { writeAgentTraces } from '../agentTraces';

const FORMATS = ['lattice-scores', 'cab-traces'] as const;

/** A stored LATTICE run as the reference harness's scores file (rubrics/lattice/scoresFile.ts says every key). */
export async function latticeScoresOf(
  store: ResultsStore,
  runId: string,
): Promise<ReturnType<typeof toReferenceScores>> {
  const run = await store.getRun(runId);
  if (!run) throw new InputError(`run ${runId} is not in this results store: ${whereRunsLive(store.location)}`);
  if (run.protocol !== 'lattice')
    throw new InputError(`run ${runId} is a ${run.protocol} run; --format lattice-scores writes LATTICE runs only`);
  const config = run.config as StoredRunConfig & { importedFrom?: { queriesPath?: string; instructionsPath?: string } };
  const rubric = (await requireRubric({ store, env: process.env } as never, run)) as LatticeRubric;
  const verdicts = await store.judgments(runId, run.rubricVersion);
  const agentFiles = Object.fromEntries(
    run.copilots.map((c) => {
      const file = (config.copilots.find((x) => x.name === c) as { path?: string } | undefined)?.path;
      return [c, file ? manifestAgentFile(file) : `./response/filtered_response_${c}.json`];
    }),
  );
  return toReferenceScores({
    rubric,
    queries: await store.snapshotQueries(run.snapshotId),
    copilots: run.copilots,
    responses: await store.responses(runId),
    judgments: consensusJudgments(verdicts, panelAggregate(config), panelMinJudges(config)),
    model: run.judge.model,
    queriesPath: config.importedFrom?.queriesPath ?? path.basename(config.queries),
    instructionsPath: config.importedFrom?.instructionsPath ?? `judgeflow LATTICE rubric ${run.rubricVersion}`,
    agentFiles,
  });
}

export const exportCommand: Command = {
  name: 'export',
  summary:
    "write a run's results in another tool's format (lattice-scores: the LATTICE reference's scores_*.json; cab-traces: agent traces for the CryptoAnalystBench reference)",
  usage: [
    'judgeflow export RUN_ID --format lattice-scores --out FILE',
    '',
    "  lattice-scores  the LATTICE reference harness's scores file, as its scoring/batch.py writes it and its",
    '                  scoring/build_benchmark.py reads it: per query qid, task_id, category (long form), query and',
    '                  per copilot dimensions {score, weighted_score, reason} (T16-1 for the refusal dimension) and',
    '                  total_score, or error for an answer that is missing or was not judged.',
    'judgeflow export RUN_ID --format cab-traces --out DIR',
    '',
    "  cab-traces      agent copilots' answers as the CryptoAnalystBench reference harness reads them:",
    '                  DIR/<copilot>/traces/<chat_id>.json (OpenInference spans: the final response span with the',
    "                  tool results as its input's last message, one TOOL span per tool call) and DIR/answers.csv",
    '                  (query, <copilot>_response, <copilot>_chat_id), which a csv copilot with traces: reads back.',
  ].join('\n'),
  options: { format: { type: 'string', short: 'f' }, out: { type: 'string', short: 'o' } },
  async run({ values, positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    const format = optionalString(values.format);
    if (!format || !(FORMATS as readonly string[]).includes(format))
      throw new InputError(
        `${format ? `unknown --format "${format}"` : 'missing --format'}; known: ${FORMATS.join(', ')}\nUsage: ${this.usage}`,
      );
    const out = optionalString(values.out);
    if (!out) throw new InputError(`missing --out FILE\nUsage: ${this.usage}`);
    const store = await requireExistingStore();
    if (format === 'cab-traces') {
      const written = await writeAgentTraces(store, runId, path.resolve(out));
      console.log(
        `Wrote ${written.files} trace files and ${path.join(out, 'answers.csv')} (${written.copilots.join(', ')})`,
      );
      return 0;
    }
    const scores = await latticeScoresOf(store, runId);
    writeTextAtomic(path.resolve(out), JSON.stringify(scores, null, 2) + '\n');
    console.log(
      `Wrote ${out}: ${scores.total_scored} queries × ${Object.keys(scores.summary).length} copilots (${Object.entries(
        scores.summary,
      )
        .map(([a, s]) => `${a} ${s.avg_score ?? '–'}`)
        .join(', ')})`,
    );
    return 0;
  },
};
