import type { ActivityOptions } from '@temporalio/workflow';

/**
 * How long a batch of calls (several work items asked in a row by one activity, see activities/itemGroup.ts) is planned
 * to take at most. Between two activities of one place the workflow must hear the first one finish and schedule the
 * next (a workflow task and an activity dispatch, 45–57 ms on a quiet machine), while items in one activity follow
 * each other at once (5–6 ms between a judge conversation's turns). At 2 s a CryptoAnalystBench conversation (five
 * 400 ms turns) always went alone and paid that round trip per query (issue 19); at 20 s it goes in fives like short
 * calls, so the round trip is under 1% of a place's time. At most five: a batch is also the grain of a place's tail (the
 * last batches of a stage), and eight 400 ms calls in one left places idle at the end (latency-bound bench 1.14–1.17×
 * against 1.11–1.12× with five, 2026-12-01). Still short enough that continue-as-new (which waits for calls
 * in flight) and progress stay prompt; a dead worker is noticed by its heartbeat and a retried batch skips what it stored.
 */
const BATCH_SPAN_MS = 20_000;
const MAX_BATCH = 5;

/**
 * Items for the next start of an endpoint whose only limit now is its window: none until its calls have been timed
 * (the first go one by one), never more than fit in BATCH_SPAN_MS or MAX_BATCH, and no more than leaves every place of the window
 * a share of the items left (so batching never idles a place that could be calling).
 */
export function batchSize({
  remaining,
  allowed,
  callMs,
}: {
  remaining: number;
  allowed: number;
  callMs?: number;
}): number {
  if (callMs === undefined) return 1;
  return Math.max(
    1,
    Math.min(MAX_BATCH, Math.floor(BATCH_SPAN_MS / Math.max(1, callMs)), Math.floor(remaining / Math.max(1, allowed))),
  );
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
