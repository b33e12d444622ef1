import type { ReportHtml } from '../../core/model/protocol';
import type { AgentFigures } from '../../core/report/agentReport';
import { groupedBars, heatmap, intervalChart, stackedBars } from '../../core/report/html/charts';
import { dataTable } from '../../core/report/html/page';
import { cellText, fmt2, SCORE_BUCKETS, type LatticeTables } from './tables';
import { separabilityTiers } from '../../core/report/html/tiers';
import {
  drillData,
  failureTable,
  runHeader,
  runReportPage,
  type HtmlReportInput,
  type ReportArtefact,
} from '../../core/report/html/runReport';
import { judgingSections } from '../../core/report/judgingReport';
import type { CostSummary } from '../../core/stats/cost';
import type { LatticeCopilotSummary } from './aggregate';
import type { LatticeRubric } from './rubric';
import { LATTICE_CATEGORIES, LATTICE_DIMENSIONS, LATTICE_TASKS } from './rubric';

/** LATTICE report.html: leaderboard with intervals (and tiers), dimension profiles, task and category heatmaps, failures, drill-down. */
export function buildLatticeHtml(input: HtmlReportInput): ReportHtml {
  const rubric = input.rubric as LatticeRubric;
  const copilots = input.report.copilots as Record<string, LatticeCopilotSummary>;
  const names = Object.keys(copilots).sort((a, b) => (copilots[b].score ?? -1) - (copilots[a].score ?? -1));
  const tiers = separabilityTiers(input.report);
  const dims = [...rubric.data.dimensions, rubric.data.refusal].map((d) => ({ id: d.id, name: d.name }));
  const dimIds = [...LATTICE_DIMENSIONS, rubric.data.refusal.id];
  const taskName = (t: string) => `${t} ${rubric.data.tasks.find((x) => x.id === t)?.name ?? ''}`.trim();
  const categoryName = (c: string) => `${c} ${rubric.data.categories.find((x) => x.id === c)?.name ?? ''}`.trim();

  const leaderboard = intervalChart({
    id: 'chart-leaderboard',
    title: 'Overall score (0–100) with 95% intervals (Student t below 100 queries, BCa bootstrap from 100)',
    items: names.map((n) => ({
      label: n,
      value: copilots[n].score,
      low: copilots[n].ci95?.low ?? null,
      high: copilots[n].ci95?.high ?? null,
      note: tiers?.[n] ? `tier ${tiers[n]}` : undefined,
    })),
    domain: [0, 100],
    valueName: 'score',
  });
  const tierNote = tiers
    ? '<p class="note">Tiers group copilots whose scores the separability analysis cannot tell apart.</p>'
    : '<p class="note">Overlapping intervals mean the ranking between those copilots is not settled by this many queries.</p>';
  const profile = groupedBars({
    id: 'chart-dimensions',
    title: 'Dimension profile (mean 0–10 per dimension; Refusal over T16 only)',
    groups: dimIds,
    groupNames: dimIds.map((d) => {
      const name = dims.find((x) => x.id === d)?.name ?? '';
      return name && name !== d ? `${d} ${name}` : d;
    }),
    series: names,
    values: dimIds.map((d) => names.map((n) => copilots[n].dimensions[d] ?? null)),
    domain: [rubric.data.scale.min, rubric.data.scale.max],
  });
  const tasks = heatmap({
    id: 'chart-tasks',
    title: 'Score by task type (0–100)',
    rowHeader: 'task',
    rows: [...LATTICE_TASKS],
    rowNames: LATTICE_TASKS.map(taskName),
    cols: names,
    values: LATTICE_TASKS.map((t) => names.map((n) => copilots[n].tasks[t] ?? null)),
    domain: [0, 100],
  });
  const categories = heatmap({
    id: 'chart-categories',
    title: 'Score by query category (0–100)',
    rowHeader: 'category',
    rows: [...LATTICE_CATEGORIES],
    rowNames: LATTICE_CATEGORIES.map(categoryName),
    cols: names,
    values: LATTICE_CATEGORIES.map((c) => names.map((n) => copilots[n].categories[c] ?? null)),
    domain: [0, 100],
  });
  const t = input.report as unknown as Partial<LatticeTables>;
  // Reports written before these tables existed have none; the page shows the charts alone then.
  const paperTables =
    t.table5 && t.table6 && t.categoryTable && t.scoreBuckets && t.spread && t.bestPerQuery
      ? [
          dataTable(
            'Table 5: mean dimension score (0–10) with 95% interval; D1–D6 over T1–T15, the refusal dimension over T16',
            [
              'copilot',
              ...t.table5.dimensions.map((d) =>
                dims.find((x) => x.id === d)?.name ? `${d} ${dims.find((x) => x.id === d)!.name}` : d,
              ),
            ],
            names.map((n) => [n, ...t.table5!.dimensions.map((d) => cellText(t.table5!.copilots[n]?.[d]))]),
          ),
          dataTable(
            'Table 6: mean score (0–100) per task with 95% interval',
            ['task', 'queries', ...names],
            t.table6.rows.map((r) => [`${r.task} ${r.name}`, r.queries, ...names.map((n) => cellText(r.copilots[n]))]),
          ),
          dataTable(
            'Mean score (0–100) per query category with 95% interval',
            ['category', 'queries', ...names],
            t.categoryTable.rows.map((r) => [
              `${r.category} ${r.name}`,
              r.queries,
              ...names.map((n) => cellText(r.copilots[n])),
            ]),
          ),
        ].join('')
      : '';
  const distribution = paperTables
    ? stackedBars({
        id: 'chart-buckets',
        title: "Responses per score band (the reference's buckets)",
        rows: names.map((n) => ({ label: n, parts: SCORE_BUCKETS.map((b) => t.scoreBuckets![n]?.[b] ?? 0) })),
        partNames: [...SCORE_BUCKETS],
      }) +
      dataTable(
        'Spread: population standard deviation of response totals, lowest first',
        ['copilot', 'mean', 'sd', 'n'],
        t.spread!.map((s) => [s.copilot, fmt2(s.mean), fmt2(s.sd), s.n]),
      ) +
      dataTable(
        `Best copilot per query (ties, ${t.bestPerQuery!.ties}, go to the first tied copilot in name order, as in the reference's code)`,
        ['copilot', 'queries won'],
        names.map((n) => [n, t.bestPerQuery!.wins[n] ?? 0]),
      )
    : '';
  return runReportPage({
    title: `LATTICE report ${input.run.runId}`,
    header: runHeader(input, 'LATTICE report', [
      ['judging', (input.report.judging as { description?: string } | undefined)?.description ?? 'independent'],
    ]),
    sections: [
      ['leaderboard', 'Leaderboard', leaderboard + tierNote],
      ['dimensions', 'Dimension profile', profile],
      ['tasks', 'Tasks × copilots', tasks],
      ['categories', 'Categories × copilots', categories],
      ...(paperTables
        ? ([
            ['paper-tables', "The paper's tables", paperTables],
            ['distribution', 'Score bands, spread and best per query', distribution],
          ] as Array<[string, string, string]>)
        : []),
      ['failures', 'Failures', failureTable(input.run.copilots, input.responses, input.judgments, input.report)],
    ],
    judging: judgingSections(input.report, input.studies),
    cost: input.report.cost as CostSummary | undefined,
    artefacts: input.report.artefacts as ReportArtefact[] | undefined,
    agents: input.report.agents as AgentFigures | undefined,
    drill: drillData(input, {
      dimensions: dims,
      labelName: 'task / category',
      labelsOf: (q) =>
        [q.task ? taskName(String(q.task)) : '', q.category ? categoryName(String(q.category)) : ''].filter(Boolean), // ids with their names
    }),
  });
}
