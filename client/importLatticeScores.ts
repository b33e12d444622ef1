import fs from 'node:fs';
import path from 'node:path';
import { contentHash } from '../core/model/hashing';
import { InputError } from '../core/model/inputError';
import { readText } from '../core/io/dataFiles';
import { snapshotIdOf } from '../core/snapshots/snapshots';
import type { ResultsStore } from '../core/model/store';
import type { StoredJudgment, StoredResponse } from '../core/model/types';
import { renderReport } from '../services/runReport';
import { discoverAnswerFiles, findAnswer, loadAnswers } from '../activities/adapters/file';
import { latticeProtocol } from '../rubrics/lattice';
import { parseLatticeQueries } from '../rubrics/lattice/queries';
import type { LatticeRubric } from '../rubrics/lattice/rubric';
import { fromReferenceScores } from '../rubrics/lattice/scoresFile';
import { parseRunConfig } from './config';

/** Stands for the reference harness's judge in the run record: it was not called by judgeflow and has no endpoint here. */
const REFERENCE_JUDGE_URL = 'http://reference-harness.invalid/v1';

export interface ImportedRun {
  runId: string;
  reportPath: string;
  queries: number;
  copilots: string[];
  verdicts: number;
  errors: number;
}

/**
 * A reference scores file as a stored, completed LATTICE run: its queries (from the query file, whose text the
 * scores file matches), one copilot per agent of its summary, one verdict per agent and query (the reference's errors
 * as failed verdicts: missing data, never a score). The run id follows from the two files, so importing again finds it.
 */
export async function importLatticeScores(
  store: ResultsStore,
  args: { file: string; queriesFile: string; output: string; answersDir?: string; prefix?: string; rubricDir?: string },
): Promise<ImportedRun> {
  const rubric = latticeProtocol.loadRubric(args.rubricDir ?? latticeProtocol.defaultRubricDir) as LatticeRubric;
  const queries = parseLatticeQueries(args.queriesFile, { rubric, warn: (m) => console.error(m) });
  const text = readText(args.file, 'scores file');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${args.file}: the scores file is not valid JSON (${(error as Error).message}); expected the LATTICE reference's scores_*.json`,
    );
  }
  const scores = fromReferenceScores(value, args.file, rubric, queries);
  const answerFiles = args.answersDir
    ? new Map(discoverAnswerFiles(args.answersDir, args.prefix ?? 'filtered_response_').map((f) => [f.name, f.path]))
    : new Map<string, string>();
  const runId = `lattice-import-${contentHash(`${text}\u0000${readText(args.queriesFile, 'query file')}\u0000${rubric.version}`, 12)}`;
  if (await store.getRun(runId)) {
    const run = (await store.getRun(runId))!;
    return {
      runId,
      reportPath: run.reportPath ?? '',
      queries: queries.length,
      copilots: run.copilots,
      verdicts: 0,
      errors: 0,
    };
  }
  const scoresDir = path.dirname(path.resolve(args.file));
  const config = {
    ...parseRunConfig(
      {
        protocol: 'lattice',
        queries: path.resolve(args.queriesFile),
        judge: { baseURL: REFERENCE_JUDGE_URL, model: scores.model },
        copilots: scores.agents.map((name) => ({
          name,
          type: 'file',
          path:
            answerFiles.get(name) ??
            path.resolve(scoresDir, scores.agentFiles[name] ?? `filtered_response_${name}.json`),
        })),
        output: path.resolve(args.output),
        lattice: { judging: 'joint' },
      },
      args.file,
      process.cwd(),
    ),
    importedFrom: {
      format: 'lattice-scores',
      file: path.resolve(args.file),
      queriesPath: path.basename(args.queriesFile),
      model: scores.model,
    },
  };
  const snapshotId = snapshotIdOf(queries);
  const now = new Date().toISOString();
  await store.putSnapshot(
    {
      snapshotId,
      createdAt: now,
      parentId: null,
      meta: {
        generator: 'import',
        protocol: 'lattice',
        source: path.resolve(args.queriesFile),
        sourceHash: contentHash(fs.readFileSync(args.queriesFile, 'utf8')),
      },
    },
    queries,
  );
  await store.putRubric(rubric.version, 'lattice', rubric.content);
  await store.createRun({
    runId,
    protocol: 'lattice',
    snapshotId,
    rubricVersion: rubric.version,
    judge: { model: scores.model, baseURL: REFERENCE_JUDGE_URL, temperature: null },
    copilots: scores.agents,
    startedAt: now,
    sourceRunId: null,
    config,
  });
  const verdictOf = new Map(scores.verdicts.map((v) => [`${v.queryId}\u0000${v.copilot}`, v]));
  const judge = { model: scores.model, baseURL: REFERENCE_JUDGE_URL, temperature: null, rubricVersion: rubric.version };
  let errors = 0;
  const judgments: StoredJudgment[] = [];
  for (const query of queries)
    for (const copilot of scores.agents) {
      const v = verdictOf.get(`${query.id}\u0000${copilot}`);
      const answerFile = answerFiles.get(copilot);
      let answerText = '';
      if (answerFile)
        try {
          answerText = findAnswer(loadAnswers(answerFile), query, answerFile).text;
        } catch {
          // the text is a courtesy for report.html; the verdict is what the scores file says
        }
      const missing = !v || ('error' in v && /missing answer|empty answer/i.test(v.error));
      const response: StoredResponse = {
        runId,
        queryId: query.id,
        copilot,
        status: missing ? 'missing' : 'ok',
        text: missing ? null : answerText,
        raw: null,
        html: null,
        adapter: 'file',
        startedAt: null,
        finishedAt: null,
        latencyMs: null,
        errorKind: missing ? 'missing' : null,
        errorMessage: missing
          ? v && 'error' in v
            ? v.error
            : `${args.file} has no entry for this query and agent`
          : null,
        conversationId: null,
        context: null,
      };
      await store.putResponse(response);
      if (missing) {
        errors++;
        continue;
      }
      const base = {
        runId,
        queryId: query.id,
        copilot,
        rubricVersion: rubric.version,
        rank: null,
        position: null,
        judge,
        attempts: 1,
        createdAt: now,
        sample: 0,
        judgeName: '',
      };
      if ('error' in v) {
        errors++;
        judgments.push({ ...base, status: 'failed', scores: null, rationales: null, total: null, error: v.error });
      } else
        judgments.push({
          ...base,
          status: 'ok',
          scores: v.scores,
          rationales: v.rationales,
          total: v.total,
          error: null,
        });
    }
  await store.putJudgments(judgments);
  const { reportPath, summary } = await renderReport({ store, env: process.env } as never, runId);
  await store.finishRun(runId, 'completed', reportPath, summary, new Date().toISOString());
  return { runId, reportPath, queries: queries.length, copilots: scores.agents, verdicts: judgments.length, errors };
}
