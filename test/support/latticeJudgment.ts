import type { StoredJudgment } from '../../core/model/types';

/** A stored LATTICE verdict for aggregate tests: `scores` null makes it a failed judgment (missing data). */
export function latticeJudgment(
  queryId: string,
  copilot: string,
  scores: Record<string, number> | null,
  total: number | null,
): StoredJudgment {
  return {
    runId: 'r',
    queryId,
    copilot,
    rubricVersion: 'v',
    status: scores ? 'ok' : 'failed',
    scores,
    rationales: null,
    total,
    rank: null,
    position: null,
    error: scores ? null : 'bad',
    judge: { model: 'm', baseURL: 'u', temperature: 0, rubricVersion: 'v' },
    attempts: 1,
    createdAt: '',
  };
}

/** The same score on all six dimensions. */
export const allDimensions = (v: number) => ({ D1: v, D2: v, D3: v, D4: v, D5: v, D6: v });
