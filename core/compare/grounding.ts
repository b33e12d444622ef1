/** Grounding in `compare`: each copilot's verification rate, paired by query between two runs, tested like the scores. */
import type { PairedDelta } from './types';
import type { StoredGroundingCheck } from '../grounding/checks';

export interface GroundingComparison {
  /** Verification rate (0–1) of each paired query's claims, B − A, with the same paired test as the scores. */
  verificationRate: PairedDelta;
  /** Each run's own rate over all its checked claims (not only the paired queries). */
  rateA: number | null;
  rateB: number | null;
}

/** Per query: the claims verified (exact or derivable) and checked, over a copilot's checks with context. */
export function rateByQuery(
  checks: StoredGroundingCheck[],
  copilot: string,
): Map<string, { verified: number; claims: number }> {
  const out = new Map<string, { verified: number; claims: number }>();
  for (const g of checks) {
    if (g.copilot !== copilot || g.status !== 'ok') continue;
    const cell = out.get(g.queryId) ?? { verified: 0, claims: 0 };
    cell.claims += g.claims.length;
    cell.verified += g.claims.filter((c) => c.status === 'exact' || c.status === 'derivable').length;
    out.set(g.queryId, cell);
  }
  return out;
}

const overall = (m: Map<string, { verified: number; claims: number }>) => {
  const claims = [...m.values()].reduce((n, c) => n + c.claims, 0);
  return claims ? [...m.values()].reduce((n, c) => n + c.verified, 0) / claims : null;
};

/**
 * Pairs each copilot's per-query verification rates between the runs (queries with claims checked in both) and hands
 * them to `paired` (compare's test); the caller corrects across copilots.
 */
export function groundingDeltas(
  a: StoredGroundingCheck[],
  b: StoredGroundingCheck[],
  copilots: string[],
  pairedIds: Set<string>,
  paired: (a: number[], b: number[], seed: string) => PairedDelta,
): Record<string, GroundingComparison> {
  const out: Record<string, GroundingComparison> = {};
  for (const copilot of copilots) {
    const ra = rateByQuery(a, copilot);
    const rb = rateByQuery(b, copilot);
    const ids = [...ra.keys()]
      .filter((id) => pairedIds.has(id) && ra.get(id)!.claims > 0 && (rb.get(id)?.claims ?? 0) > 0)
      .sort();
    const rate = (m: typeof ra, id: string) => m.get(id)!.verified / m.get(id)!.claims;
    out[copilot] = {
      verificationRate: paired(
        ids.map((id) => rate(ra, id)),
        ids.map((id) => rate(rb, id)),
        `compare:grounding:${copilot}`,
      ),
      rateA: overall(ra),
      rateB: overall(rb),
    };
  }
  return out;
}
