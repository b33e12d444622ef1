/**
 * Simulations behind the intervals and decision rules of issue 33: calibrated win rates (coverage at 10 / 30 annotated
 * queries, the no-disagreement case, PPI++ against annotators alone, active against uniform selection), self-preference
 * flags (false-flag rate at 10 / 20 / 40 queries), the grounding verification-rate interval, the gate's test at the
 * allowed drop, and stability's drift test. Shared by `judgeflow bench --only stats` (many runs, printed) and
 * test/core/stats/statsSimulation.test.ts (few, fixed seeds). Every figure is reproducible from its seed.
 */
import { calibratedWinRates, MIN_ANNOTATED_QUERIES, type CalibrationDesign } from '../study/calibrated';
import {
  disagreementModel,
  disagreementProbabilities,
  drawItems,
  inclusionProbabilities,
  squaredDisagreement,
  uncertaintyScores,
} from '../study/active';
import type { AnnotationFact, JudgeScores } from '../study/analysis';
import type { StudyItem } from '../study/design';
import { MIN_SELF_PREFERENCE_QUERIES, selfPreference } from './selfPreference';
import { stability, type StabilityRunInput } from './stability';
import { clusteredWilsonInterval, pairedTest, signFlipLessPValue } from './stats';
import { seededRandom } from './random';
import {
  describeAgainstTarget,
  describeRate,
  meetsTarget,
  targetVerdict,
  normalSampler,
  simulatedRate,
  type SimulatedRate,
  type Target,
} from './simulation';

// ----------------------------------------------------------------------------------------------------------------
// A pairwise world: latent answer quality, a judge that sees it with bias and noise, annotators who see it with noise
// ----------------------------------------------------------------------------------------------------------------

export interface WorldScenario {
  queries: number;
  copilots: string[];
  /** Mean latent quality per copilot (sd `qualitySd` per answer). */
  base: Record<string, number>;
  qualitySd: number;
  /** Added by the judge to a copilot's totals. */
  bias: Record<string, number>;
  judgeNoise: number;
  /** Judge samples per answer (their spread is what active selection reads). */
  samples: number;
  /** Annotator noise on the latent gap (sd); a perceived gap within `tieWithin` is a tie. */
  annotatorNoise: number;
  tieWithin: number;
  perItem: number;
  /** The judge's scores say nothing about quality (PPI++ check). */
  uninformative?: boolean;
}

/** Issue 33's scenario: 100 queries, 3 copilots, a judge biased +8 towards one of them (Z). */
export const BIASED_JUDGE: WorldScenario = {
  queries: 100,
  copilots: ['X', 'Y', 'Z'],
  base: { X: 60, Y: 55, Z: 50 },
  qualitySd: 10,
  bias: { Z: 8 },
  judgeNoise: 4,
  samples: 1,
  annotatorNoise: 3,
  tieWithin: 1,
  perItem: 3,
};
/** A nearly right judge (+1 to Z, little noise) and decisive annotators: often no disagreement at all on a few queries. */
export const NEARLY_RIGHT_JUDGE: WorldScenario = {
  ...BIASED_JUDGE,
  bias: { Z: 1 },
  judgeNoise: 0.5,
  annotatorNoise: 0,
  tieWithin: 0.25,
  perItem: 1,
};
/** A judge whose scores are noise: N = 1,000 items (two copilots), PPI++ should fall back to the annotators. */
export const UNINFORMATIVE_JUDGE: WorldScenario = {
  ...BIASED_JUDGE,
  queries: 1000,
  copilots: ['X', 'Y'],
  base: { X: 52, Y: 50 },
  uninformative: true,
  perItem: 1,
};

interface World {
  queryIds: string[];
  items: StudyItem[];
  judge: JudgeScores;
  samples: Map<string, number[]>;
  latent: Map<string, number>;
  annotate: (item: StudyItem) => AnnotationFact[];
}

function world(s: WorldScenario, seed: string): World {
  const rand = seededRandom(seed);
  const normal = normalSampler(rand);
  const queryIds = Array.from({ length: s.queries }, (_, q) => `q${q}`);
  const latent = new Map<string, number>();
  const samples = new Map<string, number[]>();
  const scores: JudgeScores['scores'] = new Map();
  for (const q of queryIds)
    for (const c of s.copilots) {
      const quality = s.base[c] + s.qualitySd * normal();
      latent.set(`${q}|${c}`, quality);
      const seen = s.uninformative ? 55 + s.qualitySd * normal() : quality + (s.bias[c] ?? 0);
      const xs = Array.from({ length: s.samples }, () => seen + s.judgeNoise * normal());
      samples.set(`${q}|${c}`, xs);
      scores.set(`${q}|${c}`, { total: xs.reduce((a, b) => a + b, 0) / xs.length, rationales: null });
    }
  const items = queryIds.flatMap((q) =>
    s.copilots.flatMap((a, i) =>
      s.copilots.slice(i + 1).map((b) => ({ itemId: `${q}|${a}|${b}`, queryId: q, first: a, second: b })),
    ),
  );
  const annotate = (it: StudyItem): AnnotationFact[] =>
    Array.from({ length: s.perItem }, () => {
      const gap =
        latent.get(`${it.queryId}|${it.first}`)! -
        latent.get(`${it.queryId}|${it.second}`)! +
        s.annotatorNoise * normal();
      const choice = Math.abs(gap) <= s.tieWithin ? 'tie' : gap > 0 ? 'A' : 'B';
      return {
        itemId: it.itemId,
        left: it.first,
        right: it.second,
        answer: { choice, reason: null, seriousError: false, errorType: null, comment: null },
      };
    });
  return { queryIds, items, judge: { judgeRunId: 'sim', scores }, samples, latent, annotate };
}

/** The annotators' win rate of `copilot` (ties left out) over the whole population: Monte Carlo over a large world. */
export function trueWinRate(s: WorldScenario, copilot: string, seed = 'truth'): number {
  const w = world({ ...s, queries: 20_000, perItem: 1 }, seed);
  let wins = 0;
  let decisive = 0;
  for (const it of w.items) {
    if (it.first !== copilot && it.second !== copilot) continue;
    const [a] = w.annotate(it);
    if (a.answer.choice === 'tie') continue;
    decisive++;
    if ((a.answer.choice === 'A' ? a.left : a.right) === copilot) wins++;
  }
  return wins / decisive;
}

/** One simulated study: annotate every pair of the first `annotatedQueries` queries (uniform), and calibrate. */
function uniformStudy(s: WorldScenario, annotatedQueries: number, seed: string, lambda?: number) {
  const w = world(s, seed);
  const labelled = new Set(w.queryIds.slice(0, annotatedQueries));
  const studyItems = w.items.filter((it) => labelled.has(it.queryId));
  return calibratedWinRates({
    copilots: s.copilots,
    queryIds: w.queryIds,
    studyItems,
    annotations: studyItems.flatMap(w.annotate),
    judge: w.judge,
    tieMargin: 0,
    lambda,
  });
}

const covers = (ci: { low: number; high: number }, x: number) => ci.low <= x && x <= ci.high;

/** Coverage of the calibrated interval for `copilot`; runs without an interval are counted apart (too few labels). */
export function calibratedCoverage(
  s: WorldScenario,
  opts: { annotatedQueries: number; sims: number; seed: string; copilot: string; truth: number },
) {
  let covered = 0;
  let intervals = 0;
  let noInterval = 0;
  let noDisagreement = 0;
  let coveredNoDisagreement = 0;
  for (let r = 0; r < opts.sims; r++) {
    const c = uniformStudy(s, opts.annotatedQueries, `${opts.seed}:${r}`).copilots[opts.copilot];
    if (!c.ci95) {
      noInterval++;
      continue;
    }
    intervals++;
    const hit = covers(c.ci95, opts.truth);
    if (hit) covered++;
    if (c.noDisagreementBound !== null) {
      noDisagreement++;
      if (hit) coveredNoDisagreement++;
    }
  }
  return {
    coverage: intervals ? simulatedRate(covered, intervals) : null,
    noInterval,
    noDisagreement: noDisagreement ? simulatedRate(coveredNoDisagreement, noDisagreement) : null,
  };
}

/** Mean interval widths with λ tuned, λ = 1 (plain PPI) and the annotators alone, and how often tuned ≤ annotators alone. */
export function ppiWidths(
  s: WorldScenario,
  opts: { annotatedQueries: number; sims: number; seed: string; copilot: string; truth: number },
) {
  let tuned = 0;
  let plain = 0;
  let human = 0;
  let notWider = 0;
  let covered = 0;
  for (let r = 0; r < opts.sims; r++) {
    const t = uniformStudy(s, opts.annotatedQueries, `${opts.seed}:${r}`).copilots[opts.copilot];
    const p = uniformStudy(s, opts.annotatedQueries, `${opts.seed}:${r}`, 1).copilots[opts.copilot];
    const width = (ci: { low: number; high: number } | null) => (ci ? ci.high - ci.low : NaN);
    tuned += width(t.ci95);
    plain += width(p.ci95);
    human += width(t.humanOnlyCi95);
    if (width(t.ci95) <= width(t.humanOnlyCi95) + 1e-12) notWider++;
    if (t.ci95 && covers(t.ci95, opts.truth)) covered++;
  }
  return {
    tuned: tuned / opts.sims,
    plain: plain / opts.sims,
    human: human / opts.sims,
    notWider: simulatedRate(notWider, opts.sims),
    coverage: simulatedRate(covered, opts.sims),
  };
}

export type Selection = 'uniform' | 'judge uncertainty' | 'disagreement model';

/** The annotators' preference for an item's first answer minus their preference for its second (−1 to 1). */
const annotatorLean = (facts: AnnotationFact[]) =>
  facts.reduce((s, a) => s + (a.answer.choice === 'A' ? 1 : a.answer.choice === 'B' ? -1 : 0), 0) / facts.length;

/**
 * `budget` items out of the run's drawn by Poisson sampling, annotated, and calibrated: uniformly; by the judge's
 * uncertainty (the probabilities `study create --select active` stores); or by a disagreement model fitted on an
 * earlier, fully annotated study of the same judge (active.ts). Returns the calibration and the labels spent.
 */
function sampledStudy(s: WorldScenario, budget: number, selection: Selection, seed: string) {
  const w = world(s, seed);
  const N = w.items.length;
  const index = new Map(w.items.map((it, i) => [it.itemId, i]));
  const annotations = new Map<string, AnnotationFact[]>();
  const annotate = (it: StudyItem) =>
    annotations.get(it.itemId) ?? annotations.set(it.itemId, w.annotate(it)).get(it.itemId)!;
  let chosen: StudyItem[];
  let probability: (i: number) => number;
  if (selection === 'disagreement model') {
    // A fully annotated earlier study of the same judge (its own seed) is the model: no label of this study is spent on it.
    const prior = world(s, `${seed}/prior`);
    const gapIn = (judge: JudgeScores) => (it: StudyItem) =>
      judge.scores.get(`${it.queryId}|${it.first}`)!.total! - judge.scores.get(`${it.queryId}|${it.second}`)!.total!;
    const model = disagreementModel(prior.items, gapIn(prior.judge), (it) =>
      squaredDisagreement(annotatorLean(prior.annotate(it)), gapIn(prior.judge)(it)),
    );
    const p = disagreementProbabilities(w.items, gapIn(w.judge), model, budget);
    chosen = drawItems(w.items, p, seed);
    probability = (i) => p[i];
  } else {
    const p =
      selection === 'judge uncertainty'
        ? inclusionProbabilities(
            uncertaintyScores(w.items, (q, c) => w.samples.get(`${q}|${c}`)!),
            budget,
          )
        : w.items.map(() => budget / N);
    chosen = drawItems(w.items, p, seed);
    probability = (i) => p[i];
  }
  const design: CalibrationDesign = {
    kind: 'active',
    probabilities: Object.fromEntries(chosen.map((it) => [it.itemId, probability(index.get(it.itemId)!)])),
  };
  return {
    labels: chosen.length,
    calibrated: calibratedWinRates({
      copilots: s.copilots,
      queryIds: w.queryIds,
      studyItems: chosen,
      annotations: chosen.flatMap(annotate),
      judge: w.judge,
      tieMargin: 0,
      design,
    }),
  };
}

/** Mean width and coverage of the calibrated interval of `copilot` at each budget, for active and for uniform selection. */
export function selectionCurve(
  s: WorldScenario,
  opts: { budgets: number[]; sims: number; seed: string; copilot: string; truth: number; selections?: Selection[] },
) {
  const selections = opts.selections ?? ['disagreement model', 'uniform'];
  return opts.budgets.map((budget) => {
    const run = (selection: Selection) => {
      let width = 0;
      let labels = 0;
      let n = 0;
      let covered = 0;
      const estimates: number[] = [];
      for (let r = 0; r < opts.sims; r++) {
        const study = sampledStudy(s, budget, selection, `${opts.seed}:${budget}:${r}`);
        const c = study.calibrated.copilots[opts.copilot];
        labels += study.labels;
        if (!c.ci95) continue;
        n++;
        width += c.ci95.high - c.ci95.low;
        estimates.push(c.winRate!);
        if (covers(c.ci95, opts.truth)) covered++;
      }
      const m = estimates.reduce((a, b) => a + b, 0) / estimates.length;
      const rmse = Math.sqrt(estimates.reduce((a, x) => a + (x - opts.truth) ** 2, 0) / estimates.length);
      return {
        width: n ? width / n : NaN,
        labels: labels / opts.sims,
        coverage: simulatedRate(covered, Math.max(1, n)),
        bias: m - opts.truth,
        rmse,
      };
    };
    return {
      budget,
      ...(Object.fromEntries(selections.map((sel) => [sel, run(sel)])) as Partial<
        Record<Selection, ReturnType<typeof run>>
      >),
    };
  });
}

/** The budget at which a width curve reaches `width` (linear interpolation between grid budgets); null beyond the grid. */
export function budgetForWidth(curve: Array<{ budget: number; width: number }>, width: number): number | null {
  for (let i = 0; i < curve.length; i++) {
    if (curve[i].width > width) continue;
    if (i === 0) return curve[0].budget;
    const [a, b] = [curve[i - 1], curve[i]];
    return a.budget + ((a.width - width) / (a.width - b.width)) * (b.budget - a.budget);
  }
  return null;
}

// ----------------------------------------------------------------------------------------------------------------
// Self-preference: a panel of three judges, three copilots; family judges acme (copilot A) and openai (copilot O)
// ----------------------------------------------------------------------------------------------------------------

export type SelfPreferenceCase = 'lenient' | 'stretched' | 'own-family +6';

/**
 * How often the acme judge is flagged (`judge`: lenient +4 on every copilot, or a 1.3× stretched scale with its
 * family's copilot best, both nulls; or a real +6 own-family bonus), and how often any pair of the panel is (`panel`:
 * the acme judge's pair and the openai judge's, which has no bonus in any case). A flag needs a positive term whose
 * Holm-adjusted two-sided p is below α: about α/2 familywise under the null.
 */
export function selfPreferenceFlagRate(
  kind: SelfPreferenceCase,
  opts: { queries: number; sims: number; seed: string },
): { judge: SimulatedRate; panel: SimulatedRate } {
  const judges = [
    { name: 'plain' },
    { name: 'acme-judge', family: 'acme' },
    { name: 'openai-judge', family: 'openai' },
  ];
  const copilotFamilies = { A: 'acme', O: 'openai', X: undefined };
  const quality: Record<string, number> = { A: 66, O: 58, X: 52 };
  let flagged = 0;
  let judgeFlagged = 0;
  for (let r = 0; r < opts.sims; r++) {
    const normal = normalSampler(seededRandom(`${opts.seed}:${r}`));
    const totals: Array<{ judge: string; queryId: string; copilot: string; total: number }> = [];
    for (let q = 0; q < opts.queries; q++) {
      const difficulty = 8 * normal();
      for (const copilot of Object.keys(quality)) {
        const answer = quality[copilot] + difficulty + 5 * normal();
        for (const j of judges) {
          let seen = answer;
          if (j.name === 'acme-judge' && kind === 'lenient') seen += 4;
          if (j.name === 'acme-judge' && kind === 'stretched') seen = 55 + 1.3 * (answer - 55);
          if (j.name === 'acme-judge' && kind === 'own-family +6' && copilot === 'A') seen += 6;
          totals.push({ judge: j.name, queryId: `q${q}`, copilot, total: seen + 4 * normal() });
        }
      }
    }
    const entries = selfPreference({ judges, copilotFamilies, totals });
    if (entries.some((e) => e.flagged)) flagged++;
    if (entries.some((e) => e.flagged && e.judge === 'acme-judge')) judgeFlagged++;
  }
  return { judge: simulatedRate(judgeFlagged, opts.sims), panel: simulatedRate(flagged, opts.sims) };
}

// ----------------------------------------------------------------------------------------------------------------
// Grounding, gate, stability
// ----------------------------------------------------------------------------------------------------------------

/** Coverage of the clustered Wilson interval: per query 1 + Poisson(3) claims, the query's rate Beta around `rate` (ICC 0.1). */
export function groundingCoverage(opts: { queries: number; rate: number; sims: number; seed: string }) {
  const truth = groundingTrueRate(opts.rate);
  let covered = 0;
  let point = 0;
  for (let r = 0; r < opts.sims; r++) {
    const rand = seededRandom(`${opts.seed}:${r}`);
    const normal = normalSampler(rand);
    const clusters = Array.from({ length: opts.queries }, () => {
      let m = 1;
      for (let L = Math.exp(-3), p = rand(); p > L; p *= rand()) m++;
      // A query's own rate: logit-normal around the overall rate.
      const logit = Math.log(opts.rate / (1 - opts.rate)) + 0.8 * normal();
      const pq = 1 / (1 + Math.exp(-logit));
      let k = 0;
      for (let i = 0; i < m; i++) if (rand() < pq) k++;
      return { k, n: m };
    });
    const ci = clusteredWilsonInterval(clusters)!;
    if (ci.low === ci.high) point++;
    if (ci.low <= truth && truth <= ci.high) covered++;
  }
  return { coverage: simulatedRate(covered, opts.sims), points: point };
}

/** The mean rate of the logit-normal query rates centred on `rate`: what the pooled rate estimates. */
export function groundingTrueRate(rate: number, seed = 'grounding-truth'): number {
  const normal = normalSampler(seededRandom(seed));
  let s = 0;
  const n = 200_000;
  for (let i = 0; i < n; i++) s += 1 / (1 + Math.exp(-(Math.log(rate / (1 - rate)) + 0.8 * normal())));
  return s / n;
}

/** False failures of the gate when the true drop is exactly `maxDrop` (per-query differences normal, sd 6): the gate's test, and the old rule. */
export function gateAtBoundary(opts: { queries: number; maxDrop: number; sims: number; seed: string; alpha?: number }) {
  const alpha = opts.alpha ?? 0.05;
  let failed = 0;
  let oldFailed = 0;
  for (let r = 0; r < opts.sims; r++) {
    const normal = normalSampler(seededRandom(`${opts.seed}:${r}`));
    const diffs = Array.from({ length: opts.queries }, () => -opts.maxDrop + 6 * normal());
    if (
      signFlipLessPValue(
        diffs.map((d) => d + opts.maxDrop),
        { seed: `gate:${r}`, iterations: 2000 },
      ) < alpha
    )
      failed++;
    const t = pairedTest(
      diffs.map(() => 0),
      diffs,
      { seed: `old:${r}`, iterations: 2000, alpha },
    );
    if (t.significant && -t.meanDiff > opts.maxDrop) oldFailed++;
  }
  return { gate: simulatedRate(failed, opts.sims), old: simulatedRate(oldFailed, opts.sims) };
}

/** Pure judge noise over two runs, two samples per response; `lostSample` drops one sample of one response. Share read as drift. */
export function stabilityFalseDrift(opts: {
  queries: number;
  sims: number;
  seed: string;
  lostSample?: boolean;
}): SimulatedRate {
  let drift = 0;
  const queries = Array.from({ length: opts.queries }, (_, i) => ({ id: `q${i}`, text: `question ${i}` }));
  for (let r = 0; r < opts.sims; r++) {
    const normal = normalSampler(seededRandom(`${opts.seed}:${r}`));
    const quality = queries.map(() => 50 + 10 * normal());
    const runs: StabilityRunInput[] = [0, 1].map((k) => ({
      runId: `r${k}`,
      startedAt: `2026-12-0${k + 1}T00:00:00Z`,
      copilots: ['C'],
      queries,
      responses: queries.map((q) => ({
        queryId: q.id,
        copilot: 'C',
        status: 'ok',
        text: `the same answer to ${q.id}`,
      })),
      judgments: queries.flatMap((q, i) =>
        [0, 1]
          .filter((sample) => !(opts.lostSample && k === 1 && i === 0 && sample === 1))
          .map((sample) => ({ queryId: q.id, copilot: 'C', status: 'ok', total: quality[i] + 3 * normal(), sample })),
      ),
    }));
    const reading = stability(runs).copilots.C.reading;
    if (reading === 'judge drift' || reading === 'answers drift') drift++;
  }
  return simulatedRate(drift, opts.sims);
}

// ----------------------------------------------------------------------------------------------------------------
// The bench's printout
// ----------------------------------------------------------------------------------------------------------------

/** One check of an issue 33 row against its target, as the bench's closing summary lists it. */
export interface RowCheck {
  row: number;
  what: string;
  pass: boolean;
  verdict: 'PASS' | 'FAIL' | 'NOT SHOWN';
  figure: string;
}

/**
 * Prints every row of issue 33 as a simulation, each rate k of n runs with its Clopper–Pearson 95% interval and,
 * where the row has a target, the check against it (PASS / FAIL); ends with the list of checks. Returns the checks.
 */
export function printStudyStatisticsFigures(
  log: (line: string) => void,
  opts: { sims?: number; seed?: string } = {},
): RowCheck[] {
  const sims = opts.sims ?? 400;
  const seed = opts.seed ?? 'bench';
  const t0 = Date.now();
  const timed = <T>(f: () => T): [T, string] => {
    const t = Date.now();
    const r = f();
    return [r, `${((Date.now() - t) / 1000).toFixed(1)} s`];
  };
  const checks: RowCheck[] = [];
  /** A rate against its target: the printed figure, recorded for the summary. */
  const check = (row: number, what: string, r: SimulatedRate, target: Target) => {
    const figure = describeAgainstTarget(r, target);
    checks.push({ row, what, pass: meetsTarget(r, target), verdict: targetVerdict(r, target), figure });
    return figure;
  };
  /** A check that is not a rate (a count that must be 0, an interval that must stay below 1, fewer labels). */
  const fact = (row: number, what: string, pass: boolean, figure: string) => {
    checks.push({ row, what, pass, verdict: pass ? 'PASS' : 'FAIL', figure });
    return `${figure} ${pass ? 'PASS' : 'FAIL'}`;
  };
  log(
    `\nIntervals and decisions of issue 33, seed "${seed}": ${sims} simulated runs per figure unless stated; every rate is k of n runs with its exact (Clopper–Pearson) 95% interval, checked against the row's target.`,
  );

  const zTruth = trueWinRate(BIASED_JUDGE, 'Z');
  log(
    `\nCalibrated win rate (PPI++, query totals, t(n−1)): ${BIASED_JUDGE.queries} queries × ${BIASED_JUDGE.copilots.length} copilots, judge +8 towards Z, 3 annotations per item; true win rate of Z ${(100 * zTruth).toFixed(1)}%`,
  );
  // At the minimum of 10 annotated queries the coverage is nearest its bound: five times the runs there.
  for (const n of [3, 5, 10, 30]) {
    const runs = n === 10 ? sims * 5 : sims;
    const [c, t] = timed(() =>
      calibratedCoverage(BIASED_JUDGE, {
        annotatedQueries: n,
        sims: runs,
        seed: `${seed}:cal:${n}`,
        copilot: 'Z',
        truth: zTruth,
      }),
    );
    log(
      `  ${String(n).padStart(2)} annotated queries: ${
        n < MIN_ANNOTATED_QUERIES
          ? fact(
              1,
              `${n} annotated queries: "too few to calibrate"`,
              c.noInterval === runs,
              `no interval in ${c.noInterval} of ${runs} runs (below the minimum of ${MIN_ANNOTATED_QUERIES} annotated queries: "too few to calibrate")`,
            )
          : `coverage ${c.coverage ? check(1, `coverage at ${n} annotated queries`, c.coverage, { atLeast: 0.93 }) : fact(1, `coverage at ${n} annotated queries`, false, 'no interval')}`
      }  [${t}]`,
    );
  }

  const nearTruth = trueWinRate(NEARLY_RIGHT_JUDGE, 'Z');
  log(
    `\nNo disagreement seen (judge +1 towards Z, little noise; decisive annotators, 1 per item); true win rate of Z ${(100 * nearTruth).toFixed(1)}%`,
  );
  for (const n of [10, 20]) {
    const [c, t] = timed(() =>
      calibratedCoverage(NEARLY_RIGHT_JUDGE, {
        annotatedQueries: n,
        sims,
        seed: `${seed}:agree:${n}`,
        copilot: 'Z',
        truth: nearTruth,
      }),
    );
    log(
      `  ${n} annotated queries: no disagreement in ${c.noDisagreement?.n ?? 0} of ${sims} runs; their coverage ${c.noDisagreement ? check(2, `coverage without disagreement, ${n} annotated queries`, c.noDisagreement, { atLeast: 0.93 }) : '–'}; all runs ${c.coverage ? describeRate(c.coverage) : '–'}  [${t}]`,
    );
  }

  const uTruth = trueWinRate(UNINFORMATIVE_JUDGE, 'X');
  const ppiSims = sims;
  const [ppi, tp] = timed(() =>
    ppiWidths(UNINFORMATIVE_JUDGE, {
      annotatedQueries: 100,
      sims: ppiSims,
      seed: `${seed}:ppi`,
      copilot: 'X',
      truth: uTruth,
    }),
  );
  log(
    `\nPPI++ with an uninformative judge (N = 1,000 items, n = 100 annotated), ${ppiSims} runs: mean width tuned λ ${ppi.tuned.toFixed(3)}, plain PPI (λ = 1) ${ppi.plain.toFixed(3)}, annotators alone ${ppi.human.toFixed(3)}`,
  );
  log(
    `  tuned no wider than annotators alone (by construction from 50 annotated queries on: λ = 0 when the tuned variance is larger): ${fact(3, 'PPI++ never wider than the annotators alone', ppi.notWider.k === ppi.notWider.n, describeRate(ppi.notWider))}; coverage ${check(3, 'PPI++ coverage, uninformative judge', ppi.coverage, { atLeast: 0.93 })}  [${tp}]`,
  );

  // The jackknife refits the panel model once per query: about a minute per 400 runs at 40 queries on an idle core.
  const selfSims = Math.max(50, Math.round(sims * 1.5));
  const powerSims = Math.max(50, Math.round(sims / 4));
  log(
    `\nSelf-preference flags (3 judges, 3 copilots, two family pairs; query-jackknife t with (queries − 1) df, Holm across the pairs, a flag only for a positive own-family term; none below ${MIN_SELF_PREFERENCE_QUERIES} queries), ${selfSims} runs per null and size. Row 4's false-flag rate is checked over both nulls (${2 * selfSims} runs per size), for the acme judge (no own-family preference) and for any pair of the panel (the familywise rate); each interval must lie below 5%`,
  );
  for (const queries of [10, 20, 40]) {
    const nulls = (['lenient', 'stretched'] as const).map((kind) => {
      const [r, t] = timed(() =>
        selfPreferenceFlagRate(kind, { queries, sims: selfSims, seed: `${seed}:self:${kind}:${queries}` }),
      );
      log(
        `  ${String(queries).padStart(2)} queries, ${kind === 'lenient' ? 'judge +4 on every copilot' : 'judge 1.3× stretched scale, its family copilot best'}: judge flagged ${describeRate(r.judge)}; any pair ${describeRate(r.panel)}  [${t}]`,
      );
      return r;
    });
    const pooled = (pick: (r: (typeof nulls)[number]) => SimulatedRate) =>
      simulatedRate(
        nulls.reduce((s, r) => s + pick(r).k, 0),
        nulls.reduce((s, r) => s + pick(r).n, 0),
      );
    log(
      `  ${String(queries).padStart(2)} queries, both nulls: judge flagged ${check(
        4,
        `self-preference false flags, ${queries} queries`,
        pooled((r) => r.judge),
        { atMost: 0.05 },
      )}; any pair ${check(
        4,
        `self-preference familywise false flags, ${queries} queries`,
        pooled((r) => r.panel),
        { atMost: 0.05 },
      )}`,
    );
    const [p, t] = timed(() =>
      selfPreferenceFlagRate('own-family +6', { queries, sims: powerSims, seed: `${seed}:self:power:${queries}` }),
    );
    log(
      `  ${String(queries).padStart(2)} queries, +6 to its own family's copilot: judge flagged ${queries === 40 ? check(4, 'a +6 own-family bonus flagged at 40 queries', p.judge, { atLeast: 0.8 }) : describeRate(p.judge)}  [${t}]`,
    );
  }

  const groundingSims = sims * 2;
  const rate = 0.95;
  log(
    `\nGrounding verification rate (design-effect–adjusted Wilson, clustered by query): per query 1 + Poisson(3) claims, query rates logit-normal (sd 0.8) around ${rate} (mean ${groundingTrueRate(rate).toFixed(3)}); ${groundingSims} runs`,
  );
  for (const queries of [10, 30]) {
    const [g, t] = timed(() =>
      groundingCoverage({ queries, rate, sims: groundingSims, seed: `${seed}:ground:${queries}` }),
    );
    log(
      `  ${queries} queries: coverage ${check(5, `grounding coverage at ${queries} queries`, g.coverage, { atLeast: 0.93 })}; single-point intervals ${fact(5, `no single-point interval at ${queries} queries`, g.points === 0, String(g.points))}  [${t}]`,
    );
  }
  const all = clusteredWilsonInterval(Array.from({ length: 10 }, () => ({ k: 4, n: 4 })))!;
  log(
    `  40 of 40 claims verified (10 queries): ${fact(5, '40 of 40 verified: interval below 1', all.low < 1, `[${all.low.toFixed(3)}, ${all.high.toFixed(3)}] (not the point [1, 1])`)}`,
  );

  const gateSims = sims * 10;
  log(
    `\ngate --max-drop 2 when the true drop is exactly 2 points (per-query differences sd 6), α = 0.05, ${gateSims} runs: false failures`,
  );
  for (const queries of [10, 30]) {
    const [g, t] = timed(() =>
      gateAtBoundary({ queries, maxDrop: 2, sims: gateSims, seed: `${seed}:gate:${queries}` }),
    );
    log(
      `  ${queries} queries: one-sided test of the shifted differences ${check(6, `gate false failures at the boundary, ${queries} queries`, g.gate, { level: 0.05 })}; old rule (significant and past max-drop) ${describeRate(g.old)}  [${t}]`,
    );
  }

  const stabilitySims = sims * 10;
  log(
    `\nStability drift reading under pure judge noise (2 runs, 2 samples per response), F test at 5%, ${stabilitySims} runs: read as drift`,
  );
  for (const queries of [5, 10]) {
    const [s, t] = timed(() => stabilityFalseDrift({ queries, sims: stabilitySims, seed: `${seed}:stab:${queries}` }));
    const [l, t2] = timed(() =>
      stabilityFalseDrift({ queries, sims: stabilitySims, seed: `${seed}:stab-lost:${queries}`, lostSample: true }),
    );
    log(
      `  ${queries} queries: ${check(7, `stability false drift, ${queries} queries`, s, { level: 0.05 })}  [${t}]; one sample lost: ${check(7, `stability false drift, ${queries} queries, a sample lost`, l, { level: 0.05 })}  [${t2}]`,
    );
  }

  const curveSims = Math.max(40, Math.round(sims / 4));
  const budgets = [60, 90, 120, 150, 180, 240];
  const selections: Selection[] = ['disagreement model', 'judge uncertainty', 'uniform'];
  log(
    `\nSelection of the items to annotate, held-out studies: ${BIASED_JUDGE.queries} queries × 3 copilots (${BIASED_JUDGE.queries * 3} items), judge +8 towards Z; the disagreement model is fitted on an earlier, fully annotated study of the same judge (another seed); ${curveSims} runs per budget and selection; interval of Z`,
  );
  const [curve, tc] = timed(() =>
    selectionCurve(BIASED_JUDGE, {
      budgets,
      sims: curveSims,
      seed: `${seed}:active`,
      copilot: 'Z',
      truth: zTruth,
      selections,
    }),
  );
  for (const c of curve)
    log(
      `  budget ${String(c.budget).padStart(3)}: ${selections.map((sel) => `${sel} width ${c[sel]!.width.toFixed(3)} (${c[sel]!.labels.toFixed(0)} labels, coverage ${describeRate(c[sel]!.coverage)})`).join('; ')}`,
    );
  const widthCurve = (sel: Selection) => curve.map((c) => ({ budget: c.budget, width: c[sel]!.width }));
  for (const target of [curve[2].uniform!.width, curve[4].uniform!.width]) {
    const u = budgetForWidth(widthCurve('uniform'), target);
    const a = budgetForWidth(widthCurve('disagreement model'), target);
    const j = budgetForWidth(widthCurve('judge uncertainty'), target);
    const fewer = a !== null && u !== null && a < u;
    log(
      `  for width ${target.toFixed(3)}: ${fact(8, `active selection: fewer labels than uniform for width ${target.toFixed(3)}`, fewer, `uniform needs ${u?.toFixed(0) ?? '–'} labels, the disagreement model ${a?.toFixed(0) ?? '> grid'}${a !== null && u !== null ? ` (${(100 * (1 - a / u)).toFixed(0)}% fewer)` : ''}`)}; judge uncertainty ${j?.toFixed(0) ?? '> grid'}`,
    );
  }
  log(`  [${tc}]`);
  const failed = checks.filter((c) => !c.pass);
  log(
    `\nIssue 33 rows against their targets (rows 1–7 of the issue; 8: selection of the items to annotate): ${checks.length - failed.length} of ${checks.length} checks pass${failed.length ? `; not passed: ${failed.map((c) => `row ${c.row} ${c.what} (${c.verdict})`).join('; ')}` : ''}.`,
  );
  for (const c of checks) log(`  row ${c.row}, ${c.what}: ${c.verdict}`);
  log(`Issue 33 simulations: ${((Date.now() - t0) / 1000).toFixed(0)} s in all.`);
  return checks;
}
