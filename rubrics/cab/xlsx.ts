import { mean, quantileSorted as quantile } from '../../core/stats/stats';
import { sheet } from '../../core/report/xlsx';
import { judgingSheets } from '../../core/report/judgingReport';
import type { Query, StoredJudgment } from '../../core/model/types';
import type { CabSummary } from './aggregate';
import { tagsOf } from './queries';
import { CAB_DIMENSIONS, CAB_TAXONOMY, type CabRubric } from './rubric';
import { CLUSTER_HEADER, clusterRows, type ErrorCluster } from './clustering';
import { cabResponseScore } from './score';

const METRIC_NAMES: Record<string, string> = {
  temporal_relevance: 'Temporal Relevance',
  data_consistency: 'Data Consistency',
  depth: 'Depth',
  relevance: 'Relevance',
  score: 'Score (mean of the four)',
};

/** One row of the results CSV and of the workbook's "Evaluation Results" sheet (rubrics/cab/report.ts builds them). */
export type ResultRow = Record<string, string | number | null>;

/** Mean, population std/variance (numpy's default), min, max, median, quartiles and count. */
export function describe(xs: number[]) {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const m = mean(xs);
  const variance = mean(xs.map((x) => (x - m) ** 2));
  return {
    mean: m,
    std: Math.sqrt(variance),
    variance,
    min: sorted[0],
    max: sorted[sorted.length - 1],
    median: quantile(sorted, 0.5),
    q25: quantile(sorted, 0.25),
    q75: quantile(sorted, 0.75),
    count: xs.length,
  };
}

/**
 * The workbook the CryptoAnalystBench reference harness writes (Evaluation Results, Per-Model Statistics,
 * Tag-wise Rankings), plus Position Bias, Summary (intervals with n, normalised rank), Separability, Length Bias and
 * Presentation Order sheets.
 */
export async function writeCabWorkbook(
  file: string,
  input: {
    rows: ResultRow[];
    summary: CabSummary;
    queries: Query[];
    judgments: StoredJudgment[];
    copilots: string[];
    taxonomy: boolean;
    report?: Record<string, unknown>;
    rubric: CabRubric;
    clusters: ErrorCluster[];
  },
): Promise<void> {
  const { rows, summary, copilots } = input;
  // exceljs is large: loaded only when a workbook is written.
  const wb = new (require('exceljs') as typeof import('exceljs')).Workbook();
  const positions = summary.positionBias.nByPosition.length;

  const resultColumns = [
    'query_id',
    'query',
    'tags',
    'copilot',
    'position',
    'rank',
    ...CAB_DIMENSIONS.flatMap((d) => [d, `${d}_reasoning`]),
    'score',
    'sum_of_scores',
    'ranking_reasoning',
    'response_status',
    'judgment_status',
    'failure_reason',
    ...(input.taxonomy ? CAB_TAXONOMY : []),
  ];
  sheet(
    wb,
    'Evaluation Results',
    resultColumns,
    rows.map((r) => resultColumns.map((c) => r[c] ?? null)),
  );

  const ok = input.judgments.filter((j) => j.status === 'ok');
  const statsRows: unknown[][] = [];
  for (const copilot of copilots) {
    const mine = ok.filter((j) => j.copilot === copilot);
    for (const metric of [...CAB_DIMENSIONS, 'score']) {
      const d = describe(mine.map((j) => (metric === 'score' ? cabResponseScore(j)! : j.scores![metric])));
      statsRows.push([
        copilot,
        METRIC_NAMES[metric],
        d?.mean ?? null,
        d?.std ?? null,
        d?.variance ?? null,
        d?.min ?? null,
        d?.max ?? null,
        d?.median ?? null,
        d?.q25 ?? null,
        d?.q75 ?? null,
        d?.count ?? 0,
      ]);
    }
  }
  sheet(
    wb,
    'Per-Model Statistics',
    ['Model', 'Metric', 'Mean', 'Std', 'Variance', 'Min', 'Max', 'Median', 'Q25', 'Q75', 'Count'],
    statsRows,
  );

  const byQuery = new Map(input.queries.map((q) => [q.id, q]));
  const tagRows: unknown[][] = [];
  for (const tag of Object.keys(summary.tags).sort()) {
    const inTag = input.judgments.filter(
      (j) => byQuery.has(j.queryId) && tagsOf(byQuery.get(j.queryId)!).includes(tag),
    );
    const models = copilots.filter((c) => inTag.some((j) => j.copilot === c));
    const perModel = models.map((model) => {
      const mine = inTag.filter((j) => j.copilot === model);
      const mineOk = mine.filter((j) => j.status === 'ok');
      const ranks = mine.filter((j) => j.rank !== null).map((j) => j.rank!);
      const avg = (xs: number[]) => (xs.length ? mean(xs) : null);
      return [
        tag,
        model,
        avg(ranks),
        ...Array.from({ length: positions }, (_, k) => ranks.filter((r) => r === k + 1).length),
        ...['temporal_relevance', 'data_consistency', 'depth', 'relevance'].map((d) =>
          avg(mineOk.map((j) => j.scores![d])),
        ),
        avg(mineOk.map((j) => cabResponseScore(j)!)),
        mine.length,
      ];
    });
    // Reference order: by tag, then best (lowest) average rank first.
    perModel.sort((a, b) => ((a[2] as number | null) ?? Infinity) - ((b[2] as number | null) ?? Infinity));
    tagRows.push(...perModel);
  }
  sheet(
    wb,
    'Tag-wise Rankings',
    [
      'tag',
      'model',
      'avg_rank',
      ...Array.from({ length: positions }, (_, k) => `rank_${k + 1}_count`),
      'avg_temporal_relevance',
      'avg_data_consistency',
      'avg_depth',
      'avg_relevance',
      'avg_score',
      'total_queries',
    ],
    tagRows,
  );

  const pb = summary.positionBias;
  sheet(
    wb,
    'Position Bias',
    ['position', 'responses_scored', 'mean_score', 'rank_1_count', 'rank_1_rate', 'expected_rank_1', 'mean_rank'],
    pb.nByPosition.map((n, p) => [
      p + 1,
      n,
      pb.meanTotalByPosition[p],
      pb.rank1CountsByPosition[p],
      pb.rank1RateByPosition[p],
      pb.rank1Test.expected[p],
      pb.meanRankByPosition[p],
    ]),
  );
  const tests = wb.getWorksheet('Position Bias')!;
  tests.addRow([]);
  tests.addRow([
    'rank-1 chi-square',
    pb.rank1Test.statistic,
    'df',
    pb.rank1Test.df,
    'p',
    pb.rank1Test.pValue,
    pb.rank1Test.method,
  ]);
  tests.addRow([
    'scores F (blocked on query and system)',
    pb.totalsTest.F,
    'df',
    `${pb.totalsTest.dfBetween}, ${pb.totalsTest.dfWithin}`,
    'p',
    pb.totalsTest.pValue,
    pb.totalsTest.method,
  ]);
  tests.addRow(['significant (each p < alpha/2)', pb.significant ? 'yes' : 'no', 'alpha', pb.alpha]);

  sheet(
    wb,
    'Summary',
    [
      'system',
      'score',
      'sum_of_dimension_means',
      'ci95_low',
      'ci95_high',
      'ci95_n',
      'ci95_method',
      'mean_rank',
      'normalised_rank',
      'scored',
      'no_score',
    ],
    copilots.map((c) => {
      const x = summary.systems[c];
      return [
        c,
        x.score,
        x.sumOfDimensionMeans,
        x.ci95?.low ?? null,
        x.ci95?.high ?? null,
        x.ci95?.n ?? null,
        x.ci95?.method ?? null,
        x.meanRank,
        x.normalisedRank,
        x.n,
        x.failed,
      ];
    }),
  );

  const sep = summary.separability;
  sheet(
    wb,
    'Separability',
    ['copilot_a', 'copilot_b', 'shared_queries', 'mean_a_minus_b', 'p', 'p_holm', 'separable'],
    sep.pairs.map((p) => [p.a, p.b, p.n, p.meanDiff, p.pValue, p.pAdjusted, p.significant ? 'yes' : 'no']),
  );
  const sepSheet = wb.getWorksheet('Separability')!;
  sepSheet.addRow([]);
  sep.tiers.forEach((t, i) => sepSheet.addRow([`tier ${i + 1}`, t.join(', ')]));
  sepSheet.addRow(['alpha', sep.alpha]);
  sepSheet.addRow(['method', sep.method]);

  const lb = summary.lengthBias;
  sheet(
    wb,
    'Length Bias',
    ['scope', 'responses', 'mean_words', 'pearson_r', 'spearman_rho'],
    [
      ['judge (all copilots)', lb.judge.n, null, lb.judge.pearson, lb.judge.spearman],
      ...Object.entries(lb.copilots).map(([c, x]) => [c, x.n, x.meanWords, x.pearson, x.spearman]),
    ],
  );
  wb.getWorksheet('Length Bias')!.addRow(['judge, within query', null, null, lb.judge.withinQuery, null]);

  sheet(
    wb,
    'Presentation Order',
    ['system', ...Array.from({ length: positions }, (_, p) => `position_${p + 1}`)],
    copilots.map((c) => [c, ...summary.presentation[c]]),
  );

  // The reference's 'Error Analysis - Per Model' sheet: low scores (≤ 8) per dimension, grouped here by error flag.
  sheet(wb, 'Error Clustering', CLUSTER_HEADER, clusterRows(input.rubric, input.clusters));

  const ref = summary.referenceRules;
  sheet(
    wb,
    'Reference Rules',
    [
      'system',
      'score_judgeflow',
      'score_reference_rules',
      ...CAB_DIMENSIONS.map((d) => `${d}_reference_rules`),
      'mean_rank_judgeflow',
      'mean_rank_reference_rules',
      'wins_reference_rules',
      ...(input.taxonomy ? CAB_TAXONOMY.map((f) => `${f}_reference_rules`) : []),
    ],
    copilots.map((c) => {
      const x = ref.systems[c];
      return [
        c,
        summary.systems[c].score,
        x.score,
        ...CAB_DIMENSIONS.map((d) => x.dimensions[d]),
        summary.systems[c].meanRank,
        x.meanRank,
        x.wins,
        ...(input.taxonomy ? CAB_TAXONOMY.map((f) => x.taxonomy?.[f] ?? null) : []),
      ];
    }),
  );
  const refSheet = wb.getWorksheet('Reference Rules')!;
  refSheet.addRow([]);
  refSheet.addRow([
    'items (queries × copilots)',
    ref.items,
    'scores filled in as 1',
    ref.differ.scores,
    'ranks changed',
    ref.differ.ranks,
    'error checks filled in as 1',
    ref.differ.flags,
    'queries ranked by total',
    ref.rankedByTotal,
  ]);

  if (input.report) judgingSheets(wb, input.report);
  await wb.xlsx.writeFile(file);
}
