/**
 * Calibrated win rates: the judge's pairwise preferences over every (query, pair) item of the run, corrected by the
 * difference between the annotators and the judge on the items people annotated — prediction-powered inference
 * (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 382, 2023), power-tuned
 * as PPI++ (Angelopoulos, Duchi and Zrnic 2023), and weighted by the items' inclusion probabilities when a study chose
 * its items actively (Zrnic and Candès, "Active statistical inference", 2024).
 *
 * A copilot's win rate is its share of wins among decisive preferences (ties left out; Table 7 of the LATTICE paper
 * prints wins ÷ appearances instead, see analysis.ts), a ratio of two means over the items that involve it: W, the
 * share of the item's preferences that go to the copilot, and D, the share that are decisive. Each is estimated as
 *
 *     θ̂(λ) = λ · mean over all items of the judge's value + Hájek mean over annotated items of (annotators' value − λ · judge's value)
 *
 * where the Hájek mean weights an annotated item by 1 / its inclusion probability (uniform designs: all equal, the
 * plain mean). λ = 1 is plain PPI; λ = 0 is the annotators alone. λ is chosen to minimise the estimated (linearised)
 * variance and clipped to [0, 1], so on that estimate the calibrated estimator is never less precise than the
 * annotators alone; below JACKKNIFE_BELOW annotated queries the reported variance is the larger of it and a query
 * jackknife of the tuned procedure (below), from there on λ = 0 is taken when the tuned variance is the larger.
 *
 * The interval linearises the ratio Ŵ / D̂ and sums each query's contributions (a query's items move together): the
 * variance is that of the query totals Z_q = A_q + λ·B_q (A from the annotators, B from the judge), and the quantile is
 * Student t with (annotated queries − 1) degrees of freedom. Below MIN_ANNOTATED_QUERIES there is no interval.
 *
 * When annotators and judge agree on every annotated item the correction is 0 but not known to be 0: the share of
 * disagreeing items is bounded at 95% by the rule of three (1 − 0.05^(1/n) ≈ 3/n with n annotated queries, or, for an
 * active design, ln 0.05 / ln(1 − smallest inclusion probability) items of the run), and a disagreement moves the
 * linearised ratio by at most 1 / D̂, so the interval is widened by that bound; more labels narrow it.
 */
import { studentTQuantile } from '../stats/stats';
import type { StudyItem } from './design';
import type { StudySpec } from './types';
import { judgePreference, preferenceOf, type AnnotationFact, type JudgeScores } from './analysis';

/** Fewer annotated queries than this give no calibrated interval (t intervals on fewer query totals cover too little). */
export const MIN_ANNOTATED_QUERIES = 10;
/** From this many annotated queries on the linearised variance alone is used (the jackknife guard costs queries × items). */
const JACKKNIFE_BELOW = 50;

export const CALIBRATION_METHOD =
  'PPI++ (Angelopoulos et al. 2023): the judge over every (query, pair) item of the run, plus the inclusion-weighted mean of annotators minus λ·judge on the annotated items, λ tuned in [0, 1]; wins among decisive preferences; 95% interval from the linearised variance of query totals with a t quantile on (annotated queries − 1) df; a rule-of-three bound on the correction when no disagreement was seen';

/** How the annotated items were chosen: all alike (uniform), or with known unequal probabilities (active). */
export type CalibrationDesign = { kind: 'uniform' } | { kind: 'active'; probabilities: Record<string, number> };

interface ItemValues {
  queryId: string;
  /** The judge's value: 1 the copilot won, 0 it lost or tied; decisive 1 unless a tie. */
  judgeWin: number;
  judgeDecisive: number;
  /** The annotators' shares on this item, when annotated, and its probability of having been annotated. */
  human: { win: number; decisive: number; probability: number } | null;
}

export interface CalibratedWinRate {
  /** calibrated; or why there is no interval. */
  status: 'calibrated' | 'too few annotated queries' | 'no annotated item' | 'no decisive preference';
  winRate: number | null;
  ci95: { low: number; high: number } | null;
  /** The power-tuning weight of the judge (1: plain PPI, 0: the annotators alone). */
  lambda: number | null;
  /** The same variance estimate with λ = 0: the annotators alone, for comparison. */
  humanOnlyCi95: { low: number; high: number } | null;
  /** The judge alone over every item of the run. */
  judgeOnly: number | null;
  /** The annotators alone over the annotated items (each item weighted once). */
  humanOnly: number | null;
  items: number;
  annotatedItems: number;
  annotatedQueries: number;
  /** With no disagreement seen: the 95% bound on the correction (points of win rate, 0–1) added to the interval. */
  noDisagreementBound: number | null;
  /** More annotated items (with as many annotations each as now) that would halve the interval; null with the reason when none would. */
  moreLabelsToHalve: number | null;
  moreLabelsNote: string | null;
  /** With a target width: the projected number of further annotated items to reach it (null when annotating every item would not). */
  moreLabelsToTarget: number | null;
}

export interface CalibrationInput {
  copilots: string[];
  /** Every query of the run. */
  queryIds: string[];
  studyItems: StudyItem[];
  annotations: AnnotationFact[];
  judge: JudgeScores;
  tieMargin: number;
  /** Default uniform: every annotated item had the same chance. */
  design?: CalibrationDesign;
  /** A width (0–1) for moreLabelsToTarget. */
  targetWidth?: number;
  /** A fixed λ instead of the tuned one (the bench compares plain PPI, λ = 1). */
  lambda?: number;
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const clamp = (x: number) => Math.min(1, Math.max(0, x));

/** The point estimates of W and D for a given λ (labelled items weighted by 1 / probability). */
function estimateWD(values: ItemValues[], lambda: number) {
  const N = values.length;
  let fW = 0;
  let fD = 0;
  let weight = 0;
  let cW = 0;
  let cD = 0;
  for (const v of values) {
    fW += v.judgeWin;
    fD += v.judgeDecisive;
    if (!v.human) continue;
    const w = 1 / v.human.probability;
    weight += w;
    cW += w * (v.human.win - lambda * v.judgeWin);
    cD += w * (v.human.decisive - lambda * v.judgeDecisive);
  }
  return { W: (lambda * fW) / N + cW / weight, D: (lambda * fD) / N + cD / weight };
}

/**
 * Per query, the linearised ratio's parts at rate r and decisive share d: `judge` = Σ of the judge's values over the
 * query's items (G_q), and the inclusion-weighted residuals of its annotated items, a + λ·c = Σ w·((y − m_y) − λ(g − m_g)).
 * The estimate's error is (1/N)·Σ_q (λ·G_q + a_q + λ·c_q).
 */
function queryTotals(values: ItemValues[], r: number, d: number) {
  const labelled = values.filter((v) => v.human);
  const wOf = (v: ItemValues) => 1 / v.human!.probability;
  const weight = sum(labelled.map(wOf));
  const g = (v: ItemValues) => (v.judgeWin - r * v.judgeDecisive) / d;
  const y = (v: ItemValues) => (v.human!.win - r * v.human!.decisive) / d;
  const my = sum(labelled.map((v) => wOf(v) * y(v))) / weight;
  const mg = sum(labelled.map((v) => wOf(v) * g(v))) / weight;
  const byQuery = new Map<string, { judge: number; a: number; c: number; annotated: boolean }>();
  for (const v of values) {
    const t = byQuery.get(v.queryId) ?? { judge: 0, a: 0, c: 0, annotated: false };
    t.judge += g(v);
    if (v.human) {
      t.a += wOf(v) * (y(v) - my);
      t.c -= wOf(v) * (g(v) - mg);
      t.annotated = true;
    }
    byQuery.set(v.queryId, t);
  }
  return [...byQuery.values()];
}

type QueryTotals = ReturnType<typeof queryTotals>;

/**
 * The variance of the estimate as a quadratic in λ: the judge's part over all Q queries (factor Q/(Q−1)), the
 * annotators' residuals over the n annotated queries (factor n/(n−1): they rest on n, not Q), and their covariance.
 */
function varianceCoefficients(totals: QueryTotals, items: number) {
  const Q = totals.length;
  const annotated = totals.filter((t) => t.annotated);
  const n = annotated.length;
  const cQ = Q > 1 ? Q / (Q - 1) : 1;
  const cL = n > 1 ? n / (n - 1) : 1;
  const meanG = sum(totals.map((t) => t.judge)) / Q;
  const sGG = sum(totals.map((t) => (t.judge - meanG) ** 2));
  const sGA = sum(annotated.map((t) => (t.judge - meanG) * t.a));
  const sGC = sum(annotated.map((t) => (t.judge - meanG) * t.c));
  const sAA = sum(annotated.map((t) => t.a * t.a));
  const sAC = sum(annotated.map((t) => t.a * t.c));
  const sCC = sum(annotated.map((t) => t.c * t.c));
  const N2 = items * items;
  return {
    quadratic: (cQ * sGG + cL * sCC + 2 * cQ * sGC) / N2,
    linear: (2 * cL * sAC + 2 * cQ * sGA) / N2,
    constant: (cL * sAA) / N2,
    judgeOnly: (cQ * sGG) / N2,
  };
}

function varianceAt(totals: QueryTotals, lambda: number, items: number) {
  const v = varianceCoefficients(totals, items);
  return Math.max(0, v.quadratic * lambda * lambda + v.linear * lambda + v.constant);
}

/** λ minimising that quadratic, clipped to [0, 1]. */
function tunedLambda(totals: QueryTotals, items: number): number {
  const v = varianceCoefficients(totals, items);
  return v.quadratic > 0 ? Math.min(1, Math.max(0, -v.linear / (2 * v.quadratic))) : 1;
}

/** λ tuned on these items (linearised at plain PPI). */
function tuneOn(values: ItemValues[]): number {
  const plain = estimateWD(values, 1);
  return plain.D > 0 ? tunedLambda(queryTotals(values, plain.W / plain.D, plain.D), values.length) : 1;
}

function rateWith(values: ItemValues[], lambda: number): number {
  const e = estimateWD(values, lambda);
  return e.D > 0 ? e.W / e.D : NaN;
}

/** Delete-one-query jackknife variance of `estimate` (queries without a usable estimate left out of the spread). */
function jackknifeVariance(values: ItemValues[], estimate: (values: ItemValues[]) => number): number {
  const queries = [...new Set(values.map((v) => v.queryId))];
  const Q = queries.length;
  const draws = queries.map((q) => estimate(values.filter((v) => v.queryId !== q))).filter(Number.isFinite);
  if (draws.length < 2) return 0;
  const m = sum(draws) / draws.length;
  return ((Q - 1) / Q) * sum(draws.map((x) => (x - m) ** 2));
}

/** The 95% upper bound on the share of items whose annotators would disagree with the judge, none having been seen. */
function disagreementBound(values: ItemValues[], annotatedQueries: number, design: CalibrationDesign): number {
  if (design.kind === 'uniform') return 1 - 0.05 ** (1 / annotatedQueries);
  const smallest = Math.min(...values.filter((v) => v.human).map((v) => v.human!.probability));
  return Math.min(1, Math.log(0.05) / Math.log(1 - Math.min(smallest, 1 - 1e-12)) / values.length);
}

function calibrateOne(itemValues: ItemValues[], input: CalibrationInput): CalibratedWinRate {
  const design = input.design ?? { kind: 'uniform' };
  // Uniform: every item of the run had the same chance, annotated items / all items.
  const share = itemValues.filter((v) => v.human).length / itemValues.length;
  const values =
    design.kind === 'uniform'
      ? itemValues.map((v) => (v.human ? { ...v, human: { ...v.human, probability: share } } : v))
      : itemValues;
  const labelled = values.filter((v) => v.human);
  const judgeDecisive = sum(values.map((v) => v.judgeDecisive));
  const humanDecisive = sum(labelled.map((v) => v.human!.decisive));
  const annotatedQueries = new Set(labelled.map((v) => v.queryId)).size;
  const base = {
    judgeOnly: judgeDecisive > 0 ? sum(values.map((v) => v.judgeWin)) / judgeDecisive : null,
    humanOnly: humanDecisive > 0 ? sum(labelled.map((v) => v.human!.win)) / humanDecisive : null,
    items: values.length,
    annotatedItems: labelled.length,
    annotatedQueries,
  };
  const none = {
    ci95: null,
    lambda: null,
    humanOnlyCi95: null,
    noDisagreementBound: null,
    moreLabelsToHalve: null,
    moreLabelsToTarget: null,
  };
  if (!labelled.length)
    return { ...base, ...none, status: 'no annotated item', winRate: null, moreLabelsNote: 'no annotated item' };
  const plain = estimateWD(values, 1);
  if (!(plain.D > 0))
    return {
      ...base,
      ...none,
      status: 'no decisive preference',
      winRate: null,
      moreLabelsNote: 'no decisive preference',
    };
  const agreeEverywhere = labelled.every((v) => v.human!.win === v.judgeWin && v.human!.decisive === v.judgeDecisive);
  if (annotatedQueries < MIN_ANNOTATED_QUERIES)
    return {
      ...base,
      ...none,
      status: 'too few annotated queries',
      winRate: clamp(plain.W / plain.D),
      lambda: 1,
      moreLabelsNote: `${annotatedQueries} annotated ${annotatedQueries === 1 ? 'query' : 'queries'}: at least ${MIN_ANNOTATED_QUERIES} are needed for a calibrated interval (the point is plain PPI, not to be read as calibrated)`,
    };

  // λ tuned on the linearisation at plain PPI, then the estimate and its variance at that λ. With no disagreement seen
  // the judge is taken whole (λ = 1) and the correction's uncertainty is the rule-of-three bound.
  const N = values.length;
  const human = estimateWD(values, 0);
  const humanVariance = human.D > 0 ? varianceAt(queryTotals(values, human.W / human.D, human.D), 0, N) : null;
  let lambda = agreeEverywhere ? 1 : (input.lambda ?? tuneOn(values));
  // A λ tuned on few annotated queries is tuned to their noise: the tuned estimate's variance is the larger of the
  // linearised one and a delete-one-query jackknife of the whole procedure (λ re-tuned each time). (Reporting the
  // narrower of this and the annotators-alone interval was tried there: picking the narrower covered 91.8% at 10
  // queries.) From JACKKNIFE_BELOW on, λ was tuned at plain PPI's linearisation point: when, at its own, the tuned
  // variance exceeds the annotators' alone, λ = 0 is the better tuning and is taken (PPI++ is then never less precise).
  const tuned = !agreeEverywhere && input.lambda === undefined;
  const jackknifed = tuned && annotatedQueries < JACKKNIFE_BELOW;
  let est = estimateWD(values, lambda);
  let d = est.D > 0 ? est.D : plain.D;
  let totals = queryTotals(values, est.W / d, d);
  if (tuned && !jackknifed && humanVariance !== null && varianceAt(totals, lambda, N) > humanVariance) {
    lambda = 0;
    est = human;
    d = human.D;
    totals = queryTotals(values, est.W / d, d);
  }
  const rate = est.W / d;
  const df = annotatedQueries - 1;
  const t = studentTQuantile(0.975, df);
  const bound = agreeEverywhere ? disagreementBound(values, annotatedQueries, design) / d : 0;
  const variance = Math.max(
    varianceAt(totals, lambda, N),
    jackknifed ? jackknifeVariance(values, (vs) => rateWith(vs, tuneOn(vs))) : 0,
  );
  const half = t * Math.sqrt(variance) + bound;
  const ci95 = { low: clamp(rate - half), high: clamp(rate + half) };
  const humanHalf = t * Math.sqrt(humanVariance ?? varianceAt(totals, 0, N));
  const humanCentre = human.D > 0 ? human.W / human.D : rate;
  const humanOnlyCi95 = { low: clamp(humanCentre - humanHalf), high: clamp(humanCentre + humanHalf) };

  // Projection: the judge's part of the variance stays, the correction's shrinks as 1 / annotated items (and so do
  // the t quantile's degrees of freedom and the no-disagreement bound, with annotated queries in proportion).
  const judgeVariance = lambda * lambda * varianceCoefficients(totals, N).judgeOnly;
  const correctionVariance = Math.max(0, varianceAt(totals, lambda, N) - judgeVariance);
  const queries = new Set(values.map((v) => v.queryId)).size;
  const halfWidthWith = (n: number) => {
    const aq = Math.min(queries, Math.max(2, Math.round((annotatedQueries * n) / labelled.length)));
    const b = agreeEverywhere
      ? (design.kind === 'uniform' ? 1 - 0.05 ** (1 / aq) : (bound * d * labelled.length) / n) / d
      : 0;
    return studentTQuantile(0.975, aq - 1) * Math.sqrt(judgeVariance + (correctionVariance * labelled.length) / n) + b;
  };
  const moreFor = (width: number): number | null => {
    if (labelled.length >= N) return null;
    if (2 * halfWidthWith(N) > width) return null;
    let lo = labelled.length;
    let hi = N;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (2 * halfWidthWith(mid) <= width) hi = mid;
      else lo = mid;
    }
    return Math.max(0, hi - labelled.length);
  };
  const moreLabelsToHalve = moreFor(half);
  let moreLabelsNote: string | null = null;
  if (labelled.length >= N) moreLabelsNote = 'every item is annotated: only more queries would narrow it';
  else if (moreLabelsToHalve === null)
    moreLabelsNote = 'annotating every item of the run would not halve it: only more queries would';
  if (agreeEverywhere)
    moreLabelsNote = `annotators and judge agreed on all ${labelled.length} annotated items: the correction is taken as 0 within ±${(100 * bound).toFixed(1)} points (rule of three); more labels would narrow it${moreLabelsNote ? `; ${moreLabelsNote}` : ''}`;
  return {
    ...base,
    status: 'calibrated',
    winRate: clamp(rate),
    ci95,
    lambda,
    humanOnlyCi95,
    noDisagreementBound: agreeEverywhere ? bound : null,
    moreLabelsToHalve,
    moreLabelsNote,
    moreLabelsToTarget:
      input.targetWidth === undefined ? null : 2 * half <= input.targetWidth ? 0 : moreFor(input.targetWidth),
  };
}

export interface CalibratedWinRates {
  judgeRunId: string;
  tieMargin: number;
  items: number;
  annotatedItems: number;
  itemsWithoutJudgment: number;
  annotatedItemsWithoutJudgment: number;
  method: string;
  design: CalibrationDesign['kind'];
  minimumAnnotatedQueries: number;
  copilots: Record<string, CalibratedWinRate>;
}

/** `study.json.calibrated`: calibrated, judge-only and human-only win rates per copilot. */
export function calibratedWinRates(input: CalibrationInput): CalibratedWinRates {
  const pairKey = (q: string, a: string, b: string) => `${q}\u0000${[a, b].sort().join('\u0000')}`;
  const studyItemOf = new Map(input.studyItems.map((it) => [pairKey(it.queryId, it.first, it.second), it]));
  const votes = new Map<string, AnnotationFact[]>();
  for (const a of input.annotations) votes.set(a.itemId, [...(votes.get(a.itemId) ?? []), a]);
  const values = new Map(input.copilots.map((c) => [c, [] as ItemValues[]]));
  const probabilityOf = inclusionProbabilities(input, votes);
  let items = 0;
  let withoutJudgment = 0;
  let annotatedWithoutJudgment = 0;
  let annotated = 0;
  for (const queryId of input.queryIds)
    for (let i = 0; i < input.copilots.length; i++)
      for (let j = i + 1; j < input.copilots.length; j++) {
        const [a, b] = [input.copilots[i], input.copilots[j]];
        const studyItem = studyItemOf.get(pairKey(queryId, a, b));
        const item: StudyItem = studyItem ?? { itemId: `${queryId}|${a}|${b}`, queryId, first: a, second: b };
        const judged = judgePreference(input.judge, item, input.tieMargin);
        const annotations = studyItem ? (votes.get(studyItem.itemId) ?? []) : [];
        if (judged === null) {
          withoutJudgment++;
          if (annotations.length) annotatedWithoutJudgment++;
          continue;
        }
        items++;
        if (annotations.length) annotated++;
        const prefs = annotations.map((x) => preferenceOf(x, item));
        const share = (p: string) => prefs.filter((x) => x === p).length / prefs.length;
        for (const [c, side] of [
          [item.first, 'first'],
          [item.second, 'second'],
        ] as const)
          values.get(c)!.push({
            queryId,
            judgeWin: judged === side ? 1 : 0,
            judgeDecisive: judged === 'tie' ? 0 : 1,
            human: prefs.length
              ? { win: share(side), decisive: 1 - share('tie'), probability: probabilityOf(studyItem!.itemId) }
              : null,
          });
      }
  return {
    judgeRunId: input.judge.judgeRunId,
    tieMargin: input.tieMargin,
    items,
    annotatedItems: annotated,
    itemsWithoutJudgment: withoutJudgment,
    annotatedItemsWithoutJudgment: annotatedWithoutJudgment,
    method: CALIBRATION_METHOD,
    design: input.design?.kind ?? 'uniform',
    minimumAnnotatedQueries: MIN_ANNOTATED_QUERIES,
    copilots: Object.fromEntries(input.copilots.map((c) => [c, calibrateOne(values.get(c)!, input)])),
  };
}

/**
 * Each annotated item's probability of having been annotated. Uniform: all alike (the value cancels in the Hájek
 * mean). Active: the design's selection probability times the share of selected items that got an annotation (an item
 * selected but left unannotated is taken as missing at random among the selected).
 */
function inclusionProbabilities(
  input: CalibrationInput,
  votes: Map<string, AnnotationFact[]>,
): (itemId: string) => number {
  const design = input.design;
  if (!design || design.kind === 'uniform') return () => 1; // replaced by the annotated share in calibrateOne
  const selected = input.studyItems.filter((it) => design.probabilities[it.itemId] !== undefined);
  const completion = selected.length ? selected.filter((it) => votes.has(it.itemId)).length / selected.length : 1;
  return (itemId) => {
    const p = design.probabilities[itemId];
    if (!(p > 0 && p <= 1))
      throw new RangeError(
        `calibrated win rates: item ${itemId} is annotated but the active design gives it no inclusion probability`,
      );
    return p * completion;
  };
}

/** A stored study's design as the calibration reads it. */
export function calibrationDesignOf(spec: Pick<StudySpec, 'selection'>): CalibrationDesign {
  return spec.selection?.method === 'active'
    ? { kind: 'active', probabilities: spec.selection.probabilities }
    : { kind: 'uniform' };
}
