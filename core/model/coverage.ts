import type { StoredJudgment, StoredResponse } from './types';

/** How much of a copilot's work got a score, shared by every protocol's report. */
export interface Coverage {
  /** Scored items (judgment ok). */
  n: number;
  /** Items with no score: failed judgments + failed or missing responses. Missing data, never a default score. */
  failed: number;
  failedJudgments: number;
  failedResponses: number;
  missingResponses: number;
}

/** `judgments` and `responses` are one copilot's, already restricted to the snapshot's queries. */
export function coverage(judgments: StoredJudgment[], responses: StoredResponse[]): Coverage {
  const n = judgments.filter((j) => j.status === 'ok').length;
  const failedJudgments = judgments.length - n;
  const failedResponses = responses.filter((r) => r.status === 'failed').length;
  const missingResponses = responses.filter((r) => r.status === 'missing').length;
  return {
    n,
    failed: failedJudgments + failedResponses + missingResponses,
    failedJudgments,
    failedResponses,
    missingResponses,
  };
}
