import type { ReportHtml } from '../../core/model/protocol';
import type { AgentFigures } from '../../core/report/agentReport';
import type { CostSummary } from '../../core/stats/cost';
import { columnChart, heatmap } from '../../core/report/html/charts';
import {
  drillData,
  failureTable,
  runHeader,
  runReportPage,
  type HtmlReportInput,
  type ReportArtefact,
} from '../../core/report/html/runReport';
import { judgingSections } from '../../core/report/judgingReport';
import { pairwiseLabels } from './queries';

interface WinRecord {
  comparisons: number;
  winRate: number | null;
}

/** Pairwise report.html: win rates, the head-to-head matrix, failures and every answer, from report.json's numbers. */
export function buildPairwiseHtml(input: HtmlReportInput): ReportHtml {
  const copilots = input.report.copilots as Record<string, WinRecord>;
  const headToHead = input.report.headToHead as Record<string, Record<string, WinRecord>>;
  const names = Object.keys(copilots).sort((a, b) => (copilots[b].winRate ?? -1) - (copilots[a].winRate ?? -1));
  const percent = (r: WinRecord | undefined) =>
    r?.winRate === null || r?.winRate === undefined ? null : r.winRate * 100;
  const winRates = columnChart({
    id: 'chart-win-rates',
    title: 'Win rate (%, ties count half) over every pairwise comparison',
    labels: names,
    values: names.map((n) => percent(copilots[n])),
    domain: [0, 100],
    valueName: 'win rate',
  });
  const matrix = heatmap({
    id: 'chart-head-to-head',
    title: 'Head to head: row copilot’s win rate (%) against the column copilot',
    rowHeader: 'copilot',
    rows: names,
    cols: names,
    values: names.map((a) => names.map((b) => (a === b ? null : percent(headToHead[a]?.[b])))),
    domain: [0, 100],
  });
  return runReportPage({
    title: `Pairwise preference report ${input.run.runId}`,
    header: runHeader(input, 'Pairwise preference report'),
    sections: [
      ['win-rates', 'Win rates', winRates],
      ['head-to-head', 'Head to head', matrix],
      ['failures', 'Failures', failureTable(input.run.copilots, input.responses, input.judgments, input.report)],
    ],
    judging: judgingSections(input.report, input.studies),
    cost: input.report.cost as CostSummary | undefined,
    artefacts: input.report.artefacts as ReportArtefact[] | undefined,
    agents: input.report.agents as AgentFigures | undefined,
    drill: drillData(input, {
      dimensions: [{ id: 'preference', name: 'Preference' }],
      labelName: 'topic',
      labelsOf: (q) => pairwiseLabels(q).topic ?? [],
    }),
  });
}
