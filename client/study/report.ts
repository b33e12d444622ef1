import path from 'node:path';
import { analyseStudy, judgeScoresOf, toFacts, type JudgeScores, type StudyAnalysis } from '../../core/study/analysis';
import { calibratedWinRates, calibrationDesignOf } from '../../core/study/calibrated';
import { CALIBRATED_HEADER, calibratedIntro, calibratedRows } from '../../core/study/calibratedReport';
import { writeFileAtomic, writeTextAtomic } from '../../core/io/files';
import { fmt, mdCode, mdText, table } from '../../core/report/markdown';
import { sheet } from '../../core/report/xlsx';
import type { RecordedAnnotation, StudyRecord } from '../../core/study/types';
import type { StudyItem } from '../../core/study/design';
import type { ResultsStore, RunRecord } from '../../core/model/store';
import type { Query } from '../../core/model/types';
import { InputError } from '../../core/model/inputError';
import { consensusVerdicts } from '../../activities/deps';

export interface StudyReportOptions {
  /** More runs whose judgments are compared with the annotators (re-judges of the same responses, a judge panel). */
  judgeRuns?: string[];
  tieMargin?: number;
  outDir?: string;
  top?: number;
  bootstrapIterations?: number;
  /** A calibrated-interval width (0–1) to project the labels needed for. */
  targetWidth?: number;
}

async function judgeScores(store: ResultsStore, run: RunRecord): Promise<JudgeScores> {
  return judgeScoresOf(run.runId, await consensusVerdicts(store, run));
}

/** The run's own judge over every (query, pair) item of the run, calibrated by the annotators. */
function calibrate(
  study: StudyRecord,
  data: { queryIds: string[]; items: StudyItem[]; annotations: RecordedAnnotation[]; judge: JudgeScores },
  opts: StudyReportOptions,
) {
  return calibratedWinRates({
    copilots: study.spec.copilots,
    queryIds: data.queryIds.filter((q) => study.spec.copilots.some((c) => data.judge.scores.has(`${q}|${c}`))),
    studyItems: data.items,
    annotations: toFacts(data.annotations),
    judge: data.judge,
    tieMargin: opts.tieMargin ?? 0,
    design: calibrationDesignOf(study.spec),
    targetWidth: opts.targetWidth,
  });
}

/** The calibrated win rates as the labels stand now (`study status`), with the labels projected to reach a target width. */
export async function calibratedNow(
  store: ResultsStore,
  study: StudyRecord,
  opts: Pick<StudyReportOptions, 'tieMargin' | 'targetWidth'> = {},
) {
  const run = (await store.getRun(study.runId))!;
  const queryIds = (await store.snapshotQueries(run.snapshotId)).map((q) => q.id);
  return calibrate(
    study,
    {
      queryIds,
      items: await store.studies.studyItems(study.name),
      annotations: await store.studies.annotations(study.name),
      judge: await judgeScores(store, run),
    },
    opts,
  );
}

export async function studyFigures(store: ResultsStore, study: StudyRecord, opts: StudyReportOptions = {}) {
  const run = (await store.getRun(study.runId))!;
  const judges = [run];
  for (const id of opts.judgeRuns ?? []) {
    const r = await store.getRun(id);
    if (!r) throw new InputError(`--judge-run ${id}: no such run in the results store ${store.location}`);
    if (r.snapshotId !== run.snapshotId)
      throw new InputError(`--judge-run ${id} judged snapshot ${r.snapshotId}, not the study's ${run.snapshotId}`);
    judges.push(r);
  }
  const annotations = await store.studies.annotations(study.name);
  const submissions = await store.studies.submissions(study.name);
  const queries = new Map<string, Query>((await store.snapshotQueries(run.snapshotId)).map((q) => [q.id, q]));
  const items = await store.studies.studyItems(study.name);
  const scores = await Promise.all(judges.map((r) => judgeScores(store, r)));
  const judgeScoresOfRun = scores[0];
  const analysis = analyseStudy({
    copilots: study.spec.copilots,
    items,
    annotations: toFacts(annotations),
    queries,
    options: study.spec.options,
    judges: scores,
    tieMargin: opts.tieMargin ?? 0,
    seed: study.spec.seed,
    bootstrapIterations: opts.bootstrapIterations,
    topDisagreements: opts.top,
  });
  const annotators = new Set(annotations.map((a) => a.annotatorId));
  const calibrated = calibrate(
    study,
    { queryIds: [...queries.keys()], items, annotations, judge: judgeScoresOfRun },
    opts,
  );
  return {
    study: study.name,
    runId: study.runId,
    protocol: run.protocol,
    status: study.status,
    createdAt: study.createdAt,
    closedAt: study.closedAt,
    copilots: study.spec.copilots,
    design: {
      queries: study.spec.queryIds.length,
      perItem: study.spec.perItem,
      excluded: study.spec.excluded,
      seed: study.spec.seed,
      deadline: study.spec.deadline,
      selection: study.spec.selection?.method ?? 'uniform',
    },
    counts: {
      annotations: annotations.length,
      annotators: annotators.size,
      imported: annotations.filter((a) => a.source === 'import').length,
      pendingSubmissions: submissions.filter((s) => s.status === 'pending').length,
      rejectedSubmissions: submissions.filter((s) => s.status === 'rejected').length,
      revisions:
        submissions.filter((s) => s.status === 'recorded').length -
        annotations.filter((a) => a.source === 'app').length,
    },
    ...analysis,
    calibrated,
  };
}

export type StudyReport = Awaited<ReturnType<typeof studyFigures>>;

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(1)}%`);
/** "1 annotator", "3 annotators". */
const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const interval = (ci: { low: number; high: number } | null, f: (x: number) => string) =>
  ci ? `${f(ci.low)}–${f(ci.high)}` : '–';

function calibratedMarkdown(r: StudyReport): string[] {
  return [
    '## Calibrated win rates',
    '',
    calibratedIntro(r.calibrated),
    '',
    table(CALIBRATED_HEADER, calibratedRows(r.calibrated)),
    '',
  ];
}

export function studyMarkdown(r: StudyReport): string {
  const t7 = r.table7;
  const out: string[] = [
    `# Human preference study ${mdText(r.study)}`,
    '',
    `Run ${mdCode(r.runId)} (${mdText(r.protocol)}); ${plural(r.counts.annotations, 'annotation')} by ${plural(r.counts.annotators, 'annotator')} on ${plural(r.items.length, 'item')}; study ${mdText(r.status)}.` +
      (r.counts.pendingSubmissions
        ? ` **${r.counts.pendingSubmissions} submitted answers are not yet recorded by the study workflow and are not counted.**`
        : ''),
    `Left out at design: ${r.design.excluded.pairs} (query, pair) items whose responses failed (${r.design.excluded.failed}) or are missing (${r.design.excluded.missing}).`,
    '',
    '## Table 7: win rates',
    '',
    table(
      [
        'Copilot',
        'Win rate as Table 7 prints it (wins / appearances)',
        'Win rate, ties excluded',
        'Wins / decisive',
        '95% CI (Wilson, ties excluded)',
        'Ties',
        'Tie share',
        'Appearances',
        'Bradley–Terry',
        'BT 95% CI',
      ],
      r.copilots.map((c) => {
        const x = t7.copilots[c];
        const bt = t7.bradleyTerry[c];
        return [
          c,
          pct(x.winRateWithTies),
          pct(x.winRate),
          `${x.wins} / ${x.wins + x.losses}`,
          interval(x.ci95, pct),
          x.ties,
          pct(x.tieShare),
          x.appearances,
          fmt(bt.strength, 2),
          interval(bt.ci95, (v) => v.toFixed(2)),
        ];
      }),
    ),
    '',
    "The LATTICE paper's Table 7 divides wins by all appearances, ties included (Elsa 952 of 5,280 = 18.03%), although its text says ties are excluded; both rates are shown, each under its own name.",
    '',
    `Bradley–Terry: maximum likelihood with ${t7.bradleyTerryFit.prior} pseudo-wins each way per compared pair, scaled to a geometric mean of 1; ` +
      `${t7.bradleyTerryFit.converged ? `converged in ${t7.bradleyTerryFit.iterations} Newton steps` : `**not converged** after ${t7.bradleyTerryFit.iterations} Newton steps`}.` +
      (t7.bradleyTerryFit.groups.length > 1
        ? ` The comparisons fall into ${t7.bradleyTerryFit.groups.length} unconnected groups (${t7.bradleyTerryFit.groups.map((g) => g.join(', ')).join(' | ')}); strengths are given for the first only.`
        : '') +
      r.copilots
        .filter((c) => t7.bradleyTerry[c].reason)
        .map((c) => ` ${c}: no strength (${t7.bradleyTerry[c].reason}).`)
        .join(''),
    '',
    `Overall tie share: ${pct(t7.tieShare)}. Pairwise wins (row beat column):`,
    '',
    table(
      ['', ...r.copilots],
      r.copilots.map((c) => [c, ...r.copilots.map((d) => (c === d ? '–' : `${t7.matrix[c][d].wins}`))]),
    ),
    '',
    ...calibratedMarkdown(r),
    '## Table 8: main reason for the winning response',
    '',
    table(
      ['Reason', 'Share', 'Count'],
      Object.values(r.table8.reasons).map((x) => [x.label, pct(x.share), x.count]),
    ),
    '',
    '## Table 9: serious errors in rejected responses',
    '',
    table(
      ['Copilot', 'Rate', 'Flags / losses'],
      r.copilots.map((c) => [
        c,
        pct(r.table9.copilots[c].rate),
        `${r.table9.copilots[c].flags} / ${r.table9.copilots[c].losses}`,
      ]),
    ),
    '',
    table(
      ['Error type', 'Rate (of all losses)', 'Count', 'Share of flags'],
      Object.values(r.table9.types).map((t) => [t.label, pct(t.rate), t.count, pct(t.shareOfFlags)]),
    ),
    '',
    '## Agreement between annotators',
    '',
    `Krippendorff's alpha (nominal, A/B/tie per item): ${fmt(r.interAnnotator.krippendorffAlpha, 3)}. Mean majority strength: ${pct(r.interAnnotator.meanMajorityStrength)}; ` +
      `items with a clear majority: ${r.interAnnotator.itemsWithMajority} of ${r.interAnnotator.items}. Votes for the majority: ` +
      Object.entries(r.interAnnotator.majorityStrength)
        .map(([k, v]) => `${mdText(k)} on ${plural(v as number, 'item')}`)
        .join(', ') +
      '.',
  ];
  for (const j of r.judgeHuman) {
    const group = (title: string, g: Record<string, { n: number; agreement: number | null; kappa: number | null }>) =>
      Object.keys(g).length
        ? [
            '',
            `By ${title}:`,
            '',
            table(
              [title, 'Items', 'Agreement', "Cohen's kappa"],
              Object.entries(g).map(([k, v]) => [k, v.n, pct(v.agreement), fmt(v.kappa, 2)]),
            ),
          ]
        : [];
    out.push(
      '',
      `## Judge–human agreement: run ${mdText(j.judgeRunId)}`,
      '',
      `The judge prefers the response with the higher total (a tie within ${j.tieMargin}); compared with the annotators' majority on ${j.itemsCompared} items ` +
        `(${j.itemsWithoutMajority} without a majority, ${j.itemsWithoutJudgment} without both judgments left out). ` +
        `Agreement **${pct(j.overall.agreement)}**, Cohen's kappa **${fmt(j.overall.kappa, 3)}**. Kendall's tau between the judge's leaderboard and the human win rates: **${fmt(j.kendallTau, 3)}**.`,
      '',
      table(
        ['Copilot', 'Judge mean total', 'Human win rate'],
        r.copilots.map((c) => [c, fmt(j.leaderboard[c], 1), pct(r.table7.copilots[c].winRate)]),
      ),
      ...group('task', j.byTask),
      ...group('category', j.byCategory),
      ...group('main reason', j.byMainReason),
      '',
      '### Where they disagree most',
      '',
    );
    for (const d of j.disagreements) {
      out.push(
        `- **${mdText(d.queryId)}** ${mdText(d.first)} vs ${mdText(d.second)}: annotators ${mdText(d.humanMajority)} (votes ${d.votes.first}/${d.votes.second}/${d.votes.tie}), judge ${mdText(d.judgePreference)} (${d.judgeTotals[d.first]} vs ${d.judgeTotals[d.second]}). ${d.query ? `“${mdText(d.query.slice(0, 160))}”` : ''}`,
      );
      for (const c of [d.first, d.second]) {
        const rationale = d.judgeRationales[c];
        if (rationale)
          out.push(
            `  - ${mdText(c)}: ${Object.entries(rationale)
              .map(([k, v]) => `${mdText(k)}: ${mdText(String(v).slice(0, 200))}`)
              .join(' · ')}`,
          );
      }
    }
    if (!j.disagreements.length) out.push('None.');
  }
  return out.join('\n') + '\n';
}

async function writeWorkbook(file: string, r: StudyReport): Promise<void> {
  const wb = new (require('exceljs') as typeof import('exceljs')).Workbook(); // loaded when a workbook is written, not at start-up
  sheet(
    wb,
    'Win Rates',
    [
      'copilot',
      'win_rate_with_ties',
      'win_rate',
      'wins',
      'losses',
      'ties',
      'appearances',
      'ci_low',
      'ci_high',
      'tie_share',
      'bt_strength',
      'bt_ci_low',
      'bt_ci_high',
    ],
    r.copilots.map((c) => {
      const x = r.table7.copilots[c];
      const bt = r.table7.bradleyTerry[c];
      return [
        c,
        x.winRateWithTies,
        x.winRate,
        x.wins,
        x.losses,
        x.ties,
        x.appearances,
        x.ci95?.low,
        x.ci95?.high,
        x.tieShare,
        bt.strength,
        bt.ci95?.low,
        bt.ci95?.high,
      ];
    }),
  );
  sheet(
    wb,
    'Calibrated',
    [
      'copilot',
      'calibrated_win_rate',
      'ci_low',
      'ci_high',
      'judge_only',
      'annotators_only',
      'items',
      'annotated_items',
      'more_labels_to_halve',
      'note',
    ],
    r.copilots.map((c) => {
      const x = r.calibrated.copilots[c];
      return [
        c,
        x.winRate,
        x.ci95?.low,
        x.ci95?.high,
        x.judgeOnly,
        x.humanOnly,
        x.items,
        x.annotatedItems,
        x.moreLabelsToHalve,
        x.moreLabelsNote,
      ];
    }),
  );
  sheet(
    wb,
    'Pairwise',
    ['copilot', ...r.copilots],
    r.copilots.map((c) => [c, ...r.copilots.map((d) => (c === d ? null : r.table7.matrix[c][d].wins))]),
  );
  sheet(
    wb,
    'Reasons',
    ['reason', 'label', 'count', 'share'],
    Object.entries(r.table8.reasons).map(([k, v]) => [k, v.label, v.count, v.share]),
  );
  sheet(
    wb,
    'Serious Errors',
    ['copilot_or_type', 'flags', 'losses', 'rate'],
    [
      ...r.copilots.map((c) => [c, r.table9.copilots[c].flags, r.table9.copilots[c].losses, r.table9.copilots[c].rate]),
      ...Object.entries(r.table9.types).map(([k, v]) => [`type:${k}`, v.count, r.table9.overall.losses, v.rate]),
    ],
  );
  sheet(
    wb,
    'Items',
    [
      'item',
      'query',
      'first',
      'second',
      'votes_first',
      'votes_second',
      'votes_tie',
      'majority',
      'strength',
      'main_reason',
    ],
    r.items.map((i) => [
      i.itemId,
      i.queryId,
      i.first,
      i.second,
      i.votes.first,
      i.votes.second,
      i.votes.tie,
      i.majority,
      i.strength,
      i.mainReason,
    ]),
  );
  sheet(
    wb,
    'Judge Agreement',
    ['judge_run', 'group', 'key', 'items', 'agreement', 'kappa'],
    r.judgeHuman.flatMap((j) => [
      [j.judgeRunId, 'overall', '', j.overall.n, j.overall.agreement, j.overall.kappa],
      ...(['byTask', 'byCategory', 'byMainReason'] as const).flatMap((g) =>
        Object.entries(j[g]).map(([k, v]) => [j.judgeRunId, g, k, v.n, v.agreement, v.kappa]),
      ),
    ]),
  );
  await writeFileAtomic(file, (tmp) => wb.xlsx.writeFile(tmp));
}

/** study.json, study.md and study.xlsx under `<run output>/<runId>/study-<name>/` (or --out). */
export async function writeStudyReport(
  store: ResultsStore,
  study: StudyRecord,
  opts: StudyReportOptions = {},
): Promise<{ dir: string; report: StudyReport }> {
  const report = await studyFigures(store, study, opts);
  const run = (await store.getRun(study.runId))!;
  const output = (run.config as { output?: string }).output ?? '.';
  const dir = opts.outDir ?? path.join(output, run.runId, `study-${study.name}`);
  writeTextAtomic(path.join(dir, 'study.json'), JSON.stringify(report, null, 2) + '\n');
  writeTextAtomic(path.join(dir, 'study.md'), studyMarkdown(report));
  await writeWorkbook(path.join(dir, 'study.xlsx'), report);
  return { dir, report };
}

export type { StudyAnalysis };
