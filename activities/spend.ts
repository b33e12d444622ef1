import { summariseCost } from '../core/stats/cost';
import { requireRun, type ActivityDeps } from './deps';

/** What a run's calls have cost so far, as the endpoints reported their usage (the budget watch of a run). */
export interface RunSpend {
  /** null when the config gives no prices. */
  usd: number | null;
  tokens: number;
  calls: number;
  /** Calls whose endpoint reported no usage. */
  callsWithoutUsage: number;
  /** Of those, the calls whose tokens are estimated from their request and reply size (in the sums); the rest are not counted. */
  callsEstimated: number;
}

export function spendActivities(deps: ActivityDeps) {
  return {
    /** Every call recorded for the run so far, priced as the report prices them (core/stats/cost.ts). */
    async runSpend({ runId }: { runId: string }): Promise<RunSpend> {
      const run = await requireRun(deps, runId);
      const calls = await deps.store.llmCalls(runId);
      const cost = summariseCost(calls, run.copilots, run.config.pricing);
      const lines = [...Object.values(cost.copilots), ...Object.values(cost.judge)];
      return {
        usd: cost.total.estimatedCostUsd,
        tokens: cost.total.promptTokens + cost.total.completionTokens,
        calls: cost.total.calls,
        callsWithoutUsage: lines.reduce((n, l) => n + l.callsWithoutUsage, 0),
        callsEstimated: lines.reduce((n, l) => n + l.callsEstimated, 0),
      };
    },
  };
}
