import type { StoredJudgment } from '../../core/model/types';
import { CAB_DIMENSIONS } from './rubric';
import { isTaxonomyKey } from './judge';

/**
 * A response's CryptoAnalystBench score: the mean of its four dimension scores (1–10), what the reference harness
 * averages into its "Avg Total". Derived from the stored scores, never read from the stored `total` (the sum, 4–40),
 * so runs stored before the headline changed report on the same scale as new ones.
 */
export function cabResponseScore(j: Pick<StoredJudgment, 'status' | 'scores'>): number | null {
  if (j.status !== 'ok' || !j.scores) return null;
  // The rubric's dimensions as stored (all four in every CAB verdict); error-taxonomy flags are not dimensions.
  const values = Object.entries(j.scores)
    .filter(([key]) => !isTaxonomyKey(key))
    .map(([, v]) => v);
  if (!values.length || values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return null;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/**
 * The judgments with `total` set to the response's score (mean of its dimensions): every figure computed from per-response
 * totals (intervals, separability, position and length bias, tags) is then on the headline's 1–10 scale.
 */
export function withResponseScores<T extends StoredJudgment>(judgments: T[]): T[] {
  return judgments.map((j) => ({ ...j, total: cabResponseScore(j) }));
}

/**
 * The copilot's headline: the mean of its four dimension means, as the reference's summary computes it (each
 * dimension averaged over the responses, then the four averages averaged). Every ok judgment carries all four scores,
 * so this equals the mean over responses of each response's score.
 */
export function meanOfDimensionMeans(dimensions: Record<string, number | null>): number | null {
  const means = CAB_DIMENSIONS.map((d) => dimensions[d]);
  return means.some((m) => m === null || m === undefined)
    ? null
    : (means as number[]).reduce((s, m) => s + m, 0) / means.length;
}
