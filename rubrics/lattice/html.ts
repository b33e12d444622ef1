import { groupedBars, heatmap, intervalChart } from '../../core/html/charts';
import { separabilityTiers } from '../../core/html/tiers';
import { drillData, failureTable, runHeader, runReportPage, type HtmlReportInput, type ReportArtefact } from '../../core/html/runReport';
import { judgingSections } from '../../core/judgingReport';
import type { CostSummary } from '../../core/cost';
import type { LatticeCopilotSummary } from './aggregate';
import type { LatticeRubric } from './rubric';
import { LATTICE_CATEGORIES, LATTICE_DIMENSIONS, LATTICE_TASKS } from './rubric';

/** LATTICE report.html: leaderboard with intervals (and tiers), dimension profiles, task and category heatmaps, failures, drill-down. */
export function buildLatticeHtml(input: HtmlReportInput): string {
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
    items: names.map((n) => ({ label: n, value: copilots[n].score, low: copilots[n].ci95?.low ?? null, high: copilots[n].ci95?.high ?? null, note: tiers?.[n] ? `tier ${tiers[n]}` : undefined })),
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
  return runReportPage({
    title: `LATTICE report ${input.run.runId}`,
    header: runHeader(input, 'LATTICE report'),
    sections: [
      ['leaderboard', 'Leaderboard', leaderboard + tierNote],
      ['dimensions', 'Dimension profile', profile],
      ['tasks', 'Tasks × copilots', tasks],
      ['categories', 'Categories × copilots', categories],
      ['failures', 'Failures', failureTable(input.run.copilots, input.responses, input.judgments)],
    ],
    judging: judgingSections(input.report, input.studies),
    cost: input.report.cost as CostSummary | undefined,
    artefacts: input.report.artefacts as ReportArtefact[] | undefined,
    drill: drillData(input, {
      dimensions: dims,
      labelName: 'task / category',
      labelsOf: (q) => [q.task ? taskName(String(q.task)) : '', q.category ? categoryName(String(q.category)) : ''].filter(Boolean), // ids with their names
    }),
  });
}
