import type { ReportFiles, ReportInput } from '../../core/model/protocol';
import { fmt, mdCode, mdText, simulatedBanner, table } from '../../core/report/markdown';
import type { Query, StoredJudgment, StoredResponse } from '../../core/model/types';
import { INTERVAL_NOTE, intervalText, lengthBiasSection, separabilitySection } from '../../core/report/statsMarkdown';
import { summariseCab, type CabSummary } from './aggregate';
import { RANKING_RATIONALE, taxonomyKey } from './judge';
import { evaluationDateOf } from './options';
import { readCabPlan } from './plan';
import { tagsOf } from './queries';
import { CAB_DIMENSIONS, CAB_TAXONOMY, type CabRubric } from './rubric';
import { writeCabWorkbook, type ResultRow } from './xlsx';
import { errorClusters } from './clustering';
import { cabResponseScore } from './score';

export function buildCabReport(input: ReportInput): ReportFiles {
  const rubric = input.rubric as CabRubric;
  const { run, queries, responses, judgments } = input;
  const plan = readCabPlan(input.plan);
  const taxonomy = input.options.errorTaxonomy === true;
  const summary = summariseCab({
    queries,
    copilots: run.copilots,
    responses,
    judgments,
    verdicts: input.verdicts,
    plan,
    taxonomy,
    seed: input.seed,
    minScore: rubric.data.scale.min,
  });
  const clusters = errorClusters(rubric, queries, run.copilots, judgments);
  const simulated = input.simulated;
  const evaluationDate = evaluationDateOf(input.options, run);
  const json = {
    protocol: 'cab',
    runId: run.runId,
    rubricVersion: rubric.version,
    snapshotId: run.snapshotId,
    sourceRunId: run.sourceRunId,
    simulated,
    judge: { ...run.judge, rubricVersion: rubric.version },
    evaluationDate,
    seed: plan?.seed ?? null,
    queries: queries.length,
    generatedAt: new Date().toISOString(),
    ...summary,
    errorClusters: clusters,
    // `presentation` under its old name; kept for one release, then removed.
    schedule: summary.presentation,
  };
  const rows = resultRows(run.runId, queries, run.copilots, responses, judgments, taxonomy);
  const csvColumns = [
    'run_id',
    'query_id',
    'tags',
    'copilot',
    'position',
    'rank',
    ...CAB_DIMENSIONS,
    'score',
    'sum_of_scores',
    'response_status',
    'judgment_status',
    'failure_reason',
    ...(taxonomy ? CAB_TAXONOMY : []),
  ];
  const csv: unknown[][] = [csvColumns, ...rows.map((r) => csvColumns.map((c) => r[c] ?? ''))];
  const markdown = cabMarkdown(summary, { run, rubric, queries, simulated, evaluationDate, seed: plan?.seed ?? null });
  const copilotsByScore = Object.keys(summary.systems).sort(
    (a, b) => (summary.systems[b].score ?? -1) - (summary.systems[a].score ?? -1),
  );
  return {
    json,
    markdown,
    csv,
    summary: Object.fromEntries(copilotsByScore.map((s) => [s, summary.systems[s].score])),
    // `json` is read when the workbook is written, after the shared blocks (reliability, panel) were added to it.
    extra: [
      {
        name: 'report.xlsx',
        write: (file) =>
          writeCabWorkbook(file, {
            rows,
            summary,
            queries,
            judgments,
            copilots: run.copilots,
            taxonomy,
            report: json,
            rubric,
            clusters,
          }),
      },
    ],
  };
}

/** One row per query × copilot: the CSV and the workbook's "Evaluation Results" sheet. */
function resultRows(
  runId: string,
  queries: Query[],
  copilots: string[],
  responses: StoredResponse[],
  judgments: StoredJudgment[],
  taxonomy: boolean,
): ResultRow[] {
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const responseOf = new Map(responses.map((r) => [key(r.queryId, r.copilot), r]));
  const judgmentOf = new Map(judgments.map((j) => [key(j.queryId, j.copilot), j]));
  const rows: ResultRow[] = [];
  for (const q of queries) {
    for (const copilot of copilots) {
      const r = responseOf.get(key(q.id, copilot));
      const j = judgmentOf.get(key(q.id, copilot));
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
      const row: ResultRow = {
        run_id: runId,
        query_id: q.id,
        query: q.text,
        tags: tagsOf(q).join('; '),
        copilot,
        position: j?.position ?? null,
        rank: j?.rank ?? null,
        score: j ? cabResponseScore(j) : null,
        // The stored sum of the four scores, named as a sum.
        sum_of_scores: j?.status === 'ok' ? j.total : null,
        ranking_reasoning: j?.rationales?.[RANKING_RATIONALE] ?? null,
        response_status: r?.status ?? 'none',
        judgment_status: j?.status ?? 'none',
        failure_reason: reason,
      };
      for (const d of CAB_DIMENSIONS) {
        row[d] = j?.scores?.[d] ?? null;
        row[`${d}_reasoning`] = j?.rationales?.[d] ?? null;
      }
      if (taxonomy) for (const f of CAB_TAXONOMY) row[f] = j?.scores?.[taxonomyKey(f)] ?? null;
      rows.push(row);
    }
  }
  return rows;
}

const pText = (p: number | null) => (p === null ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3));
const pct = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);

function cabMarkdown(
  s: CabSummary,
  meta: {
    run: ReportInput['run'];
    rubric: CabRubric;
    queries: Query[];
    simulated: boolean;
    evaluationDate: string;
    seed: string | null;
  },
): string {
  const { run, rubric } = meta;
  const names = Object.keys(s.systems).sort((a, b) => (s.systems[b].score ?? -1) - (s.systems[a].score ?? -1));
  const dimName = (id: string) => rubric.data.dimensions.find((d) => d.id === id)?.name ?? id;
  const positions = s.positionBias.nByPosition.length;
  const ordinal = (k: number) => `#${k}`;
  const pb = s.positionBias;
  const lines = [
    `# CryptoAnalystBench report — run ${run.runId}\n`,
    simulatedBanner(meta.simulated),
    `Snapshot \`${run.snapshotId}\` (${meta.queries.length} queries) · rubric version \`${rubric.version}\` · judge ${mdCode(run.judge.model)} at ${mdText(run.judge.baseURL)} (temperature ${run.judge.temperature}) · evaluation date ${meta.evaluationDate} · presentation seed \`${meta.seed ?? '–'}\`${run.sourceRunId ? ` · re-judged from run \`${run.sourceRunId}\`` : ''}\n`,
    'Each query\'s responses were judged in one shared judge conversation, one per turn, labelled only "Response #k"; the judge then ranked them. The order is rotated by a balanced presentation design (below).\n',
    `## Overall (score = mean of the four dimension means, ${rubric.data.scale.min}–${rubric.data.scale.max}: the reference's "Avg Total")\n`,
    table(
      [
        'rank',
        'system',
        'score',
        '95% CI',
        ...CAB_DIMENSIONS.map(dimName),
        'mean rank',
        'normalised rank',
        `rank counts (${Array.from({ length: positions }, (_, k) => ordinal(k + 1)).join('/')})`,
        'scored',
        'no score',
      ],
      names.map((n, i) => {
        const x = s.systems[n];
        return [
          i + 1,
          n,
          fmt(x.score, 2),
          intervalText(x.ci95, 2),
          ...CAB_DIMENSIONS.map((d) => fmt(x.dimensions[d], 2)),
          fmt(x.meanRank, 2),
          fmt(x.normalisedRank, 3),
          x.rankCounts.join(' / '),
          x.n,
          x.failed,
        ];
      }),
    ),
    '\n"no score" counts failed judgments and failed or missing responses; they are missing data, never scored. Mean rank is over queries whose ranking succeeded' +
      (s.rankingFailures
        ? ` (${s.rankingFailures} ranking turn${s.rankingFailures === 1 ? '' : 's'} failed; those queries keep their scores but have no ranks).`
        : '.') +
      ' Normalised rank is (rank − 1)/(k − 1) for a query ranking k responses (0 = first, 1 = last): when queries rank different numbers of systems, raw mean rank favours a system that misses the large queries (a last place among 2 is rank 2, among 5 it is rank 5), the normalised rank does not. ' +
      INTERVAL_NOTE +
      '\n',
    ...referenceRulesSection(s, names, dimName),
    ...separabilitySection(s.separability, 2),
    '## Position bias\n',
    pb.significant
      ? `**The judge's verdicts depend on the order of presentation more than chance would explain** (rank-1 test p ${pText(pb.rank1Test.pValue)}, scores-by-position test p ${pText(pb.totalsTest.pValue)}; threshold ${pb.alpha / 2} each). Because every system was shown in every position equally often (within one), this effect is spread evenly over the systems instead of favouring one of them.\n`
      : `No order effect larger than chance (rank-1 test p ${pText(pb.rank1Test.pValue)}, scores-by-position test p ${pText(pb.totalsTest.pValue)}; threshold ${pb.alpha / 2} each).\n`,
    table(
      ['position', 'responses scored', 'mean score', 'ranked first', 'rank-1 rate', 'expected rank-1', 'mean rank'],
      pb.nByPosition.map((n, p) => [
        p + 1,
        n,
        fmt(pb.meanTotalByPosition[p], 2),
        pb.rank1CountsByPosition[p],
        pct(pb.rank1RateByPosition[p]),
        fmt(pb.rank1Test.expected[p], 1),
        fmt(pb.meanRankByPosition[p], 2),
      ]),
    ),
    `\nRank-1 by position: χ² = ${fmt(pb.rank1Test.statistic, 2)} (df ${pb.rank1Test.df}), p ${pText(pb.rank1Test.pValue)} (${pb.rank1Test.method}; ${pb.rank1Test.iterations} draws). ` +
      `Scores by position: F = ${fmt(pb.totalsTest.F, 2)} (df ${pb.totalsTest.dfBetween}, ${pb.totalsTest.dfWithin}), p ${pText(pb.totalsTest.pValue)} (${pb.totalsTest.method}).\n`,
    '## Presentation order\n',
    'How often each system was shown in each position. The presentation design is a Williams design: each system takes each position ⌊Q/N⌋ or ⌈Q/N⌉ times over the queries where all N systems answered, and each system directly follows each other system about equally often.\n',
    table(
      ['system', ...Array.from({ length: positions }, (_, p) => `position ${p + 1}`)],
      names.map((n) => [n, ...s.presentation[n]]),
    ),
    s.predecessorImbalance !== null
      ? `\nPredecessor imbalance (max − min of how often one system directly preceded another): ${s.predecessorImbalance}.\n`
      : '',
  ];
  const tags = Object.keys(s.tags).sort();
  if (tags.length) {
    lines.push(
      '## Tags (score, mean rank)\n',
      table(
        ['tag', ...names],
        tags.map((t) => [
          t,
          ...names.map((n) =>
            s.tags[t][n]
              ? `${fmt(s.tags[t][n].score, 2)} (${fmt(s.tags[t][n].meanRank, 2)}) n=${s.tags[t][n].n}`
              : null,
          ),
        ]),
      ),
      '',
    );
  }
  lines.push(...lengthBiasSection(s.lengthBias));
  if (s.taxonomy) {
    lines.push(
      '## Error taxonomy (share of responses with the problem)\n',
      table(
        ['system', 'checked', ...rubric.data.taxonomy.map((f) => f.name)],
        names.map((n) => [
          n,
          s.systems[n].taxonomy!.n,
          ...rubric.data.taxonomy.map((f) => pct(s.systems[n].taxonomy!.rates[f.id] ?? null)),
        ]),
      ),
      '',
    );
  }
  return lines.join('\n');
}

/** The reference's figures beside judgeflow's, when a failure makes them differ (failures as 1, flags as 1, rank N, ranking by total). */
function referenceRulesSection(s: CabSummary, names: string[], dimName: (id: string) => string): string[] {
  const r = s.referenceRules;
  const { scores, ranks, flags } = r.differ;
  if (!scores && !ranks && !flags)
    return [
      "The reference harness's rules for failures would change nothing here: every response was collected and scored, every ranking succeeded" +
        (s.taxonomy ? ' and every error check answered.\n' : '.\n'),
    ];
  return [
    "## Under the reference's rules for failures\n",
    `judgeflow counts a failure as missing data. The reference harness (script.py, run_error_taxonomy.py) fills it in: a missing or unscored response scores 1 on every dimension, a failed error check sets every flag, a copilot missing from a ranking is ranked last (N), and a query whose ranking failed is ranked by the sum of its scores. On the same verdicts that changes ${scores} of ${r.items} scores, ${ranks} ranks${s.taxonomy ? ` and ${flags} error checks` : ''} (${r.rankedByTotal} queries ranked by total). A reference run of the same answers would report:\n`,
    table(
      [
        'system',
        'score (judgeflow)',
        'score (reference rules)',
        ...CAB_DIMENSIONS.map((d) => `${dimName(d)} (reference rules)`),
        'mean rank (judgeflow)',
        'mean rank (reference rules)',
        'wins (reference rules)',
      ],
      names.map((n) => {
        const x = r.systems[n];
        return [
          n,
          fmt(s.systems[n].score, 2),
          fmt(x.score, 2),
          ...CAB_DIMENSIONS.map((d) => fmt(x.dimensions[d], 2)),
          fmt(s.systems[n].meanRank, 2),
          fmt(x.meanRank, 2),
          x.wins,
        ];
      }),
    ),
    '',
  ];
}
