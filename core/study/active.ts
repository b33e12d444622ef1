/**
 * Active selection of the items people annotate: spend labels where the judge is least certain, with known inclusion
 * probabilities so that the calibrated estimate can weight by them and stay unbiased (Zrnic and Candès, "Active
 * statistical inference", ICML 2024). Pure.
 *
 * An item's uncertainty is the probability that the judge's order of the two answers would flip on a fresh look:
 * 2·Φ(−|mean_a − mean_b| / σ), with σ² the variance of the difference of the two means over the judge's samples and
 * panel members of each answer (samples disagree, panel members disagree: σ grows; scores near the rank boundary:
 * the gap shrinks). An answer judged once borrows the run's pooled within-answer variance.
 *
 * Inclusion probabilities are proportional to a mix of its square root and the uniform, π_i = budget · ((1 − s)·√u_i / Σ√u +
 * s / N), capped at 1 (the excess spread over the others), so every item has π_i ≥ s · budget / N: an item the judge is
 * sure of still has a chance, which keeps the weights 1/π bounded. Items are drawn independently (Poisson sampling),
 * seeded: the expected number drawn is the budget.
 */
import { normalCdf } from '../stats/stats';
import { seededRandom } from '../stats/random';
import type { StudyItem } from './design';

/** How a study chose its items; stored with the study (spec.selection). */
export type StudySelection =
  | { method: 'uniform' }
  | {
      method: 'active';
      /** What the probabilities follow (absent: the judge's uncertainty, for studies made before the disagreement model). */
      basis?: 'judge uncertainty' | 'disagreement';
      /** basis disagreement: the earlier study the model was fitted on. */
      disagreementFrom?: string;
      budget: number;
      uniformShare: number;
      floor: number;
      candidates: number;
      probabilities: Record<string, number>;
    };

/** The share of the inclusion probability spread uniformly (the rest follows the judge's uncertainty). */
export const ACTIVE_UNIFORM_SHARE = 0.3;

/** Per item, the judge's uncertainty in (0, 1]. `samples(queryId, copilot)`: every total the judges gave that answer. */
export function uncertaintyScores(
  items: StudyItem[],
  samples: (queryId: string, copilot: string) => number[],
): number[] {
  const variance = (xs: number[]) => {
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
  };
  const answers = new Map<string, number[]>();
  for (const it of items)
    for (const c of [it.first, it.second]) answers.set(`${it.queryId}|${c}`, samples(it.queryId, c));
  const repeated = [...answers.values()].filter((xs) => xs.length > 1);
  const df = repeated.reduce((s, xs) => s + xs.length - 1, 0);
  const pooled = df ? repeated.reduce((s, xs) => s + variance(xs) * (xs.length - 1), 0) / df : null;
  // Without any repeated judgment: a tenth of the spread of the answers' scores stands for the judge's noise.
  const means = [...answers.values()].filter((xs) => xs.length).map((xs) => xs.reduce((s, x) => s + x, 0) / xs.length);
  const fallback = means.length > 1 ? variance(means) / 100 : 1;
  const noise = pooled !== null && pooled > 0 ? pooled : fallback > 0 ? fallback : 1;
  return items.map((it) => {
    const a = answers.get(`${it.queryId}|${it.first}`)!;
    const b = answers.get(`${it.queryId}|${it.second}`)!;
    if (!a.length || !b.length) return 1;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const v = (xs: number[]) => (xs.length > 1 ? Math.max(variance(xs), noise / 4) : noise) / xs.length;
    const sd = Math.sqrt(v(a) + v(b));
    return Math.max(1e-6, 2 * normalCdf(-Math.abs(mean(a) - mean(b)) / sd));
  });
}

/** π_i ∝ (1 − s)·√u_i/Σ√u + s/N scaled to the budget, each capped at 1 with the excess spread over the rest. */
export function inclusionProbabilities(
  uncertainty: number[],
  budget: number,
  uniformShare = ACTIVE_UNIFORM_SHARE,
): number[] {
  const n = uncertainty.length;
  if (!(budget > 0 && budget <= n))
    throw new RangeError(`active selection: the budget must be between 1 and the ${n} items, got ${budget}`);
  // The variance-optimal probabilities go as the square root of the expected squared error (Zrnic and Candès), and a
  // disagreement's squared error is about the flip probability: hence √u.
  const root = uncertainty.map(Math.sqrt);
  const total = root.reduce((s, u) => s + u, 0);
  const shape = root.map((u) => (1 - uniformShare) * (u / total) + uniformShare / n);
  const p = new Array<number>(n).fill(0);
  const capped = new Set<number>();
  // Water-filling: items whose share would exceed 1 are fixed at 1 and the rest rescaled to the remaining budget.
  for (;;) {
    const free = shape.reduce((s, x, i) => (capped.has(i) ? s : s + x), 0);
    const left = budget - capped.size;
    let changed = false;
    for (let i = 0; i < n; i++) {
      if (capped.has(i)) continue;
      p[i] = (shape[i] / free) * left;
      if (p[i] >= 1) {
        capped.add(i);
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (const i of capped) p[i] = 1;
  return p;
}

/** Independent seeded draws: item i is selected with probability π_i. */
export function drawItems<T>(items: T[], probabilities: number[], seed: string): T[] {
  const rand = seededRandom(`${seed}/active`);
  return items.filter((_, i) => rand() < probabilities[i]);
}

/** Design an active selection over every candidate item: the items to annotate and the record stored with the study. */
export function activeSelection(
  candidates: StudyItem[],
  samples: (queryId: string, copilot: string) => number[],
  budget: number,
  seed: string,
): { items: StudyItem[]; selection: StudySelection } {
  const u = uncertaintyScores(candidates, samples);
  const p = inclusionProbabilities(u, budget);
  const items = drawItems(candidates, p, seed);
  const index = new Map(candidates.map((it, i) => [it.itemId, i]));
  return {
    items,
    selection: {
      method: 'active',
      basis: 'judge uncertainty',
      budget,
      uniformShare: ACTIVE_UNIFORM_SHARE,
      floor: Math.min(...p),
      candidates: candidates.length,
      probabilities: Object.fromEntries(items.map((it) => [it.itemId, p[index.get(it.itemId)!]])),
    },
  };
}

// ----------------------------------------------------------------------------------------------------------------
// Selection by a disagreement model: where annotators and this judge disagreed in an earlier, annotated study
// ----------------------------------------------------------------------------------------------------------------
//
// A biased judge's samples agree with each other, so its uncertainty does not show where it is wrong; only labels do.
// An earlier annotated study of the same judge gives, per stratum (the copilot pair and a quantile of the judge's
// score gap within it), the mean squared disagreement v between annotators and judge; the new study's items get
// π_i ∝ (1 − s)·√v + s (inclusionProbabilities), fixed before any of its labels, so the inclusion-weighted
// calibration stays unbiased whatever the model got wrong. (A pilot inside the study, a uniform 30–50% of the budget
// and then sampling by what it saw, was tried in the bench: a few pilot items per stratum gave no narrower interval
// than uniform selection.)

/** Strata per copilot pair (quantiles of the judge's gap). */
export const GAP_STRATA = 4;
/** Pseudo-items pulling a stratum's disagreement towards the overall mean. */
const SHRINK_ITEMS = 2;

/** Per copilot pair, the judge-gap cut points (first − second) of `bins` equal-count strata. */
export function gapCuts(
  items: StudyItem[],
  gap: (item: StudyItem) => number,
  bins = GAP_STRATA,
): Map<string, number[]> {
  const byPair = new Map<string, number[]>();
  for (const it of items)
    byPair.set(`${it.first}|${it.second}`, [...(byPair.get(`${it.first}|${it.second}`) ?? []), gap(it)]);
  return new Map(
    [...byPair].map(([pair, gaps]) => {
      const sorted = [...gaps].sort((a, b) => a - b);
      return [pair, Array.from({ length: bins - 1 }, (_, k) => sorted[Math.floor(((k + 1) * sorted.length) / bins)])];
    }),
  );
}

/** Per item its stratum: the copilot pair and which of `cuts` its judge gap falls between. */
export function gapStrata(items: StudyItem[], gap: (item: StudyItem) => number, cuts: Map<string, number[]>): string[] {
  return items.map((it) => {
    const pair = `${it.first}|${it.second}`;
    const g = gap(it);
    return `${pair}#${(cuts.get(pair) ?? []).filter((c) => g >= c).length}`;
  });
}

/** The squared disagreement of one annotated item: (annotators' lean to the first answer, −1 to 1, − the judge's sign)². */
export function squaredDisagreement(annotatorLean: number, judgeGap: number): number {
  return (annotatorLean - Math.sign(judgeGap)) ** 2;
}

export interface DisagreementModel {
  cuts: Map<string, number[]>;
  /** Per stratum, the shrunk mean squared disagreement. */
  byStratum: Map<string, number>;
  overall: number;
}

/** The model from an earlier study's annotated items: each with its judge gap (first − second) and squared disagreement. */
export function disagreementModel(
  items: StudyItem[],
  gap: (item: StudyItem) => number,
  disagreement: (item: StudyItem) => number,
): DisagreementModel {
  if (!items.length) throw new RangeError('disagreement model: the earlier study has no annotated item');
  const cuts = gapCuts(items, gap);
  const strata = gapStrata(items, gap, cuts);
  const d = items.map(disagreement);
  const overall = d.reduce((s, x) => s + x, 0) / d.length;
  const sums = new Map<string, { s: number; n: number }>();
  strata.forEach((k, i) => sums.set(k, { s: (sums.get(k)?.s ?? 0) + d[i], n: (sums.get(k)?.n ?? 0) + 1 }));
  return {
    cuts,
    overall,
    byStratum: new Map([...sums].map(([k, t]) => [k, (t.s + SHRINK_ITEMS * overall) / (t.n + SHRINK_ITEMS)])),
  };
}

/** Inclusion probabilities of a new study's items by the model (√v mixed with the uniform share, capped at 1, summing to the budget). */
export function disagreementProbabilities(
  items: StudyItem[],
  gap: (item: StudyItem) => number,
  model: DisagreementModel,
  budget: number,
): number[] {
  const strata = gapStrata(items, gap, model.cuts);
  // inclusionProbabilities takes the square root; a stratum the model never saw gets the overall mean.
  return inclusionProbabilities(
    strata.map((k) => Math.max(1e-6, model.byStratum.get(k) ?? model.overall)),
    budget,
  );
}
