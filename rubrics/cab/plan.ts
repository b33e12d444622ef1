import type { JudgeUnit } from '../../core/model/store';
import type { Query } from '../../core/model/types';
import type { ReadyResponse } from '../../core/model/protocol';
import { buildPresentationDesign, predecessorImbalance, type PresentationDesign } from './presentation';

/** What planAhead stores with the run (the plan of ResultsStore.putJudgeUnits) and the report shows. */
export interface CabPlan {
  seed: string;
  presentation: PresentationDesign;
  predecessorImbalance: number;
}

/** A stored plan as written by this or an earlier release (which called the presentation design `schedule`). */
export function readCabPlan(stored: unknown): CabPlan | undefined {
  if (!stored) return undefined;
  const plan = stored as Partial<CabPlan> & { schedule?: PresentationDesign };
  const presentation = plan.presentation ?? plan.schedule;
  if (!presentation) return undefined;
  return { seed: plan.seed!, presentation, predecessorImbalance: plan.predecessorImbalance! };
}

/**
 * The presentation design is fixed before any answer is in, over every copilot; a
 * query missing some answers keeps the design's order of the copilots present.
 */
export function planCabAhead({
  queries,
  copilots,
  seed,
}: {
  queries: Query[];
  copilots: string[];
  seed: string;
}): CabPlan {
  const presentation = buildPresentationDesign({ seed, queries: queries.map((q) => ({ queryId: q.id, copilots })) });
  return { seed, presentation, predecessorImbalance: predecessorImbalance(presentation) };
}

/** A query's shared conversation is ready once every copilot has answered it or failed for good (and one answered). */
export function readyCabUnits({
  query,
  responses,
  copilots,
  plan,
}: {
  query: Query;
  responses: ReadyResponse[];
  copilots: string[];
  plan: unknown;
}): JudgeUnit[] {
  if (copilots.some((c) => !responses.some((r) => r.copilot === c))) return [];
  const ok = new Set(responses.filter((r) => r.status === 'ok').map((r) => r.copilot));
  const order = readCabPlan(plan)?.presentation.orders[query.id] ?? copilots;
  const present = order.filter((c) => ok.has(c));
  return present.length ? [{ queryId: query.id, copilots: present }] : [];
}
