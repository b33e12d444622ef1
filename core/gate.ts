/**
 * A regression gate over a comparison of two runs (core/compare.ts: paired over queries, Holm-corrected across
 * copilots, per dimension too): which copilots got significantly worse — by more than an allowed drop — and which
 * significantly better. Pure; `judgeflow gate` feeds it and turns it into an exit code, JSON and JUnit XML.
 */
import type { Comparison, PairedDelta } from './compare';
import { InputError } from './inputError';

export interface GateOptions {
  /** A significant drop counts as a regression only when it is larger than this many points (default 0). */
  maxDrop?: number;
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
  /** label.value → mean paired delta of totals over that group (e.g. category.C2). */
  groups: Array<{ group: string; n: number; delta: number | null }>;
}

/** Runs a gate can compare: one protocol (compare refuses otherwise) and one snapshot, so every query pairs. */
export function assertGateable(baseline: { runId: string; snapshotId: string }, candidate: { runId: string; snapshotId: string }): void {
  if (baseline.snapshotId !== candidate.snapshotId)
    throw new InputError(
      `baseline ${baseline.runId} ran snapshot ${baseline.snapshotId} and candidate ${candidate.runId} ran snapshot ${candidate.snapshotId}: a gate compares runs of one snapshot (run the candidate on ${baseline.snapshotId}, or see the shared queries with judgeflow trend --runs ${baseline.runId},${candidate.runId})`,
    );
}

const interval = (d: PairedDelta): GateInterval | null => (d.ci95 ? { low: d.ci95.low, high: d.ci95.high } : null);

function entry(copilot: string, c: Comparison['copilots'][string]): GateEntry {
  const dimensions = Object.entries(c.dimensions)
    .map(([dimension, d]) => ({ dimension, delta: d.delta, ci95: interval(d), p: d.pValue, pHolm: d.pAdjusted, significant: d.significant }))
    .sort((x, y) => (x.delta ?? 0) - (y.delta ?? 0) || (x.dimension < y.dimension ? -1 : 1));
  return { copilot, delta: c.overall.delta!, ci95: interval(c.overall), p: c.overall.pValue, pHolm: c.overall.pAdjusted, dimensions };
}

function verdict(d: PairedDelta, maxDrop: number): GateDetail['verdict'] {
  if (d.delta === null) return 'no paired queries';
  if (d.significant && d.delta < 0 && -d.delta > maxDrop) return 'regression';
  if (d.significant && d.delta > 0) return 'improvement';
  return 'unchanged';
}

export function gate(comparison: Comparison, options: GateOptions = {}): GateResult {
  const maxDrop = options.maxDrop ?? 0;
  const regressions: GateEntry[] = [];
  const improvements: GateEntry[] = [];
  for (const [copilot, c] of Object.entries(comparison.copilots)) {
    const v = verdict(c.overall, maxDrop);
    if (v === 'regression') regressions.push(entry(copilot, c));
    else if (v === 'improvement') improvements.push(entry(copilot, c));
  }
  return { regressions, improvements, baseline: comparison.runA.runId, candidate: comparison.runB.runId };
}

export function gateDetails(comparison: Comparison, options: GateOptions = {}): GateDetail[] {
  return Object.entries(comparison.copilots).map(([copilot, c]) => ({
    copilot,
    n: c.overall.n,
    delta: c.overall.delta,
    verdict: verdict(c.overall, options.maxDrop ?? 0),
    groups: Object.entries(c.groups).flatMap(([label, values]) => Object.entries(values).map(([value, g]) => ({ group: `${label}.${value}`, n: g.n, delta: g.delta }))),
  }));
}

// XML 1.0 admits no other control characters (not even as references) and no lone surrogates: shown as \uXXXX text.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const xml = (s: string) => s.replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const signed = (x: number | null, digits = 2) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`);

/** One line per copilot: its delta, interval and p-values. */
export function gateLine(d: GateDetail, c: Comparison['copilots'][string]): string {
  const o = c.overall;
  if (o.delta === null) return `${d.copilot}: no paired queries`;
  const ci = o.ci95 ? ` [${o.ci95.low.toFixed(2)}, ${o.ci95.high.toFixed(2)}]` : '';
  return `${d.copilot}: ${d.verdict.toUpperCase()} Δ ${signed(o.delta)}${ci} over ${o.n} queries, p ${o.pValue!.toFixed(4)}, Holm ${o.pAdjusted?.toFixed(4) ?? '–'}`;
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
    const dims = Object.entries(c.dimensions).map(([k, x]) => `  ${k}: Δ ${signed(x.delta)}, p ${x.pValue?.toFixed(4) ?? '–'}, Holm ${x.pAdjusted?.toFixed(4) ?? '–'}${x.significant ? ' (significant)' : ''}`);
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
  // A candidate the gate cannot trust (core/gateCandidate.ts) is one failed case of its own.
  if (candidateProblems.length) cases.unshift(`    <testcase classname="judgeflow.gate" name="candidate run" time="0"><failure type="candidate" message="${xml(candidateProblems[0])}">${xml(candidateProblems.join('\n'))}</failure></testcase>`);
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
