/**
 * How stable a copilot's answers are over runs of the same queries (LATTICE's "response variability over time"):
 * text similarity of consecutive answers to one query, the share that changed beyond a threshold, and the variance of
 * a query's score across runs set against the judge's own variance on one response (from repeated judging, `samples`),
 * so a copilot that drifts can be told from a judge that wobbles. Pure.
 */
import { mean } from './stats';
import { normalizeText, similarity } from './text';
import type { Query } from './types';

export interface StabilityRunInput {
  runId: string;
  startedAt: string;
  copilots: string[];
  queries: Query[];
  /** Ok answers only are compared. */
  responses: Array<{ queryId: string; copilot: string; status: string; text: string | null }>;
  /** Every ok judgment, every sample (sample 0.. of one unit), single judge or panel member. */
  judgments: Array<{ queryId: string; copilot: string; status: string; total: number | null; sample?: number; judgeName?: string }>;
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
  /** Samples per response: a run's score of a response is their mean, so its judge noise is within-variance / samples. */
  samples: number;
  /** scoreVarianceAcrossRuns ÷ (judgeVarianceWithinResponse ÷ samples): about 1 when the judge's noise explains the movement. */
  varianceRatio: number | null;
  /**
   * stable: the scores did not move; answers drift: they moved more than the judge's noise, and the answers changed;
   * judge drift: they moved more than its noise, but the answers did not change; judge wobble: within the judge's noise.
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

/** A ratio this far above 1 (the score moves more than the judge's noise allows) reads as drift. */
const DRIFT_RATIO = 2;

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
    const answers = ordered.map((r, k) => new Map(r.responses.filter((x) => x.copilot === copilot && x.status === 'ok' && x.text !== null).map((x) => [keys[k](x.queryId), x.text!])));
    const sims: number[] = [];
    for (let k = 1; k < ordered.length; k++) for (const [q, text] of answers[k]) if (answers[k - 1].has(q)) sims.push(similarity(answers[k - 1].get(q)!, text));

    const perRun = ordered.map((r, k) => {
      const units = new Map<string, number[]>();
      for (const j of r.judgments) {
        if (j.copilot !== copilot || j.status !== 'ok' || j.total === null) continue;
        const unit = `${keys[k](j.queryId)}\u0000${j.judgeName ?? ''}`;
        units.set(unit, [...(units.get(unit) ?? []), j.total]);
      }
      return units;
    });
    const within = perRun.flatMap((units) => [...units.values()].flatMap((totals) => (totals.length > 1 ? [variance(totals)!] : [])));
    const samples = Math.max(1, ...perRun.flatMap((units) => [...units.values()].map((t) => t.length)));
    const scoresByQuery = new Map<string, number[]>();
    for (const units of perRun) for (const [unit, totals] of units) scoresByQuery.set(unit, [...(scoresByQuery.get(unit) ?? []), mean(totals)]);
    const across = [...scoresByQuery.values()].flatMap((xs) => (xs.length > 1 ? [variance(xs)!] : []));

    const acrossVar = meanOrNull(across);
    const withinVar = meanOrNull(within);
    const ratio = acrossVar !== null && withinVar !== null && withinVar > 0 ? acrossVar / (withinVar / samples) : null;
    let reading: CopilotStability['reading'];
    if (ordered.length < 2 || acrossVar === null) reading = 'not enough runs';
    else if (acrossVar === 0) reading = 'stable';
    else if (withinVar === null) reading = 'no judge samples';
    else if (withinVar === 0 || (ratio !== null && ratio > DRIFT_RATIO)) reading = sims.length && sims.every((x) => x >= threshold) ? 'judge drift' : 'answers drift';
    else reading = 'judge wobble';
    out[copilot] = {
      compared: sims.length,
      meanSimilarity: meanOrNull(sims),
      changedShare: sims.length ? sims.filter((s) => s < threshold).length / sims.length : null,
      scoreVarianceAcrossRuns: acrossVar,
      judgeVarianceWithinResponse: withinVar,
      samples,
      varianceRatio: ratio,
      reading,
    };
  }
  return { threshold, runs: ordered.map((r) => ({ runId: r.runId, startedAt: r.startedAt })), copilots: out };
}
