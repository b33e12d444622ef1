import type { MeanInterval } from '../stats/stats';

/** The figures a comparison of two runs is made of, apart from the comparing, so core/compare/grounding.ts (which core/compare/compare.ts calls) needs no import of it. */

/** b − a over the paired queries; positive means run B scored higher. */
export interface PairedDelta {
  n: number;
  a: number | null;
  b: number | null;
  delta: number | null;
  ci95: MeanInterval | null;
  pValue: number | null;
  /** Holm-adjusted across the copilots compared (per dimension for dimension deltas). */
  pAdjusted: number | null;
  /** pAdjusted < alpha. */
  significant: boolean;
}
