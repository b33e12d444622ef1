import type { ActivityOptions } from '@temporalio/workflow';

/**
 * How long a batch of calls (several work items asked in a row by one activity, see activities/itemGroup.ts) is planned
 * to take at most. Between two activities of one place the workflow must hear the first one finish and schedule the
 * next (a workflow task and an activity dispatch, 45–57 ms on a quiet machine), while items in one activity follow
 * each other at once (5–6 ms between a judge conversation's turns). At 2 s a CryptoAnalystBench conversation (five
 * 400 ms turns) always went alone and paid that round trip per query (issue 19); at 20 s it goes in fives like short
 * calls. Still short enough that continue-as-new (which waits for calls in flight) and progress stay prompt; a dead
 * worker is noticed by its heartbeat and a retried batch skips what it stored.
 */
const BATCH_SPAN_MS = 20_000;
/** The most items in one batch under the share rule (see batchSize). */
const MAX_BATCH = 25;
/** A batch may hold this many while each place of the window still has as many left. */
export const SHARE_BATCH = 5;
/** While many remain, a batch takes at most the items left ÷ (places × this): the rest is kept for the tail. */
const TAIL_RESERVE = 1.5;

/**
 * Items for the next start of an endpoint whose only limit now is its window: none until its calls have been timed
 * (the first go one by one), never more than fit in BATCH_SPAN_MS. Given the other places' work in flight (`busyMs`,
 * as EndpointLane gives it since the patch `fill-batches`), as many as end this place's work with theirs
 * (filledBatchSize). Without it, the share rule, which runs started before that patch replay: at most MAX_BATCH, and
 * within that the larger of: a place's share of the items left ÷ TAIL_RESERVE (so while many remain a place makes few
 * round trips), and SHARE_BATCH while every place has that many left. Batches shrink as the run nears its end, so no
 * place is left calling a long batch while the others have nothing: a place's last batch is the grain of the stage's
 * tail (eight 400 ms calls per batch under the plain share rule left places idle at the end, 1.14–1.17× the bound
 * against 1.11–1.12× with five, 2026-12-01). A simulation of 12 places (400 ms calls ±10%, a 50 ms round trip between
 * batches, 3 ms between the calls of one; 80 to 12,000 items, 4 to 32 places) put the span at 1.013–1.027× the bound
 * from 1,200 items, against 1.033–1.040× with the share rule capped at five, and no worse below that.
 */
export function batchSize({
  remaining,
  allowed,
  callMs,
  max = Infinity,
  busyMs,
}: {
  remaining: number;
  allowed: number;
  callMs?: number;
  /** At most this many (the lane's own cap, see EndpointLane). */
  max?: number;
  /**
   * The other places' work still expected (ms, summed: each running start's items × callMs, less the time it has run).
   * Given, the batch is sized so this place ends when the others do (filledBatchSize); absent, by the share rule above
   * (a run started before the patch `fill-batches`, whose histories replay that rule).
   */
  busyMs?: number;
}): number {
  if (callMs === undefined) return 1;
  if (busyMs !== undefined) return filledBatchSize({ remaining, allowed, callMs, max, busyMs });
  const places = Math.max(1, allowed);
  const share = Math.max(
    Math.floor(remaining / (places * TAIL_RESERVE)),
    Math.min(SHARE_BATCH, Math.floor(remaining / places)),
  );
  return Math.max(1, Math.min(max, MAX_BATCH, Math.floor(BATCH_SPAN_MS / Math.max(1, callMs)), share));
}

/** The most items of one batch under filledBatchSize (20 s of 400 ms calls; BATCH_SPAN_MS caps slower ones). */
const MAX_FILLED_BATCH = 50;

/**
 * A batch that ends when the rest of the window's work does: the work left (the items left × callMs, plus what the
 * other places' running starts still have to do) spread evenly over the places, and this place's part of it in items.
 * Under the share rule every place made about nine starts over 1,200 items × 12 places, each paying a workflow task and
 * an activity dispatch (30 ms a start beyond the 5 ms between the calls of one batch, 2026-12-04, docs/bench.md);
 * filled, about four, and the last starts of all places still end together. A model of 12 places at 400 ms a call
 * ±0.5–10%, 33 ms a start and 4.8 ms between calls, 20 seeds (`node scripts/simulate-batch-sizes.js 400 33 4.8
 * JITTER`): 1,200 items 1.014–1.019× the bound in 45 starts against 1.019–1.022× in 113; 240 items 1.019–1.038× against
 * 1.034–1.051×; 12,000 items 1.014× in 270 against 1.015–1.016× in 545. With 2.4 s calls ±20% (a conversation) the two
 * are alike.
 */
function filledBatchSize({
  remaining,
  allowed,
  callMs,
  max,
  busyMs,
}: {
  remaining: number;
  allowed: number;
  callMs: number;
  max: number;
  busyMs: number;
}): number {
  const places = Math.max(1, allowed);
  const perCall = Math.max(1, callMs);
  const part = Math.floor((remaining * perCall + Math.max(0, busyMs)) / (places * perCall));
  return Math.max(1, Math.min(remaining, max, MAX_FILLED_BATCH, Math.floor(BATCH_SPAN_MS / perCall), part));
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
