/**
 * How stable a copilot's answers are over runs of the same queries (LATTICE's "response variability over time"):
 * text similarity of consecutive answers to one query, the share that changed beyond a threshold, and the variance of
 * a query's score across runs set against the judge's own variance on one response (from repeated judging, `samples`),
 * tested with an F test, so a copilot that drifts can be told from a judge that wobbles at a stated error rate. Pure.
 */
import { fSurvival, mean } from './stats';
import { normalizeText, similarity } from '../snapshots/text';
import type { Query } from '../model/types';

export interface StabilityRunInput {
  runId: string;
  startedAt: string;
  copilots: string[];
  queries: Query[];
  /** Ok answers only are compared. */
  responses: Array<{ queryId: string; copilot: string; status: string; text: string | null }>;
  /** Every ok judgment, every sample (sample 0.. of one unit), single judge or panel member. */
  judgments: Array<{
    queryId: string;
    copilot: string;
    status: string;
    total: number | null;
    sample?: number;
    judgeName?: string;
  }>;
}

export interface CopilotStability {
  /** Answer pairs compared: the same query answered in two consecutive runs. */
  compared: number;
  meanSimilarity: number | null;
  /** Share of those pairs less similar than the threshold. */
  changedShare: number | null;
  /** Mean over queries of the variance of the query's score (mean over samples) across runs. */
  scoreVarianceAcrossRuns: number | null;
  /** Mean over judged responses of the variance between the judge's samples of that one response; null without samples ≥ 2. */
  judgeVarianceWithinResponse: number | null;
  /** Judge samples per (response, run), the mean over them: each unit's own count enters the test, not the largest one. */
  samples: number;
  /** The F statistic below: about 1 when the judge's noise explains the movement. */
  varianceRatio: number | null;
  /**
   * One-way ANOVA of runs within each (query, judge) unit: the mean square between a unit's runs (each run's mean of
   * its samples, weighted by its own sample count) over the mean square between samples of one response. Under "the
   * scores moved only by the judge's noise" (normal, equal noise) F follows F(df1, df2); p below DRIFT_ALPHA reads as drift.
   */
  fTest: { f: number; df1: number; df2: number; p: number } | null;
  /** The false-drift rate the reading is held to. */
  alpha: number;
  /**
   * stable: the scores did not move; answers drift: the F test says they moved more than the judge's noise (p < alpha),
   * and the answers changed; judge drift: the same, but the answers did not change; judge wobble: within the judge's noise.
   */
  reading: 'stable' | 'answers drift' | 'judge drift' | 'judge wobble' | 'not enough runs' | 'no judge samples';
}

export interface Stability {
  threshold: number;
  runs: Array<{ runId: string; startedAt: string }>;
  copilots: Record<string, CopilotStability>;
}

const variance = (xs: number[]) => {
  if (xs.length < 2) return null;
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
};
const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);

/** The F test's level: pure judge noise reads as drift in at most this share of copilots (normal noise). */
export const DRIFT_ALPHA = 0.05;

/** Between-run and within-run sums of squares of each unit's samples (units: one query and judge; per run, its samples). */
function runAnova(byUnit: Map<string, number[][]>) {
  let between = 0;
  let df1 = 0;
  let within = 0;
  let df2 = 0;
  for (const runs of byUnit.values()) {
    const present = runs.filter((xs) => xs.length > 0);
    for (const xs of present) {
      const m = mean(xs);
      within += xs.reduce((s, x) => s + (x - m) ** 2, 0);
      df2 += xs.length - 1;
    }
    if (present.length < 2) continue;
    const count = present.reduce((s, xs) => s + xs.length, 0);
    const grand = present.reduce((s, xs) => s + xs.reduce((a, b) => a + b, 0), 0) / count;
    between += present.reduce((s, xs) => s + xs.length * (mean(xs) - grand) ** 2, 0);
    df1 += present.length - 1;
  }
  return { between, df1, within, df2 };
}

export function stability(runs: StabilityRunInput[], options: { threshold?: number } = {}): Stability {
  const threshold = options.threshold ?? 0.8;
  const ordered = [...runs].sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0));
  const copilots = [...new Set(ordered.flatMap((r) => r.copilots))];
  // A query is the same across runs when its normalised text is (ids are positional across snapshots).
  const textKey = (run: StabilityRunInput) => {
    const byId = new Map(run.queries.map((q) => [q.id, normalizeText(q.text)]));
    return (queryId: string) => byId.get(queryId) ?? `id:${queryId}`;
  };
  const keys = ordered.map(textKey);
  const out: Record<string, CopilotStability> = {};
  for (const copilot of copilots) {
    const answers = ordered.map(
      (r, k) =>
        new Map(
          r.responses
            .filter((x) => x.copilot === copilot && x.status === 'ok' && x.text !== null)
            .map((x) => [keys[k](x.queryId), x.text!]),
        ),
    );
    const sims: number[] = [];
    for (let k = 1; k < ordered.length; k++)
      for (const [q, text] of answers[k])
        if (answers[k - 1].has(q)) sims.push(similarity(answers[k - 1].get(q)!, text));

    const perRun = ordered.map((r, k) => {
      const units = new Map<string, number[]>();
      for (const j of r.judgments) {
        if (j.copilot !== copilot || j.status !== 'ok' || j.total === null) continue;
        const unit = `${keys[k](j.queryId)}\u0000${j.judgeName ?? ''}`;
        units.set(unit, [...(units.get(unit) ?? []), j.total]);
      }
      return units;
    });
    const within = perRun.flatMap((units) =>
      [...units.values()].flatMap((totals) => (totals.length > 1 ? [variance(totals)!] : [])),
    );
    const counts = perRun.flatMap((units) => [...units.values()].map((t) => t.length));
    const samples = counts.length ? mean(counts) : 1;
    const scoresByQuery = new Map<string, number[]>();
    const samplesByUnit = new Map<string, number[][]>();
    perRun.forEach((units, k) => {
      for (const [unit, totals] of units) {
        scoresByQuery.set(unit, [...(scoresByQuery.get(unit) ?? []), mean(totals)]);
        const runsOfUnit = samplesByUnit.get(unit) ?? ordered.map(() => []);
        runsOfUnit[k] = totals;
        samplesByUnit.set(unit, runsOfUnit);
      }
    });
    const across = [...scoresByQuery.values()].flatMap((xs) => (xs.length > 1 ? [variance(xs)!] : []));

    const acrossVar = meanOrNull(across);
    const withinVar = meanOrNull(within);
    const anova = runAnova(samplesByUnit);
    const f =
      anova.df1 > 0 && anova.df2 > 0
        ? anova.within > 0
          ? anova.between / anova.df1 / (anova.within / anova.df2)
          : anova.between > 0
            ? Infinity
            : 0
        : null;
    const fTest =
      f === null ? null : { f, df1: anova.df1, df2: anova.df2, p: f === 0 ? 1 : fSurvival(f, anova.df1, anova.df2) };
    let reading: CopilotStability['reading'];
    if (ordered.length < 2 || acrossVar === null) reading = 'not enough runs';
    else if (acrossVar === 0) reading = 'stable';
    else if (fTest === null) reading = 'no judge samples';
    else if (fTest.p < DRIFT_ALPHA)
      reading = sims.length && sims.every((x) => x >= threshold) ? 'judge drift' : 'answers drift';
    else reading = 'judge wobble';
    out[copilot] = {
      compared: sims.length,
      meanSimilarity: meanOrNull(sims),
      changedShare: sims.length ? sims.filter((s) => s < threshold).length / sims.length : null,
      scoreVarianceAcrossRuns: acrossVar,
      judgeVarianceWithinResponse: withinVar,
      samples,
      varianceRatio: fTest && Number.isFinite(fTest.f) ? fTest.f : null,
      fTest,
      alpha: DRIFT_ALPHA,
      reading,
    };
  }
  return { threshold, runs: ordered.map((r) => ({ runId: r.runId, startedAt: r.startedAt })), copilots: out };
}
