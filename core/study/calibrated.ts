/**
 * Calibrated win rates: the judge's pairwise preferences over every (query, pair) item of the run, corrected by the
 * difference between the annotators and the judge on the items people annotated — prediction-powered inference
 * (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 382, 2023).
 *
 * A copilot's win rate is its share of wins among decisive preferences (ties left out, as in Table 7), so it is a ratio
 * of two means over the items that involve it: W, the share of the item's preferences that go to the copilot, and D,
 * the share that are decisive. Each is estimated the PPI way,
 *
 *     θ̂ = mean over all items of the judge's value + mean over annotated items of (annotators' value − judge's value),
 *
 * and the win rate is Ŵ / D̂. When every item is annotated the judge's values cancel and it is the annotators' own
 * win rate; when the judge agrees with the annotators wherever both answered it is the judge's rate over all items,
 * with an interval that shrinks with the run's size rather than the study's. The 95% interval is a percentile
 * bootstrap stratified by query (the annotated queries and the others resampled separately, each keeping its size; a
 * query's items stay together), so it covers the two sources of error: the judge's sampling over the run, and the
 * correction's over the annotated items.
 *
 * How many more labels would halve the interval is projected with the normal approximation of the same estimator
 * (items independent, the ratio linearised): V(n) = σ²/N + (1/n − 1/N)·σ²_Δ with σ² the annotators' variance and σ²_Δ
 * that of the annotator−judge difference. It is null when even annotating every item could not quarter V (the run
 * then needs more queries, not more labels).
 */
import { randomIndex, seededRandom } from '../random';
import { quantileSorted } from '../stats';
import type { StudyItem } from './design';
import { judgePreference, preferenceOf, type AnnotationFact, type JudgeScores } from './analysis';

export const CALIBRATION_METHOD =
  'prediction-powered inference (Angelopoulos et al. 2023): the judge over every (query, pair) item of the run, corrected by annotators minus judge on the annotated items; wins among decisive preferences; 95% percentile bootstrap stratified by query (annotated queries and the others resampled separately)';

interface ItemValues {
  queryId: string;
  /** The judge's value: 1 the copilot won, 0 it lost or tied; decisive 1 unless a tie. */
  judgeWin: number;
  judgeDecisive: number;
  /** The annotators' shares on this item, when annotated. */
  human: { win: number; decisive: number } | null;
}

export interface CalibratedWinRate {
  winRate: number | null;
  ci95: { low: number; high: number } | null;
  /** The judge alone over every item of the run. */
  judgeOnly: number | null;
  /** The annotators alone over the annotated items (each item weighted once). */
  humanOnly: number | null;
  items: number;
  annotatedItems: number;
  /** More annotated items (with as many annotations each as now) that would halve the interval; null with the reason when none would. */
  moreLabelsToHalve: number | null;
  moreLabelsNote: string | null;
}

export interface CalibrationInput {
  copilots: string[];
  /** Every query of the run. */
  queryIds: string[];
  studyItems: StudyItem[];
  annotations: AnnotationFact[];
  judge: JudgeScores;
  tieMargin: number;
  seed: string;
  iterations?: number;
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

/** Sums over a query's items (or over a sample of queries): what the estimator needs. */
interface Sums {
  items: number;
  judgeWin: number;
  judgeDecisive: number;
  labelled: number;
  /** Σ over annotated items of annotators − judge. */
  winCorrection: number;
  decisiveCorrection: number;
}

function sumsOf(values: ItemValues[]): Sums {
  const s: Sums = { items: 0, judgeWin: 0, judgeDecisive: 0, labelled: 0, winCorrection: 0, decisiveCorrection: 0 };
  for (const v of values) add(s, { items: 1, judgeWin: v.judgeWin, judgeDecisive: v.judgeDecisive, labelled: v.human ? 1 : 0, winCorrection: v.human ? v.human.win - v.judgeWin : 0, decisiveCorrection: v.human ? v.human.decisive - v.judgeDecisive : 0 });
  return s;
}

function add(into: Sums, s: Sums): void {
  into.items += s.items;
  into.judgeWin += s.judgeWin;
  into.judgeDecisive += s.judgeDecisive;
  into.labelled += s.labelled;
  into.winCorrection += s.winCorrection;
  into.decisiveCorrection += s.decisiveCorrection;
}

function estimate(s: Sums) {
  if (!s.items || !s.labelled) return null;
  const w = s.judgeWin / s.items + s.winCorrection / s.labelled;
  const d = s.judgeDecisive / s.items + s.decisiveCorrection / s.labelled;
  return d > 0 ? { rate: w / d, d } : null;
}

function variance(xs: number[]): number {
  if (xs.length < 2) return 0;
  const m = sum(xs) / xs.length;
  return sum(xs.map((x) => (x - m) ** 2)) / (xs.length - 1);
}

function calibrateOne(values: ItemValues[], input: CalibrationInput, copilot: string): CalibratedWinRate {
  const labelled = values.filter((v) => v.human);
  const judgeDecisive = sum(values.map((v) => v.judgeDecisive));
  const humanDecisive = sum(labelled.map((v) => v.human!.decisive));
  const base = {
    judgeOnly: judgeDecisive > 0 ? sum(values.map((v) => v.judgeWin)) / judgeDecisive : null,
    humanOnly: humanDecisive > 0 ? sum(labelled.map((v) => v.human!.win)) / humanDecisive : null,
    items: values.length,
    annotatedItems: labelled.length,
  };
  const point = estimate(sumsOf(values));
  if (!point) return { ...base, winRate: null, ci95: null, moreLabelsToHalve: null, moreLabelsNote: labelled.length ? 'no decisive preference' : 'no annotated item' };

  // Stratified bootstrap over queries (each query's sums precomputed: a draw costs one addition per query).
  const byQuery = new Map<string, ItemValues[]>();
  for (const v of values) byQuery.set(v.queryId, [...(byQuery.get(v.queryId) ?? []), v]);
  const groups = [...byQuery.values()].map((g) => ({ sums: sumsOf(g), annotated: g.some((v) => v.human) }));
  const strata = [groups.filter((g) => g.annotated).map((g) => g.sums), groups.filter((g) => !g.annotated).map((g) => g.sums)];
  const rand = seededRandom(`${input.seed}/calibrated/${copilot}`);
  const iterations = input.iterations ?? 2000;
  const draws: number[] = [];
  let failed = 0;
  for (let it = 0; it < iterations; it++) {
    const sample: Sums = { items: 0, judgeWin: 0, judgeDecisive: 0, labelled: 0, winCorrection: 0, decisiveCorrection: 0 };
    for (const stratum of strata) for (let k = 0; k < stratum.length; k++) add(sample, stratum[randomIndex(rand, stratum.length)]);
    const e = estimate(sample);
    if (e) draws.push(e.rate);
    else failed++;
  }
  draws.sort((a, b) => a - b);
  const clamp = (x: number) => Math.min(1, Math.max(0, x));
  // One annotated query would make the correction's resampling constant: no interval then.
  const ci95 = failed === 0 && strata[0].length >= 2 ? { low: clamp(quantileSorted(draws, 0.025)), high: clamp(quantileSorted(draws, 0.975)) } : null;

  // Labels needed to halve the interval (normal approximation of the linearised ratio).
  const z = (win: number, decisive: number) => (win - point.rate * decisive) / point.d;
  const human = labelled.map((v) => z(v.human!.win, v.human!.decisive));
  const delta = labelled.map((v) => z(v.human!.win, v.human!.decisive) - z(v.judgeWin, v.judgeDecisive));
  const n = labelled.length;
  const N = values.length;
  const s2 = variance(human);
  const s2d = variance(delta);
  const now = s2 / N + (1 / n - 1 / N) * s2d;
  let moreLabelsToHalve: number | null = null;
  let moreLabelsNote: string | null = null;
  if (n >= N) moreLabelsNote = 'every item is annotated: only more queries would narrow it';
  else if (!(s2d > 0)) moreLabelsNote = 'annotators and judge agree on every annotated item: more labels do not narrow it';
  else if (now / 4 <= s2 / N) moreLabelsNote = 'annotating every item of the run would not halve it: only more queries would';
  else moreLabelsToHalve = Math.max(0, Math.ceil(1 / ((now / 4 - s2 / N) / s2d + 1 / N)) - n);
  return { ...base, winRate: clamp(point.rate), ci95, moreLabelsToHalve, moreLabelsNote };
}

export interface CalibratedWinRates {
  judgeRunId: string;
  tieMargin: number;
  items: number;
  annotatedItems: number;
  itemsWithoutJudgment: number;
  annotatedItemsWithoutJudgment: number;
  method: string;
  copilots: Record<string, CalibratedWinRate>;
}

/** `study.json.calibrated`: calibrated, judge-only and human-only win rates per copilot. */
export function calibratedWinRates(input: CalibrationInput): CalibratedWinRates {
  const pairKey = (q: string, a: string, b: string) => `${q}\u0000${[a, b].sort().join('\u0000')}`;
  const studyItemOf = new Map(input.studyItems.map((it) => [pairKey(it.queryId, it.first, it.second), it]));
  const votes = new Map<string, AnnotationFact[]>();
  for (const a of input.annotations) votes.set(a.itemId, [...(votes.get(a.itemId) ?? []), a]);
  const values = new Map(input.copilots.map((c) => [c, [] as ItemValues[]]));
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
        const annotations = studyItem ? votes.get(studyItem.itemId) ?? [] : [];
        if (judged === null) {
          withoutJudgment++;
          if (annotations.length) annotatedWithoutJudgment++;
          continue;
        }
        items++;
        if (annotations.length) annotated++;
        const prefs = annotations.map((x) => preferenceOf(x, item));
        const share = (p: string) => prefs.filter((x) => x === p).length / prefs.length;
        for (const [c, side] of [[item.first, 'first'], [item.second, 'second']] as const)
          values.get(c)!.push({
            queryId,
            judgeWin: judged === side ? 1 : 0,
            judgeDecisive: judged === 'tie' ? 0 : 1,
            human: prefs.length ? { win: share(side), decisive: 1 - share('tie') } : null,
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
    copilots: Object.fromEntries(input.copilots.map((c) => [c, calibrateOne(values.get(c)!, input, c)])),
  };
}
