/**
 * What a gate checks of its candidate before trusting the comparison: a run that did not complete (failed, cancelled,
 * still running) or whose judged answers cover too little of the baseline's compares nothing, and a gate that said
 * "PASS" over it would wave a broken run through CI. Each problem is a sentence for the user; any problem fails the gate.
 */
import type { Comparison } from './compare';

/** Paired coverage below which a copilot's comparison is not trusted (`judgeflow gate --min-coverage`). */
export const DEFAULT_MIN_COVERAGE = 0.9;

export interface GateCoverage {
  copilot: string;
  /** Baseline queries with an ok verdict that also have one in the candidate. */
  paired: number;
  /** Baseline queries with an ok verdict. */
  baselineJudged: number;
  /** paired / baselineJudged (null when the baseline judged none). */
  coverage: number | null;
}

export interface CandidateRun {
  runId: string;
  status: string;
  summary: unknown;
}

export function gateCoverage(comparison: Comparison): GateCoverage[] {
  return Object.entries(comparison.copilots).map(([copilot, c]) => {
    const baselineJudged = c.overall.n + c.okOnlyInA;
    return {
      copilot,
      paired: c.overall.n,
      baselineJudged,
      coverage: baselineJudged ? c.overall.n / baselineJudged : null,
    };
  });
}

/** Why the gate cannot pass this candidate: empty when it is a completed run covering enough of the baseline. */
export function candidateProblems(
  candidate: CandidateRun,
  comparison: Comparison,
  minCoverage = DEFAULT_MIN_COVERAGE,
): string[] {
  const problems: string[] = [];
  if (candidate.status !== 'completed') {
    const error = (candidate.summary as { error?: unknown } | null)?.error;
    problems.push(
      `candidate ${candidate.runId} is not a completed run: it is ${candidate.status}${typeof error === 'string' ? ` (${error})` : ''}`,
    );
  }
  for (const c of gateCoverage(comparison)) {
    if (c.coverage === null || c.coverage >= minCoverage) continue;
    problems.push(
      `${c.copilot}: the candidate has verdicts for ${c.paired} of the ${c.baselineJudged} queries the baseline judged (coverage ${(c.coverage * 100).toFixed(0)}%, below --min-coverage ${minCoverage}); see its failures with judgeflow status ${candidate.runId}`,
    );
  }
  if (!comparison.copilots || !Object.keys(comparison.copilots).length)
    problems.push(`candidate ${candidate.runId} shares no copilot with baseline ${comparison.runA.runId}`);
  return problems;
}
