import type { JudgeUnit } from '../../core/store';
import type { Query, StoredResponse } from '../../core/types';
import { buildSchedule, predecessorImbalance, type Schedule } from './schedule';

/** What planUnits stores with the run (kv `plan:<runId>`) and the report shows. */
export interface CabPlan {
  seed: string;
  schedule: Schedule;
  predecessorImbalance: number;
}

/**
 * One judge unit per query that has at least one collected response; `copilots` are the systems present,
 * in the presentation order chosen by the seeded schedule (balanced positions and predecessors).
 */
export function planCabUnits({ queries, responses, copilots, seed }: { queries: Query[]; responses: StoredResponse[]; copilots: string[]; seed: string }): {
  units: JudgeUnit[];
  plan: CabPlan;
} {
  const collected = new Set(responses.filter((r) => r.status === 'ok').map((r) => `${r.queryId}\u0000${r.copilot}`));
  const present = queries
    .map((q) => ({ queryId: q.id, systems: copilots.filter((c) => collected.has(`${q.id}\u0000${c}`)) }))
    .filter((q) => q.systems.length > 0);
  const schedule = buildSchedule({ seed, queries: present });
  const units = present.map((q) => ({ queryId: q.queryId, copilots: schedule.orders[q.queryId] }));
  return { units, plan: { seed, schedule, predecessorImbalance: predecessorImbalance(schedule) } };
}
