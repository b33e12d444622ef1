import type { JudgeUnit } from '../../core/store';
import type { Query, StoredResponse } from '../../core/types';
import { buildPresentationDesign, predecessorImbalance, type PresentationDesign } from './presentation';

/** What planUnits stores with the run (the plan of ResultsStore.putJudgeUnits) and the report shows. */
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
 * One judge unit per query that has at least one collected response; `copilots` are the copilots present,
 * in the presentation order chosen by the seeded presentation design (balanced positions and predecessors).
 */
export function planCabUnits({ queries, responses, copilots, seed }: { queries: Query[]; responses: StoredResponse[]; copilots: string[]; seed: string }): {
  units: JudgeUnit[];
  plan: CabPlan;
} {
  const collected = new Set(responses.filter((r) => r.status === 'ok').map((r) => `${r.queryId}\u0000${r.copilot}`));
  const present = queries
    .map((q) => ({ queryId: q.id, copilots: copilots.filter((c) => collected.has(`${q.id}\u0000${c}`)) }))
    .filter((q) => q.copilots.length > 0);
  const presentation = buildPresentationDesign({ seed, queries: present });
  const units = present.map((q) => ({ queryId: q.queryId, copilots: presentation.orders[q.queryId] }));
  return { units, plan: { seed, presentation, predecessorImbalance: predecessorImbalance(presentation) } };
}

/**
 * A run that judges while it collects fixes the presentation design before any answer is in, over every copilot; a
 * query missing some answers keeps the design's order of the copilots present.
 */
export function planCabAhead({ queries, copilots, seed }: { queries: Query[]; copilots: string[]; seed: string }): CabPlan {
  const presentation = buildPresentationDesign({ seed, queries: queries.map((q) => ({ queryId: q.id, copilots })) });
  return { seed, presentation, predecessorImbalance: predecessorImbalance(presentation) };
}

/** A query's shared conversation is ready once every copilot has answered it or failed for good (and one answered). */
export function readyCabUnits({ query, responses, copilots, plan }: { query: Query; responses: StoredResponse[]; copilots: string[]; plan: unknown }): JudgeUnit[] {
  if (copilots.some((c) => !responses.some((r) => r.copilot === c))) return [];
  const ok = new Set(responses.filter((r) => r.status === 'ok').map((r) => r.copilot));
  const order = readCabPlan(plan)?.presentation.orders[query.id] ?? copilots;
  const present = order.filter((c) => ok.has(c));
  return present.length ? [{ queryId: query.id, copilots: present }] : [];
}
