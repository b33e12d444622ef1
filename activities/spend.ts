import { newSpendTally, spendOfTally, tallyCalls, type SpendTally } from '../core/stats/cost';
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

/** Runs whose tally a worker keeps between looks; one dropped is tallied again from its first call. */
export const SPEND_TALLIES_KEPT = 300;
/** Calls read per query of a look. */
const PAGE = 10_000;

export function spendActivities(deps: ActivityDeps) {
  // Per worker process and store: each look reads only the calls recorded since this worker's last look at the run.
  const tallies = new Map<string, { tally: SpendTally; cursor: number }>();
  return {
    /** Every call recorded for the run so far, priced as the report prices them (core/stats/cost.ts). */
    async runSpend({ runId }: { runId: string }): Promise<RunSpend> {
      const run = await requireRun(deps, runId);
      const kept = tallies.get(runId) ?? { tally: newSpendTally(), cursor: 0 };
      tallies.delete(runId);
      for (;;) {
        const page = await deps.store.llmCallsAfter(runId, kept.cursor, PAGE);
        tallyCalls(kept.tally, page.calls);
        kept.cursor = page.cursor;
        if (page.calls.length < PAGE) break;
      }
      // Map order is insertion order: re-set on every look, so the first key is the run looked at least recently.
      tallies.set(runId, kept);
      if (tallies.size > SPEND_TALLIES_KEPT) tallies.delete(tallies.keys().next().value!);
      // Priced at each look from the run's config as it is now (resume --config can change the prices).
      return spendOfTally(kept.tally, run.copilots, run.config.pricing);
    },
  };
}
