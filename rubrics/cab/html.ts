import type { ReportHtml } from '../../core/model/protocol';
import type { AgentFigures } from '../../core/report/agentReport';
import { columnChart, heatmap, intervalChart, stackedBars } from '../../core/report/html/charts';
import { dataTable, esc, num } from '../../core/report/html/page';
import {
  drillData,
  runHeader,
  runReportPage,
  type HtmlReportInput,
  type ReportArtefact,
} from '../../core/report/html/runReport';
import { judgingSections } from '../../core/report/judgingReport';
import { separabilityTiers } from '../../core/report/html/tiers';
import type { CostSummary } from '../../core/stats/cost';
import { meanCI } from '../../core/stats/stats';
import type { CabSummary } from './aggregate';
import { tagsOf } from './queries';
import { CAB_DIMENSIONS, type CabRubric } from './rubric';
import { CLUSTER_HEADER, clusterRows, type ErrorCluster } from './clustering';
import { cabResponseScore, withResponseScores } from './score';

const pText = (p: number | null | undefined) =>
  p === null || p === undefined ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3);

/** CryptoAnalystBench report.html: totals with intervals, rank distributions, tags, position bias and presentation balance, taxonomy, drill-down. */
export function buildCabHtml(input: HtmlReportInput): ReportHtml {
  const rubric = input.rubric as CabRubric;
  const s = input.report as unknown as CabSummary & {
    evaluationDate?: string;
    seed?: string | null;
    errorClusters?: ErrorCluster[];
  };
  const names = Object.keys(s.systems).sort((a, b) => (s.systems[b].score ?? -1) - (s.systems[a].score ?? -1));
  const tiers = separabilityTiers(input.report);
  const min = rubric.data.scale.min;
  const max = rubric.data.scale.max;
  // Intervals come from report.json; a report made before they existed gets them computed here from the stored scores.
  const intervalOf = (n: string) =>
    s.systems[n].ci95 ??
    meanCI(
      input.judgments.filter((j) => j.copilot === n && cabResponseScore(j) !== null).map((j) => cabResponseScore(j)!),
      { seed: `${String(input.options.seed ?? 'judgeflow')}:${n}` },
    );
  const totals = intervalChart({
    id: 'chart-totals',
    title: `Score (${min}–${max}: mean of the four dimension means, the reference's "Avg Total") with 95% intervals (Student t below 100 queries, BCa bootstrap from 100)`,
    items: names.map((n) => {
      const ci = intervalOf(n);
      return {
        label: n,
        value: s.systems[n].score,
        low: ci?.low ?? null,
        high: ci?.high ?? null,
        note: tiers?.[n] ? `tier ${tiers[n]}` : undefined,
      };
    }),
    domain: [min, max],
    digits: 2,
    valueName: 'score',
  });
  const dimName = (id: string) => rubric.data.dimensions.find((d) => d.id === id)?.name ?? id;
  const dimensions = heatmap({
    id: 'chart-cab-dimensions',
    title: `Mean score per dimension (${rubric.data.scale.min}–${rubric.data.scale.max})`,
    rowHeader: 'system',
    rows: names,
    cols: CAB_DIMENSIONS.map(dimName),
    values: names.map((n) => CAB_DIMENSIONS.map((d) => s.systems[n].dimensions[d] ?? null)),
    domain: [rubric.data.scale.min, rubric.data.scale.max],
    digits: 2,
  });
  const positions = Math.max(...names.map((n) => s.systems[n].rankCounts.length), 0);
  const ranks = stackedBars({
    id: 'chart-ranks',
    title: 'How often each system was ranked 1st, 2nd, … (queries whose ranking succeeded)',
    rows: names.map((n) => ({
      label: n,
      parts: Array.from({ length: positions }, (_, k) => s.systems[n].rankCounts[k] ?? 0),
    })),
    partNames: Array.from({ length: positions }, (_, k) => `rank ${k + 1}`),
  });
  const tagNames = Object.keys(s.tags).sort();
  const tags = tagNames.length
    ? heatmap({
        id: 'chart-tags',
        title: 'Mean score by tag (n in brackets)',
        rowHeader: 'tag',
        rows: tagNames,
        cols: names,
        values: tagNames.map((t) => names.map((n) => s.tags[t][n]?.score ?? null)),
        domain: [min, max],
        digits: 2,
        cellNote: (r, c) => (s.tags[tagNames[r]][names[c]] ? ` (${s.tags[tagNames[r]][names[c]].n})` : ''),
      })
    : '<p>No query carries tags.</p>';

  const pb = s.positionBias;
  const labels = pb.nByPosition.map((_, p) => `#${p + 1}`);
  const verdict = pb.significant
    ? `<p class="verdict significant" id="position-verdict"><strong>Order matters more than chance would explain</strong> (rank-1 test p ${esc(pText(pb.rank1Test.pValue))}, scores-by-position test p ${esc(pText(pb.totalsTest.pValue))}; threshold ${pb.alpha / 2} each). The balanced presentation design spreads this effect evenly over the systems.</p>`
    : `<p class="verdict" id="position-verdict">No order effect larger than chance (rank-1 test p ${esc(pText(pb.rank1Test.pValue))}, scores-by-position test p ${esc(pText(pb.totalsTest.pValue))}; threshold ${pb.alpha / 2} each).</p>`;
  const expectedRate = pb.rank1Test.expected.map((e, p) =>
    pb.nByPosition[p] ? e / Math.max(1, rankedAt(pb, p)) : null,
  );
  const bias =
    verdict +
    `<div class="pair">${columnChart({ id: 'chart-position-total', title: 'Mean score by position shown', labels, values: pb.meanTotalByPosition, domain: [min, max], valueName: 'mean score' })}${columnChart(
      {
        id: 'chart-position-rank1',
        title: 'Rank-1 rate by position shown',
        labels,
        values: pb.rank1RateByPosition,
        reference: expectedRate,
        referenceName: 'expected by chance',
        domain: [0, 1],
        valueName: 'rank-1 rate',
      },
    )}</div>` +
    `<p class="note">Rank-1 by position: χ² = ${num(pb.rank1Test.statistic, 2)} (df ${pb.rank1Test.df}), p ${esc(pText(pb.rank1Test.pValue))}. Scores by position (one-way ANOVA): F = ${num(pb.totalsTest.F, 2)} (df ${pb.totalsTest.dfBetween}, ${pb.totalsTest.dfWithin}), p ${esc(pText(pb.totalsTest.pValue))}.</p>`;
  const balance =
    heatmap({
      id: 'chart-presentation',
      title: 'Presentation-order balance: times each system was shown in each position',
      rowHeader: 'system',
      rows: names,
      cols: labels,
      values: names.map((n) => (s.presentation[n] ?? []).map((x) => x)),
      domain: [0, Math.max(1, ...names.flatMap((n) => s.presentation[n] ?? []))],
      digits: 0,
    }) +
    (s.predecessorImbalance !== null
      ? `<p class="note">Predecessor imbalance (max − min of how often one system directly preceded another): ${s.predecessorImbalance}.</p>`
      : '');
  const taxonomy = s.taxonomy
    ? heatmap({
        id: 'chart-taxonomy',
        title: 'Error taxonomy: share of checked responses with each problem (%)',
        rowHeader: 'system',
        rows: names,
        cols: rubric.data.taxonomy.map((f) => f.name),
        values: names.map((n) =>
          rubric.data.taxonomy.map((f) =>
            (s.systems[n].taxonomy?.rates[f.id] ?? null) === null ? null : 100 * s.systems[n].taxonomy!.rates[f.id]!,
          ),
        ),
        domain: [0, 100],
        digits: 1,
      })
    : '';
  const coverage = dataTable(
    'Coverage and mean rank',
    ['system', 'scored', 'no score', 'mean rank'],
    names.map((n) => [n, s.systems[n].n, s.systems[n].failed, num(s.systems[n].meanRank, 2)]),
  );
  return runReportPage({
    title: `CryptoAnalystBench report ${input.run.runId}`,
    header: runHeader(input, 'CryptoAnalystBench report', [
      ['evaluation date', s.evaluationDate ?? null],
      ['presentation seed', s.seed ?? null],
    ]),
    sections: [
      ['totals', 'Scores', totals + coverage + dimensions + referenceRulesHtml(s, names)],
      ['ranks', 'Rank distribution', ranks],
      ['tags', 'Tags × systems', tags],
      ['position-bias', 'Position bias', bias],
      ['presentation', 'Presentation order', balance],
      ['taxonomy', 'Error taxonomy', taxonomy],
      [
        'error-clustering',
        'Error clustering (scores ≤ 8 by flag)',
        !s.errorClusters
          ? '<p>This report was made before error clustering existed; run judgeflow report again to add it.</p>'
          : s.errorClusters.length
            ? dataTable(
                'Responses scoring 8 or less on a dimension, grouped by the error flags set on them',
                CLUSTER_HEADER,
                clusterRows(rubric, s.errorClusters),
                'id="error-clustering"',
              )
            : '<p>No response scored 8 or less on any dimension.</p>',
      ],
    ],
    judging: judgingSections(input.report, input.studies),
    cost: input.report.cost as CostSummary | undefined,
    artefacts: input.report.artefacts as ReportArtefact[] | undefined,
    agents: input.report.agents as AgentFigures | undefined,
    drill: drillData(
      { ...input, judgments: withResponseScores(input.judgments) },
      {
        // The ranking's rationale (and taxonomy flags) show in the detail with the other rationales; they are not score columns.
        dimensions: rubric.data.dimensions.map((d) => ({ id: d.id, name: d.name })),
        labelName: 'tag',
        labelsOf: (q) => tagsOf(q),
      },
    ),
  });
}

/** Ranked queries that had a position p+1: rank-1 count / rate gives it back. */
function rankedAt(pb: CabSummary['positionBias'], p: number): number {
  const rate = pb.rank1RateByPosition[p];
  return rate ? pb.rank1CountsByPosition[p] / rate : pb.nByPosition[p];
}

/** judgeflow's figures beside the reference's rules for failures, when any failure makes them differ. */
function referenceRulesHtml(s: CabSummary, names: string[]): string {
  const r = s.referenceRules;
  if (!r || !(r.differ.scores || r.differ.ranks || r.differ.flags)) return '';
  const note = `<p class="note" id="reference-rules-note">Failures are missing data here. Under the reference harness's rules (a failure scores 1 on every dimension, a failed error check sets every flag, an unranked copilot is ranked N, a failed ranking falls back to ranking by total) ${r.differ.scores} of ${r.items} scores, ${r.differ.ranks} ranks and ${r.differ.flags} error checks would differ; ${r.rankedByTotal} queries would be ranked by total.</p>`;
  return (
    note +
    dataTable(
      "Under the reference's rules for failures",
      [
        'system',
        'score (judgeflow)',
        'score (reference rules)',
        'mean rank (judgeflow)',
        'mean rank (reference rules)',
        'wins (reference rules)',
      ],
      names.map((n) => [
        n,
        num(s.systems[n].score, 2),
        num(r.systems[n]?.score ?? null, 2),
        num(s.systems[n].meanRank, 2),
        num(r.systems[n]?.meanRank ?? null, 2),
        r.systems[n]?.wins ?? null,
      ]),
      'id="reference-rules"',
    )
  );
}
