import type { ReportFiles, ReportInput } from '../../core/model/protocol';
import { mdCode, mdText, simulatedBanner, table } from '../../core/report/markdown';
import { lengthBias } from '../../core/stats/lengthBias';
import { intervalRequestsOf, type IntervalRequest } from '../../core/stats/intervalsAhead';
import { perQueryScores, separability } from '../../core/stats/separability';
import { INTERVAL_NOTE, intervalText, lengthBiasSection, separabilitySection } from '../../core/report/statsMarkdown';
import { summariseLattice } from './aggregate';
import { judgingRecord } from './joint';
import { cellText, fmt2, latticeTables, SCORE_BUCKETS } from './tables';
import type { LatticeRubric } from './rubric';
import { LATTICE_DIMENSIONS } from './rubric';

/**
 * The intervals buildLatticeReport asks meanCI for: the leaderboard's (summariseLattice) and the tables' (latticeTables),
 * recorded by running both as it does. Their answers (coverage) do not change what is asked, so none are passed.
 */
export function latticeReportIntervals(
  input: Pick<ReportInput, 'run' | 'queries' | 'judgments' | 'rubric' | 'seed'>,
): IntervalRequest[] {
  const rubric = (input.rubric as LatticeRubric).data;
  return intervalRequestsOf(() => {
    summariseLattice(rubric, input.queries, input.run.copilots, [], input.judgments, input.seed);
    latticeTables(rubric, input.queries, input.run.copilots, input.judgments, input.seed);
  });
}

export function buildLatticeReport(input: ReportInput): ReportFiles {
  const rubric = input.rubric as LatticeRubric;
  const { run, queries, responses, judgments } = input;
  const seed = input.seed;
  const copilots = summariseLattice(rubric.data, queries, run.copilots, responses, judgments, seed);
  const simulated = input.simulated;
  const names = Object.keys(copilots).sort((a, b) => (copilots[b].score ?? -1) - (copilots[a].score ?? -1));
  const inSnapshot = new Set(queries.map((q) => q.id));
  const separable = separability(
    perQueryScores(
      judgments.filter((j) => inSnapshot.has(j.queryId)),
      run.copilots,
    ),
    names,
    { seed },
  );
  const lengths = lengthBias(
    judgments.filter((j) => inSnapshot.has(j.queryId)),
    responses,
    run.copilots,
    'score (0–100)',
  );
  const tables = latticeTables(rubric.data, queries, run.copilots, judgments, seed);
  const json = {
    runId: run.runId,
    protocol: 'lattice',
    rubricVersion: rubric.version,
    snapshotId: run.snapshotId,
    sourceRunId: run.sourceRunId,
    simulated,
    judge: { ...run.judge, rubricVersion: rubric.version },
    queries: queries.length,
    judging: judgingRecord(input.options, input.plan, (run.config as { importedFrom?: unknown }).importedFrom),
    generatedAt: new Date().toISOString(),
    copilots,
    // The paper's Tables 5 and 6, the category table, and build_benchmark.py's buckets, spread and best copilot per query.
    ...tables,
    separability: separable,
    lengthBias: lengths,
  };

  const byKey = new Map(judgments.map((j) => [`${j.queryId}\u0000${j.copilot}`, j]));
  const dimIds = [...LATTICE_DIMENSIONS, rubric.data.refusal.id];
  const csv: unknown[][] = [
    [
      'run_id',
      'query_id',
      'copilot',
      'task',
      'category',
      ...dimIds,
      'total',
      'response_status',
      'judgment_status',
      'failure_reason',
    ],
  ];
  const responseOf = new Map(responses.map((r) => [`${r.queryId}\u0000${r.copilot}`, r]));
  for (const q of queries) {
    for (const copilot of run.copilots) {
      const r = responseOf.get(`${q.id}\u0000${copilot}`);
      const j = byKey.get(`${q.id}\u0000${copilot}`);
      const reason =
        r && r.status !== 'ok'
          ? `${r.status}: ${r.errorKind ?? ''} ${r.errorMessage ?? ''}`.trim()
          : j?.status === 'failed'
            ? j.error
            : !r
              ? 'not collected'
              : !j
                ? 'not judged'
                : '';
      csv.push([
        run.runId,
        q.id,
        copilot,
        q.task,
        q.category,
        ...dimIds.map((d) => j?.scores?.[d] ?? ''),
        j?.total ?? '',
        r?.status ?? 'none',
        j?.status ?? 'none',
        reason,
      ]);
    }
  }

  const dimName = (id: string) => [...rubric.data.dimensions, rubric.data.refusal].find((d) => d.id === id)!.name;
  const md = [
    `# LATTICE report — run ${run.runId}\n`,
    simulatedBanner(simulated),
    `Snapshot \`${run.snapshotId}\` (${queries.length} queries) · rubric version \`${rubric.version}\` · judge ${mdCode(run.judge.model)} at ${mdText(run.judge.baseURL)} (temperature ${run.judge.temperature})${run.sourceRunId ? ` · re-judged from run \`${run.sourceRunId}\`` : ''}\n`,
    `Judging: ${json.judging.description}.\n`,
    '## Overall (0–100)\n',
    table(
      ['rank', 'copilot', 'score', '95% CI', 'judged', 'no score'],
      names.map((n, i) => [
        i + 1,
        n,
        fmt2(copilots[n].score),
        intervalText(copilots[n].ci95, 2),
        copilots[n].n,
        copilots[n].failed,
      ]),
    ),
    '\n"no score" counts failed judgments and failed or missing responses; they are missing data, never scored as zero. ' +
      INTERVAL_NOTE +
      '\n',
    ...separabilitySection(separable),
    '## Table 5: dimensions (mean 0–10, 95% interval)\n',
    table(
      ['copilot', ...dimIds.map((d) => (dimName(d) === d ? d : `${d} ${dimName(d)}`))],
      names.map((n) => [n, ...dimIds.map((d) => cellText(tables.table5.copilots[n][d]))]),
    ),
    `\nD1–D6 over T1–T15; ${rubric.data.refusal.id} (the reference's T16-1) over T16 only.\n`,
    '## Table 6: tasks (mean 0–100, 95% interval)\n',
    table(
      ['task', 'queries', ...names],
      tables.table6.rows.map((r) => [`${r.task} ${r.name}`, r.queries, ...names.map((n) => cellText(r.copilots[n]))]),
    ),
    '\n## Categories (mean 0–100, 95% interval)\n',
    table(
      ['category', 'queries', ...names],
      tables.categoryTable.rows.map((r) => [
        `${r.category} ${r.name}`,
        r.queries,
        ...names.map((n) => cellText(r.copilots[n])),
      ]),
    ),
    '\n## Score buckets (responses per 0–100 band)\n',
    table(
      ['copilot', ...SCORE_BUCKETS],
      names.map((n) => [n, ...SCORE_BUCKETS.map((b) => tables.scoreBuckets[n][b])]),
    ),
    '\n## Spread (standard deviation of response totals)\n',
    table(
      ['copilot', 'mean', 'sd', 'n'],
      tables.spread.map((s) => [s.copilot, fmt2(s.mean), fmt2(s.sd), s.n]),
    ),
    '\nPopulation standard deviation (divides by n), lowest first, as the reference\'s build_benchmark.py "consistency".\n',
    '## Best copilot per query\n',
    table(
      ['copilot', 'queries won'],
      names.map((n) => [n, tables.bestPerQuery.wins[n]]),
    ),
    `\nThe highest total wins a query; ${tables.bestPerQuery.ties} ${tables.bestPerQuery.ties === 1 ? 'query was' : 'queries were'} tied, each given to the first tied copilot in name order, as the reference's code does (report.json \`bestPerQuery\` lists the others). Queries no copilot was scored on count for none.\n`,
    "Figures have two decimals, as the reference's build_benchmark.py rounds them; failed judgments and missing answers are left out (the reference's code expects every agent scored on every query).\n",
    '',
    ...lengthBiasSection(lengths),
  ].join('\n');
  return { json, markdown: md, csv, summary: Object.fromEntries(names.map((n) => [n, copilots[n].score])) };
}
