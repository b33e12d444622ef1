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
  even,
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
  /**
   * With busyMs: this place's part cut into equal batches (evenBatchSize), a part within PART_NUDGE of a whole item
   * taken up to it. Since the patch `even-batches`; a run started before replays the part cut down and capped.
   */
  even?: boolean;
}): number {
  if (callMs === undefined) return 1;
  if (busyMs !== undefined) return filledBatchSize({ remaining, allowed, callMs, max, busyMs, even });
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
  even = false,
}: {
  remaining: number;
  allowed: number;
  callMs: number;
  max: number;
  busyMs: number;
  even?: boolean;
}): number {
  const places = Math.max(1, allowed);
  const perCall = Math.max(1, callMs);
  const share = (remaining * perCall + Math.max(0, busyMs)) / (places * perCall);
  if (even) return evenBatchSize({ part: Math.max(1, Math.floor(share + PART_NUDGE)), remaining, perCall, max });
  return Math.max(
    1,
    Math.min(remaining, max, MAX_FILLED_BATCH, Math.floor(BATCH_SPAN_MS / perCall), Math.floor(share)),
  );
}

/**
 * A place's part (in calls, fractional) is cut down to whole items unless it is within this much of the next one. A
 * place that starts a little after the others (50–150 ms of a round of twelve) gets a part just under a whole number
 * (32.8 where the others had 33); cut down, the item it left over went alone at the end, four places calling once more
 * while eight waited. Rounded instead (0.5), the places stay in step when every call takes the same time; but when calls
 * vary (2.4 s ±20%, a conversation), the items left over are what lets the places that free first even out the end,
 * and rounding lost that (240 items × 12 places: 1.037× the bound against 1.024× cut down, in a variant of the model
 * below). A quarter of an item keeps the first: twelve places of 400 ms calls end within 50–140 ms of each other on the
 * real run (issue 29), and costs little of the second (`node scripts/simulate-batch-sizes.js 2400 33 4.8 0.2`: 1.024×
 * against 1.021× cut down, docs/bench.md).
 */
const PART_NUDGE = 0.25;

/** How far a batch cut from a place's part (evenBatchSize) may run past BATCH_SPAN_MS to save the place a start. */
const SPAN_STRETCH = 1.05;

/**
 * A place's part of the work left, in the fewest equal batches that fit (the first of them now). Cut down to the
 * largest batch instead, a part of 99 items at 34 a batch was 34 + 48 + 17 after the first: twelve places sized from
 * slightly different estimates made three to five starts each, and ended 75–290 ms apart (the run's last second, issue
 * 29). Cut evenly (33 + 33 + 33) the places stay in step, as a harness whose every slot makes the same calls does. A
 * part over the largest batch by up to SPAN_STRETCH takes one batch fewer (99 items of 405 ms calls: 50 + 49, not three
 * of 33): a batch runs 5% past its 20 s, and the place saves a start.
 */
function evenBatchSize({
  part,
  remaining,
  perCall,
  max,
}: {
  part: number;
  remaining: number;
  perCall: number;
  max: number;
}): number {
  const hardCap = Math.min(max, MAX_FILLED_BATCH);
  const largest = Math.max(1, Math.min(hardCap, Math.floor(BATCH_SPAN_MS / perCall)));
  const stretched = Math.max(1, Math.min(hardCap, Math.floor((SPAN_STRETCH * BATCH_SPAN_MS) / perCall)));
  let batches = Math.ceil(part / largest);
  if (batches > 1 && Math.ceil(part / (batches - 1)) <= stretched) batches--;
  return Math.max(1, Math.min(remaining, Math.ceil(part / batches)));
}

/**
 * A running average of an endpoint's time per call, as its activities come back (workflow time: deterministic); and
 * one of its batches' alone (`ofBatches`), for sizing batches. A single call's time carries a whole start (a workflow
 * task and an activity dispatch) and, for a fresh worker's first calls, its warm-up: the first twelve judge calls of a
 * 1,200 × 4 run came back after 0.5–0.6 s for 400 ms calls, and averaged with later batches that estimate capped the
 * first batches at 30–34 items and the next at 44–48, instead of 50 (issue 29).
 */
export class CallTimes {
  private readonly perCall = new Map<string, number>();
  private readonly perBatchedCall = new Map<string, number>();

  note(endpoint: string, elapsedMs: number, calls: number): void {
    if (calls < 1) return;
    const sample = elapsedMs / calls;
    average(this.perCall, endpoint, sample);
    if (calls > 1) average(this.perBatchedCall, endpoint, sample);
  }

  of(endpoint: string): number | undefined {
    return this.perCall.get(endpoint);
  }

  /** The time per call of the endpoint's batches, once one has come back; until then of(endpoint). */
  ofBatches(endpoint: string): number | undefined {
    return this.perBatchedCall.get(endpoint) ?? this.perCall.get(endpoint);
  }
}

function average(averages: Map<string, number>, endpoint: string, sample: number): void {
  const previous = averages.get(endpoint);
  averages.set(endpoint, previous === undefined ? sample : 0.7 * previous + 0.3 * sample);
}

/** A batch activity's options: one item's timeout per item; its retries only cover a dead worker (items come back). */
export function batchOptions(single: ActivityOptions & { startToCloseTimeout: number }, size: number): ActivityOptions {
  return {
    ...single,
    startToCloseTimeout: single.startToCloseTimeout * size,
    retry: { ...single.retry, maximumAttempts: 3 },
  };
}
