import type { ActivityOptions } from '@temporalio/workflow';

/**
 * How long a batch of calls (several work items asked in a row by one activity, see activities/batches.ts) is planned
 * to take at most: short, so progress, continue-as-new (which waits for calls in flight) and a dead worker's retry stay
 * prompt, and long enough that the per-activity cost is spread over several calls.
 */
const BATCH_SPAN_MS = 2_000;
const MAX_BATCH = 8;

/**
 * Items for the next start of an endpoint whose only limit now is its window: none until its calls have been timed
 * (the first go one by one), never more than fit in BATCH_SPAN_MS, and no more than leaves every place of the window
 * a share of the items left (so batching never idles a place that could be calling).
 */
export function batchSize({ remaining, allowed, callMs }: { remaining: number; allowed: number; callMs?: number }): number {
  if (callMs === undefined) return 1;
  return Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_SPAN_MS / Math.max(1, callMs)), Math.floor(remaining / Math.max(1, allowed))));
}

/** A running average of an endpoint's time per call, as its activities come back (workflow time: deterministic). */
export class CallTimes {
  private readonly perCall = new Map<string, number>();

  note(endpoint: string, elapsedMs: number, calls: number): void {
    if (calls < 1) return;
    const sample = elapsedMs / calls;
    const previous = this.perCall.get(endpoint);
    this.perCall.set(endpoint, previous === undefined ? sample : 0.7 * previous + 0.3 * sample);
  }

  of(endpoint: string): number | undefined {
    return this.perCall.get(endpoint);
  }
}

/** A batch activity's options: one item's timeout per item; its retries only cover a dead worker (items come back). */
export function batchOptions(single: ActivityOptions & { startToCloseTimeout: number }, size: number): ActivityOptions {
  return {
    ...single,
    startToCloseTimeout: single.startToCloseTimeout * size,
    retry: { ...single.retry, maximumAttempts: 3 },
  };
}
