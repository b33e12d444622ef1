import { kendallTauB, krippendorffAlphaNominal } from '../stats/agreement';
import { bootstrapIntervals, bradleyTerry, cohenKappa, mean, wilsonInterval } from '../stats/stats';
import type { Query, StoredJudgment } from '../model/types';
import type { StudyOptions } from './options';
import type { StudyItem } from './design';
import type { Answer, RecordedAnnotation } from './types';

/**
 * The figures of a pairwise preference study (LATTICE paper Tables 7–9), inter-annotator agreement, and agreement
 * between LLM judges and the annotators' majority. Pure: everything comes in as data, so a test can recompute it.
 */

/** The preference of one annotation (or one judge) on an item: its first copilot, its second, or neither. */
export type Preference = 'first' | 'second' | 'tie';

export interface AnnotationFact {
  itemId: string;
  left: string;
  right: string;
  answer: Answer;
}

export function winnerOf(a: AnnotationFact): string | null {
  return a.answer.choice === 'A' ? a.left : a.answer.choice === 'B' ? a.right : null;
}

export function preferenceOf(a: AnnotationFact, item: StudyItem): Preference {
  const w = winnerOf(a);
  return w === null ? 'tie' : w === item.first ? 'first' : 'second';
}

export interface JudgeScores {
  judgeRunId: string;
  /** "queryId|copilot" → the judgment's total and rationales; absent or failed judgments are missing. */
  scores: Map<string, { total: number; rationales: Record<string, string> | null }>;
}

/** A run's consensus verdicts as JudgeScores (ok judgments with a total). */
export function judgeScoresOf(judgeRunId: string, verdicts: StoredJudgment[]): JudgeScores {
  const scores: JudgeScores['scores'] = new Map();
  for (const j of verdicts)
    if (j.status === 'ok' && j.total !== null)
      scores.set(`${j.queryId}|${j.copilot}`, { total: j.total, rationales: j.rationales });
  return { judgeRunId, scores };
}

export interface AnalysisInput {
  copilots: string[];
  items: StudyItem[];
  annotations: AnnotationFact[];
  queries: Map<string, Query>;
  options: StudyOptions;
  judges: JudgeScores[];
  /** Judge totals within this margin count as a tie. */
  tieMargin: number;
  seed: string;
  bootstrapIterations?: number;
  topDisagreements?: number;
}

const rate = (k: number, n: number) => (n ? k / n : null);

function table7(input: AnalysisInput, byItem: Map<string, StudyItem>) {
  const { copilots, annotations } = input;
  const index = new Map(copilots.map((c, i) => [c, i]));
  const wins = copilots.map(() => copilots.map(() => 0));
  const ties = copilots.map(() => copilots.map(() => 0));
  for (const a of annotations) {
    const item = byItem.get(a.itemId)!;
    const [i, j] = [index.get(item.first)!, index.get(item.second)!];
    const w = winnerOf(a);
    if (w === null) {
      ties[i][j]++;
      ties[j][i]++;
    } else if (w === item.first) wins[i][j]++;
    else wins[j][i]++;
  }
  const perCopilot = Object.fromEntries(
    copilots.map((c, i) => {
      const won = wins[i].reduce((s, v) => s + v, 0);
      const lost = wins.reduce((s, row) => s + row[i], 0);
      const tied = ties[i].reduce((s, v) => s + v, 0);
      const appearances = won + lost + tied;
      // winRate leaves ties out; winRateWithTies is what the LATTICE paper's Table 7 prints (wins ÷ appearances).
      return [
        c,
        {
          wins: won,
          losses: lost,
          ties: tied,
          appearances,
          winRate: rate(won, won + lost),
          winRateWithTies: rate(won, appearances),
          ci95: wilsonInterval(won, won + lost),
          tieShare: rate(tied, appearances),
        },
      ];
    }),
  );
  const matrix = Object.fromEntries(
    copilots.map((c, i) => [
      c,
      Object.fromEntries(
        copilots
          .filter((d) => d !== c)
          .map((d) => [
            d,
            { wins: wins[i][index.get(d)!], losses: wins[index.get(d)!][i], ties: ties[i][index.get(d)!] },
          ]),
      ),
    ]),
  );
  // Bradley–Terry on decisive answers; intervals resample items (an item's annotations stay together).
  const itemsWithAnswers = [...new Set(annotations.map((a) => a.itemId))].map((id) =>
    annotations.filter((a) => a.itemId === id),
  );
  const fit = (groups: AnnotationFact[][]) => {
    const w = copilots.map(() => copilots.map(() => 0));
    for (const group of groups)
      for (const a of group) {
        const winner = winnerOf(a);
        if (winner === null) continue;
        const loser = winner === a.left ? a.right : a.left;
        w[index.get(winner)!][index.get(loser)!]++;
      }
    return bradleyTerry(w);
  };
  const point = fit(itemsWithAnswers);
  const intervals = bootstrapIntervals(itemsWithAnswers, (sample) => fit(sample).strengths.map((s) => s ?? NaN), {
    iterations: input.bootstrapIterations ?? 1000,
    seed: `${input.seed}/bradley-terry`,
  });
  const bt = Object.fromEntries(
    copilots.map((c, i) => [
      c,
      {
        strength: point.strengths[i],
        ci95: point.strengths[i] === null ? null : intervals[i],
        reason: point.reasons[i],
      },
    ]),
  );
  const bradleyTerryFit = {
    prior: point.prior,
    iterations: point.iterations,
    converged: point.converged,
    groups: point.groups.map((g) => g.map((i) => copilots[i])),
  };
  return {
    copilots: perCopilot,
    matrix,
    bradleyTerry: bt,
    bradleyTerryFit,
    tieShare: rate(annotations.filter((a) => a.answer.choice === 'tie').length, annotations.length),
  };
}

function table8(input: AnalysisInput) {
  const decisive = input.annotations.filter((a) => a.answer.choice !== 'tie');
  const counts = new Map(input.options.reasons.map((r) => [r.id, 0]));
  for (const a of decisive) if (a.answer.reason) counts.set(a.answer.reason, (counts.get(a.answer.reason) ?? 0) + 1);
  const total = [...counts.values()].reduce((s, v) => s + v, 0);
  return {
    total,
    reasons: Object.fromEntries(
      input.options.reasons.map((r) => [
        r.id,
        { label: r.label, count: counts.get(r.id) ?? 0, share: rate(counts.get(r.id) ?? 0, total) },
      ]),
    ),
  };
}

function table9(input: AnalysisInput) {
  const perCopilot = new Map(input.copilots.map((c) => [c, { losses: 0, flags: 0 }]));
  const types = new Map(input.options.errorTypes.map((t) => [t.id, 0]));
  let losses = 0;
  let flags = 0;
  for (const a of input.annotations) {
    const w = winnerOf(a);
    if (w === null) continue;
    const loser = w === a.left ? a.right : a.left;
    const entry = perCopilot.get(loser)!;
    entry.losses++;
    losses++;
    if (a.answer.seriousError) {
      entry.flags++;
      flags++;
      const t = a.answer.errorType ?? 'other';
      types.set(t, (types.get(t) ?? 0) + 1);
    }
  }
  return {
    overall: { flags, losses, rate: rate(flags, losses) },
    copilots: Object.fromEntries([...perCopilot].map(([c, e]) => [c, { ...e, rate: rate(e.flags, e.losses) }])),
    types: Object.fromEntries(
      input.options.errorTypes.map((t) => [
        t.id,
        {
          label: t.label,
          count: types.get(t.id) ?? 0,
          rate: rate(types.get(t.id) ?? 0, losses),
          shareOfFlags: rate(types.get(t.id) ?? 0, flags),
        },
      ]),
    ),
  };
}

/** Per item: the annotators' votes, the plurality preference (null when two preferences tie for most) and its strength. */
export function itemMajorities(items: StudyItem[], annotations: AnnotationFact[]) {
  const byItem = new Map(
    items.map((it) => [
      it.itemId,
      {
        item: it,
        votes: { first: 0, second: 0, tie: 0 } as Record<Preference, number>,
        reasons: new Map<string, number>(),
      },
    ]),
  );
  for (const a of annotations) {
    const entry = byItem.get(a.itemId)!;
    const pref = preferenceOf(a, entry.item);
    entry.votes[pref]++;
    if (pref !== 'tie' && a.answer.reason)
      entry.reasons.set(a.answer.reason, (entry.reasons.get(a.answer.reason) ?? 0) + 1);
  }
  return [...byItem.values()]
    .filter((e) => e.votes.first + e.votes.second + e.votes.tie > 0)
    .map(({ item, votes, reasons }) => {
      const n = votes.first + votes.second + votes.tie;
      const sorted = (Object.entries(votes) as Array<[Preference, number]>).sort((x, y) => y[1] - x[1]);
      const majority = sorted[0][1] > sorted[1][1] ? sorted[0][0] : null;
      const topReason = [...reasons].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0]?.[0] ?? null;
      return {
        item,
        votes,
        n,
        majority,
        strength: sorted[0][1] / n,
        mainReason: majority === null || majority === 'tie' ? null : topReason,
      };
    });
}

function interAnnotator(
  input: AnalysisInput,
  byItem: Map<string, StudyItem>,
  majorities: ReturnType<typeof itemMajorities>,
) {
  const units = new Map<string, string[]>();
  for (const a of input.annotations)
    units.set(a.itemId, [...(units.get(a.itemId) ?? []), preferenceOf(a, byItem.get(a.itemId)!)]);
  const strengths = majorities.map((m) => m.strength);
  const distribution: Record<string, number> = {};
  for (const m of majorities) {
    const key = `${Math.max(m.votes.first, m.votes.second, m.votes.tie)}/${m.n}`;
    distribution[key] = (distribution[key] ?? 0) + 1;
  }
  return {
    krippendorffAlpha: krippendorffAlphaNominal([...units.values()]),
    items: majorities.length,
    itemsWithMajority: majorities.filter((m) => m.majority !== null).length,
    meanMajorityStrength: strengths.length ? mean(strengths) : null,
    majorityStrength: distribution,
  };
}

/** What a judge prefers on an item: the higher total, a tie within the margin, null when a judgment is missing. */
export function judgePreference(judge: JudgeScores, item: StudyItem, margin: number): Preference | null {
  const a = judge.scores.get(`${item.queryId}|${item.first}`);
  const b = judge.scores.get(`${item.queryId}|${item.second}`);
  if (!a || !b) return null;
  const diff = a.total - b.total;
  return Math.abs(diff) <= margin ? 'tie' : diff > 0 ? 'first' : 'second';
}

function agreementOf(pairs: Array<{ judge: Preference; human: Preference }>) {
  return {
    n: pairs.length,
    agreement: rate(pairs.filter((p) => p.judge === p.human).length, pairs.length),
    kappa: pairs.length
      ? cohenKappa(
          pairs.map((p) => p.judge),
          pairs.map((p) => p.human),
        )
      : null,
  };
}

/** A query's label field when it is one string (studies group LATTICE's task and category, CAB's tags cell). */
function textField(query: Query | undefined, name: string): string | null {
  const value = query?.[name];
  return typeof value === 'string' ? value : null;
}

function groupAgreement<T extends { judge: Preference; human: Preference }>(
  pairs: T[],
  key: (p: T) => string | null | undefined,
) {
  const groups = new Map<string, T[]>();
  for (const p of pairs) {
    const k = key(p);
    if (k) groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  return Object.fromEntries([...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, ps]) => [k, agreementOf(ps)]));
}

function judgeHuman(
  input: AnalysisInput,
  judge: JudgeScores,
  majorities: ReturnType<typeof itemMajorities>,
  perCopilot: Record<string, { winRate: number | null }>,
) {
  const compared: Array<{
    judge: Preference;
    human: Preference;
    m: (typeof majorities)[number];
    query: Query | undefined;
  }> = [];
  let noMajority = 0;
  let missingJudgment = 0;
  for (const m of majorities) {
    if (m.majority === null) {
      noMajority++;
      continue;
    }
    const pref = judgePreference(judge, m.item, input.tieMargin);
    if (pref === null) {
      missingJudgment++;
      continue;
    }
    compared.push({ judge: pref, human: m.majority, m, query: input.queries.get(m.item.queryId) });
  }
  // Leaderboard over the study's queries only, so both rankings rest on the same questions.
  const studyQueries = new Set(input.items.map((it) => it.queryId));
  const leaderboard = Object.fromEntries(
    input.copilots.map((c) => {
      const totals = [...studyQueries]
        .map((q) => judge.scores.get(`${q}|${c}`)?.total)
        .filter((t): t is number => t !== undefined);
      return [c, totals.length ? mean(totals) : null];
    }),
  );
  const ranked = input.copilots.filter((c) => leaderboard[c] !== null && perCopilot[c].winRate !== null);
  const tauB = kendallTauB(
    ranked.map((c) => leaderboard[c]!),
    ranked.map((c) => perCopilot[c].winRate!),
  );
  const tau = Number.isNaN(tauB) ? null : tauB;
  const opposite = (p: (typeof compared)[number]) => (p.judge === 'tie' || p.human === 'tie' ? 1 : 2);
  const disagreements = compared
    .filter((p) => p.judge !== p.human)
    .map((p) => {
      const a = judge.scores.get(`${p.m.item.queryId}|${p.m.item.first}`)!;
      const b = judge.scores.get(`${p.m.item.queryId}|${p.m.item.second}`)!;
      return { p, a, b, weight: opposite(p) * p.m.strength * p.m.n + Math.abs(a.total - b.total) / 1000 };
    })
    .sort((x, y) => y.weight - x.weight || (x.p.m.item.itemId < y.p.m.item.itemId ? -1 : 1))
    .slice(0, input.topDisagreements ?? 10)
    .map(({ p, a, b }) => ({
      itemId: p.m.item.itemId,
      queryId: p.m.item.queryId,
      query: p.query?.text ?? null,
      first: p.m.item.first,
      second: p.m.item.second,
      humanMajority: p.human,
      votes: p.m.votes,
      judgePreference: p.judge,
      judgeTotals: { [p.m.item.first]: a.total, [p.m.item.second]: b.total },
      judgeRationales: { [p.m.item.first]: a.rationales, [p.m.item.second]: b.rationales },
    }));
  return {
    judgeRunId: judge.judgeRunId,
    tieMargin: input.tieMargin,
    itemsCompared: compared.length,
    itemsWithoutMajority: noMajority,
    itemsWithoutJudgment: missingJudgment,
    overall: agreementOf(compared),
    byTask: groupAgreement(compared, (p) => textField(p.query, 'task')),
    byCategory: groupAgreement(compared, (p) => textField(p.query, 'category') ?? textField(p.query, 'tags')),
    byMainReason: groupAgreement(compared, (p) => p.m.mainReason ?? (p.human === 'tie' ? 'tie' : null)),
    leaderboard,
    kendallTau: tau,
    disagreements,
  };
}

export function analyseStudy(input: AnalysisInput) {
  const byItem = new Map(input.items.map((it) => [it.itemId, it]));
  const t7 = table7(input, byItem);
  const majorities = itemMajorities(input.items, input.annotations);
  return {
    table7: t7,
    table8: table8(input),
    table9: table9(input),
    interAnnotator: interAnnotator(input, byItem, majorities),
    judgeHuman: input.judges.map((j) => judgeHuman(input, j, majorities, t7.copilots)),
    items: majorities.map((m) => ({
      itemId: m.item.itemId,
      queryId: m.item.queryId,
      first: m.item.first,
      second: m.item.second,
      votes: m.votes,
      majority: m.majority,
      strength: m.strength,
      mainReason: m.mainReason,
    })),
  };
}

export type StudyAnalysis = ReturnType<typeof analyseStudy>;

export const toFacts = (annotations: RecordedAnnotation[]): AnnotationFact[] =>
  annotations.map((a) => ({ itemId: a.itemId, left: a.left, right: a.right, answer: a.answer }));
