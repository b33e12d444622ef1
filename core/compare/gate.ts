/**
 * A regression gate over a comparison of two runs (core/compare/compare.ts: paired over queries, Holm-corrected across
 * copilots, per dimension too): which copilots got worse by more than an allowed drop (dropTests: a one-sided test
 * against that drop) and which significantly better. Pure; `judgeflow gate` feeds it and turns it into an exit code, JSON and JUnit XML.
 */
import type { Comparison, PairedDelta } from './compare';
import { InputError } from '../model/inputError';
import { holmAdjust, signFlipLessPValue } from '../stats/stats';

export interface GateOptions {
  /** A drop counts as a regression only when the test shows it larger than this many points (default 0). */
  maxDrop?: number;
}

/** The gate's own test of one copilot: is its drop larger than the allowed one? */
export interface DropTest {
  maxDrop: number;
  /** One-sided sign-flip p-value of the paired differences shifted by maxDrop (H0: the mean drop is at most maxDrop). */
  p: number | null;
  /** Holm-adjusted across the copilots compared. */
  pHolm: number | null;
}

/**
 * Regression as a one-sided test against the allowed drop, so that the false-failure rate is at most α at the boundary
 * (a true drop of exactly maxDrop), not only at zero: H0 mean(candidate − baseline) ≥ −maxDrop against H1 below it.
 * Each paired difference is shifted by +maxDrop and the sign-flip test (core/stats/stats.ts) asks whether the shifted
 * differences sit below 0; Holm across copilots. With maxDrop 0 it is the one-sided version of compare's test.
 */
export function dropTests(comparison: Comparison, maxDrop: number): Map<string, DropTest> {
  const entries = Object.entries(comparison.copilots).map(([copilot, c]) => ({
    copilot,
    p: c.differences.length
      ? signFlipLessPValue(
          c.differences.map((d) => d + maxDrop),
          { seed: `gate:${copilot}` },
        )
      : null,
  }));
  const tested = entries.filter((e) => e.p !== null);
  const adjusted = holmAdjust(tested.map((e) => e.p!));
  const holm = new Map(tested.map((e, i) => [e.copilot, adjusted[i]]));
  return new Map(entries.map((e) => [e.copilot, { maxDrop, p: e.p, pHolm: holm.get(e.copilot) ?? null }]));
}

export interface GateInterval {
  low: number;
  high: number;
}

export interface GateDimension {
  dimension: string;
  delta: number | null;
  ci95: GateInterval | null;
  p: number | null;
  pHolm: number | null;
  significant: boolean;
}

export interface GateEntry {
  copilot: string;
  /** Candidate − baseline, mean over the paired queries (negative: the candidate scored lower). */
  delta: number;
  ci95: GateInterval | null;
  p: number | null;
  /** Holm-adjusted across the copilots compared. */
  pHolm: number | null;
  /** Every rubric dimension, most fallen first (its Holm correction is across copilots for that dimension). */
  dimensions: GateDimension[];
  /** The test that decides a regression (p and pHolm above are compare's two-sided test of any change). */
  dropTest: DropTest;
}

export interface GateResult {
  regressions: GateEntry[];
  improvements: GateEntry[];
  baseline: string;
  candidate: string;
}

/** What a reader of the gate sees besides its verdict: per copilot the paired size and the per-category deltas. */
export interface GateDetail {
  copilot: string;
  n: number;
  delta: number | null;
  verdict: 'regression' | 'improvement' | 'unchanged' | 'no paired queries';
  dropTest: DropTest;
  /** label.value → mean paired delta of totals over that group (e.g. category.C2). */
  groups: Array<{ group: string; n: number; delta: number | null }>;
}

/** Runs a gate can compare: one protocol (compare refuses otherwise) and one snapshot, so every query pairs. */
export function assertGateable(
  baseline: { runId: string; snapshotId: string },
  candidate: { runId: string; snapshotId: string },
): void {
  if (baseline.snapshotId !== candidate.snapshotId)
    throw new InputError(
      `baseline ${baseline.runId} ran snapshot ${baseline.snapshotId} and candidate ${candidate.runId} ran snapshot ${candidate.snapshotId}: a gate compares runs of one snapshot (run the candidate on ${baseline.snapshotId}, or see the shared queries with judgeflow trend --runs ${baseline.runId},${candidate.runId})`,
    );
}

const interval = (d: PairedDelta): GateInterval | null => (d.ci95 ? { low: d.ci95.low, high: d.ci95.high } : null);

function entry(copilot: string, c: Comparison['copilots'][string], dropTest: DropTest): GateEntry {
  const dimensions = Object.entries(c.dimensions)
    .map(([dimension, d]) => ({
      dimension,
      delta: d.delta,
      ci95: interval(d),
      p: d.pValue,
      pHolm: d.pAdjusted,
      significant: d.significant,
    }))
    .sort((x, y) => (x.delta ?? 0) - (y.delta ?? 0) || (x.dimension < y.dimension ? -1 : 1));
  return {
    copilot,
    delta: c.overall.delta!,
    ci95: interval(c.overall),
    p: c.overall.pValue,
    pHolm: c.overall.pAdjusted,
    dimensions,
    dropTest,
  };
}

function verdict(d: PairedDelta, drop: DropTest, alpha: number): GateDetail['verdict'] {
  if (d.delta === null) return 'no paired queries';
  if (drop.pHolm !== null && drop.pHolm < alpha) return 'regression';
  if (d.significant && d.delta > 0) return 'improvement';
  return 'unchanged';
}

export function gate(comparison: Comparison, options: GateOptions = {}): GateResult {
  const drops = dropTests(comparison, options.maxDrop ?? 0);
  const regressions: GateEntry[] = [];
  const improvements: GateEntry[] = [];
  for (const [copilot, c] of Object.entries(comparison.copilots)) {
    const v = verdict(c.overall, drops.get(copilot)!, comparison.alpha);
    if (v === 'regression') regressions.push(entry(copilot, c, drops.get(copilot)!));
    else if (v === 'improvement') improvements.push(entry(copilot, c, drops.get(copilot)!));
  }
  return { regressions, improvements, baseline: comparison.runA.runId, candidate: comparison.runB.runId };
}

export function gateDetails(comparison: Comparison, options: GateOptions = {}): GateDetail[] {
  const drops = dropTests(comparison, options.maxDrop ?? 0);
  return Object.entries(comparison.copilots).map(([copilot, c]) => ({
    copilot,
    n: c.overall.n,
    delta: c.overall.delta,
    verdict: verdict(c.overall, drops.get(copilot)!, comparison.alpha),
    dropTest: drops.get(copilot)!,
    groups: Object.entries(c.groups).flatMap(([label, values]) =>
      Object.entries(values).map(([value, g]) => ({ group: `${label}.${value}`, n: g.n, delta: g.delta })),
    ),
  }));
}

// XML 1.0 admits no other control characters (not even as references) and no lone surrogates: shown as \uXXXX text.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const xml = (s: string) =>
  s
    .replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
const signed = (x: number | null, digits = 2) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`);

/** One line per copilot: its delta, interval and p-values. */
export function gateLine(d: GateDetail, c: Comparison['copilots'][string]): string {
  const o = c.overall;
  if (o.delta === null) return `${d.copilot}: no paired queries`;
  const ci = o.ci95 ? ` [${o.ci95.low.toFixed(2)}, ${o.ci95.high.toFixed(2)}]` : '';
  const drop =
    d.dropTest.pHolm === null
      ? ''
      : `; drop beyond ${d.dropTest.maxDrop}: one-sided p ${d.dropTest.p!.toFixed(4)}, Holm ${d.dropTest.pHolm.toFixed(4)}`;
  return `${d.copilot}: ${d.verdict.toUpperCase()} Δ ${signed(o.delta)}${ci} over ${o.n} queries, p ${o.pValue!.toFixed(4)}, Holm ${o.pAdjusted?.toFixed(4) ?? '–'}${drop}`;
}

/**
 * JUnit XML as CI systems read it (Jenkins, GitLab, GitHub test reporters): one testsuite, one testcase per copilot;
 * a regression is a <failure>, a copilot without paired queries is <skipped>.
 */
export function gateJunit(comparison: Comparison, options: GateOptions = {}, candidateProblems: string[] = []): string {
  const details = gateDetails(comparison, options);
  const failures = details.filter((d) => d.verdict === 'regression').length + (candidateProblems.length ? 1 : 0);
  const skipped = details.filter((d) => d.verdict === 'no paired queries').length;
  const suite = `gate ${comparison.runA.runId} -> ${comparison.runB.runId}`;
  const cases = details.map((d) => {
    const c = comparison.copilots[d.copilot];
    const line = gateLine(d, c);
    const dims = Object.entries(c.dimensions).map(
      ([k, x]) =>
        `  ${k}: Δ ${signed(x.delta)}, p ${x.pValue?.toFixed(4) ?? '–'}, Holm ${x.pAdjusted?.toFixed(4) ?? '–'}${x.significant ? ' (significant)' : ''}`,
    );
    const groups = d.groups.map((g) => `  ${g.group}: Δ ${signed(g.delta)} over ${g.n}`);
    const out = [line, ...dims, ...groups].join('\n');
    const body =
      d.verdict === 'regression'
        ? `<failure type="regression" message="${xml(line)}">${xml(out)}</failure>`
        : d.verdict === 'no paired queries'
          ? `<skipped message="no paired queries"/>`
          : '';
    return `    <testcase classname="judgeflow.gate" name="${xml(d.copilot)}" time="0">${body}<system-out>${xml(out)}</system-out></testcase>`;
  });
  // A candidate the gate cannot trust (core/compare/gateCandidate.ts) is one failed case of its own.
  if (candidateProblems.length)
    cases.unshift(
      `    <testcase classname="judgeflow.gate" name="candidate run" time="0"><failure type="candidate" message="${xml(candidateProblems[0])}">${xml(candidateProblems.join('\n'))}</failure></testcase>`,
    );
  const tests = cases.length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="judgeflow gate" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">`,
    `  <testsuite name="${xml(suite)}" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
