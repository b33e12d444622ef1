import { fmt, simulatedBanner, table } from '../../core/report/markdown';
import type { ReportFiles, ReportInput } from '../../core/model/protocol';
import type { JudgeUnit } from '../../core/model/store';
import type { StoredJudgment } from '../../core/model/types';
import { OPPONENT_PREFIX, pairsOf } from './judge';
import { pairwiseLabels } from './queries';

interface Record3 {
  comparisons: number;
  wins: number;
  ties: number;
  losses: number;
  /** (wins + ½ ties) / comparisons; null without comparisons. */
  winRate: number | null;
}

const empty = (): Record3 => ({ comparisons: 0, wins: 0, ties: 0, losses: 0, winRate: null });
function add(r: Record3, points: number): void {
  r.comparisons++;
  if (points === 1) r.wins++;
  else if (points === 0) r.losses++;
  else r.ties++;
  r.winRate = (r.wins + r.ties / 2) / r.comparisons;
}

/** The plan is the judge units in order: who was shown as A in each pair. */
export interface PairwisePlan {
  units: JudgeUnit[];
}

export function buildPairwiseReport(input: ReportInput): ReportFiles {
  const { run, queries, judgments } = input;
  const plan = input.plan as PairwisePlan | null;
  const byKey = new Map<string, StoredJudgment>(
    judgments.filter((j) => j.status === 'ok').map((j) => [`${j.queryId}\u0000${j.copilot}`, j]),
  );
  const outcome = (queryId: string, a: string, b: string) =>
    byKey.get(`${queryId}\u0000${a}`)?.scores?.[`${OPPONENT_PREFIX}${b}`];
  const queryById = new Map(queries.map((q) => [q.id, q]));

  const copilots: Record<string, Record3> = Object.fromEntries(run.copilots.map((c) => [c, empty()]));
  const headToHead: Record<string, Record<string, Record3>> = Object.fromEntries(run.copilots.map((c) => [c, {}]));
  const topics: Record<string, Record<string, Record3>> = {};
  const order = { pairs: 0, firstWins: 0, secondWins: 0, ties: 0 };
  const csv: unknown[][] = [['run_id', 'query_id', 'shown_first', 'shown_second', 'preferred', 'winner']];
  for (const unit of plan?.units ?? input.units ?? []) {
    for (const [a, b] of pairsOf(unit)) {
      const points = outcome(unit.queryId, a, b);
      if (typeof points !== 'number') {
        csv.push([run.runId, unit.queryId, a, b, '', '']);
        continue;
      }
      for (const [me, other, mine] of [
        [a, b, points],
        [b, a, 1 - points],
      ] as const) {
        add(copilots[me], mine);
        add((headToHead[me][other] ??= empty()), mine);
        for (const topic of pairwiseLabels(queryById.get(unit.queryId) ?? { id: '', text: '' }).topic ?? [])
          add(((topics[topic] ??= {})[me] ??= empty()), mine);
      }
      order.pairs++;
      if (points === 1) order.firstWins++;
      else if (points === 0) order.secondWins++;
      else order.ties++;
      csv.push([
        run.runId,
        unit.queryId,
        a,
        b,
        points === 1 ? 'first' : points === 0 ? 'second' : 'tie',
        points === 1 ? a : points === 0 ? b : '',
      ]);
    }
  }
  const failed = judgments.filter((j) => j.status === 'failed').length;
  const json = {
    protocol: 'pairwise',
    simulated: input.simulated,
    runId: run.runId,
    snapshotId: run.snapshotId,
    rubricVersion: run.rubricVersion,
    judge: run.judge,
    ...(run.sourceRunId ? { sourceRunId: run.sourceRunId } : {}),
    queries: queries.length,
    failedJudgments: failed,
    copilots,
    headToHead,
    topics,
    order,
    generatedAt: new Date().toISOString(),
  };
  const names = Object.keys(copilots).sort(
    (x, y) => (copilots[y].winRate ?? -1) - (copilots[x].winRate ?? -1) || (x < y ? -1 : 1),
  );
  const rate = (r: Record3 | undefined) =>
    r?.winRate === null || r?.winRate === undefined ? '–' : `${fmt(r.winRate * 100, 1)}%`;
  const markdown = [
    `# Pairwise preference report — run ${run.runId}\n`,
    simulatedBanner(input.simulated),
    `Snapshot \`${run.snapshotId}\` (${queries.length} queries) · rubric version \`${run.rubricVersion}\` · judge \`${run.judge.model}\` at ${run.judge.baseURL}\n`,
    '## Win rates\n',
    table(
      ['copilot', 'win rate', 'wins', 'ties', 'losses', 'comparisons'],
      names.map((n) => [
        n,
        rate(copilots[n]),
        copilots[n].wins,
        copilots[n].ties,
        copilots[n].losses,
        copilots[n].comparisons,
      ]),
    ),
    '\nWin rate = (wins + ½ ties) / comparisons.\n',
    '## Head to head (row beats column)\n',
    table(
      ['', ...names],
      names.map((n) => [n, ...names.map((o) => (n === o ? '' : rate(headToHead[n][o])))]),
    ),
    `\n## Order\n\nShown first won ${order.firstWins}, shown second won ${order.secondWins}, tied ${order.ties} of ${order.pairs} judged pairs.\n`,
    ...(Object.keys(topics).length
      ? [
          '## By topic\n',
          table(
            ['topic', ...names],
            Object.keys(topics)
              .sort()
              .map((t) => [t, ...names.map((n) => rate(topics[t][n]))]),
          ),
          '',
        ]
      : []),
  ].join('\n');
  return { json, markdown, csv, summary: Object.fromEntries(names.map((n) => [n, copilots[n].winRate])) };
}
