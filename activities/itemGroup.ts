import { Context } from '@temporalio/activity';
import type { CallOutcome } from '../contract/run';
import { HELD_FRESH_MS, heldQuery } from '../contract/control';
import { cancellationSignal, withHeartbeat } from './heartbeat';

/** What a run of calls in one activity did: the items it finished, in order, and why it stopped early (if it did). */
export interface ItemGroupResult<R> {
  /** Results of the items finished, a prefix of the items asked for; the workflow asks for the rest one by one. */
  results: R[];
  /** When each call was sent (the stopping one too), for the workflow's limiter. */
  sentAt: number[];
  /** What the endpoint said over the batch: tokens summed, its latest rate-limit headers, a throttle that stopped it. */
  outcome: CallOutcome;
  /** Why the batch stopped before its last item: a throttle, the run paused, or the error of the item it stopped at. */
  stoppedBy?: 'throttle' | 'paused' | string;
}

type HeldAnswer = {
  askedAt: number;
  answer: Promise<boolean>;
  /** The latest answer that has come back, kept while a newer one is asked (see heldWithin). */
  answered?: { askedAt: number; held: boolean };
};
/** The latest `held` answer per workflow id, kept while fresh (entries of finished runs are dropped when next asked or swept). */
const heldAnswers = new Map<string, HeldAnswer>();

/**
 * Whether the workflow `workflowId` is paused, as `ask` answers it, reusing an answer asked less than `freshMs` ago
 * (measured from when it was asked: what the workflow said then, or later). Concurrent askers share one query. An
 * answer already back is taken at once while a newer one is on its way (a look ahead asks before the older answer is
 * stale for the looks that follow it): those looks do not wait for the newer query.
 */
export async function heldWithin(
  workflowId: string,
  ask: () => Promise<boolean>,
  freshMs = HELD_FRESH_MS,
  now: () => number = Date.now,
  answers: Map<string, HeldAnswer> = heldAnswers,
): Promise<boolean> {
  const at = now();
  const known = answers.get(workflowId);
  if (known?.answered && at - known.answered.askedAt < freshMs) return known.answered.held;
  if (known && at - known.askedAt < freshMs) return known.answer;
  if (answers.size > 1000) for (const [id, a] of answers) if (at - a.askedAt >= freshMs) answers.delete(id);
  const entry: HeldAnswer = { askedAt: at, answer: ask().catch(() => false), answered: known?.answered };
  answers.set(workflowId, entry);
  void entry.answer.then((held) => {
    const latest = answers.get(workflowId);
    if (latest && (latest.answered?.askedAt ?? -Infinity) < at) latest.answered = { askedAt: at, held };
  });
  return entry.answer;
}

/**
 * Whether the run that started this activity is paused, asked of its workflow (a query: read-only, no history event),
 * through heldWithin. An activity of a workflow without the query (or a query that fails) goes on: the workflow's own
 * hold still applies.
 */
export async function runIsHeld(freshMs = HELD_FRESH_MS): Promise<boolean> {
  try {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId;
    if (workflowId === undefined) return false;
    return await heldWithin(
      workflowId,
      async () => (await context.client.workflow.getHandle(workflowId).query(heldQuery)) === true,
      freshMs,
    );
  } catch {
    return false;
  }
}

/** How long before a call is expected to end the next item's `held` look is asked (see lookAhead). */
const LOOK_LEAD_MS = HELD_FRESH_MS * 0.6;
/**
 * The oldest answer a look ahead takes from another batch of the run (heldWithin shares one per run): one asked
 * longer ago is stale by the time the look it prepares is made, LOOK_LEAD_MS later, and that look would then wait for
 * a query of its own. Taking any answer still fresh now did that for 13% of a 1,200 × 4 run's items (148 of 1,152,
 * 5–12 ms each, 2026-12-05): twelve batches in step keep the same phases all run long, so a run drew that loss or not.
 */
const LOOK_AHEAD_FRESH_MS = HELD_FRESH_MS - LOOK_LEAD_MS;

/** The latest item call's time on this worker, for when a group's first look ahead is asked (a timing hint only). */
let lastCallMs: number | undefined;

/**
 * Ask the next item's `held` look while the current call is in flight, LOOK_LEAD_MS before the call is expected to
 * end, so that the look before the next item finds heldWithin's answer still fresh instead of waiting for a query
 * round trip (39 ms at the median, 104 ms on average at load 5, 2026-12-02: four times per five-item group, on each
 * slot's critical path). The look before the item is still made and still decides, with the same freshness, so a pause
 * stops the batch within the same HELD_FRESH_MS; a call slower than expected only finds the answer stale and asks
 * again, as before. An answer asked early is never used beyond its freshness (heldWithin measures from the asking).
 */
function lookAhead(
  held: (freshMs?: number) => Promise<boolean>,
  expectedMs?: number,
): ReturnType<typeof setTimeout> | undefined {
  if (expectedMs === undefined) return undefined; // no call timed yet: the look waits for the call, as before
  const timer = setTimeout(
    () => void held(LOOK_AHEAD_FRESH_MS).catch(() => undefined),
    Math.max(0, expectedMs - LOOK_LEAD_MS),
  );
  timer.unref?.();
  return timer;
}

/**
 * Make the calls of several work items in a row, in one activity: a call costs its latency, not a workflow task, an
 * activity dispatch and a completion on the Temporal server besides (tens of milliseconds each, at 400 ms a call about
 * a tenth of the run). Items are stored as they finish, so a batch retried after a dead worker resumes where it was.
 * Stops at the first throttle (the workflow's limiter must hear of it before more calls go) or error: that item and
 * the rest go back to the workflow, which asks them one per activity, with each item's own attempts.
 * Before each item after the first it asks whether the run is paused (`held`, an answer at most HELD_FRESH_MS old): from
 * HELD_FRESH_MS after a pause is recorded in the workflow no new call of the batch starts; the rest go back
 * (`stoppedBy: 'paused'`) and wait there for the resume. That look is asked ahead, during the call before it
 * (lookAhead), so its answer is usually there when the call ends.
 */
export async function runItemGroup<K, R extends { outcome: CallOutcome }>(
  keys: K[],
  call: (key: K) => Promise<R>,
  throttled: (result: R) => boolean,
  /** Whether the run is paused, by an answer at most `freshMs` (default HELD_FRESH_MS) old. */
  held: (freshMs?: number) => Promise<boolean> = runIsHeld,
): Promise<ItemGroupResult<Omit<R, 'outcome'>>> {
  const results: Array<Omit<R, 'outcome'>> = [];
  const sentAt: number[] = [];
  const outcome: CallOutcome = {};
  const signal = cancellationSignal();
  let previousCallMs: number | undefined;
  const note = (o: CallOutcome) => {
    if (o.tokens) outcome.tokens = (outcome.tokens ?? 0) + o.tokens;
    if (o.rateLimit) outcome.rateLimit = o.rateLimit;
  };
  return withHeartbeat(async () => {
    for (const [i, key] of keys.entries()) {
      if (signal.aborted) throw signal.reason;
      // The first item started when the workflow's lane saw the run not held.
      if (i > 0 && (await held())) return { results, sentAt, outcome, stoppedBy: 'paused' };
      sentAt.push(Date.now());
      // Expected as long as this group's previous call, or the worker's latest for its first: the call's own time,
      // not the time between two sends, which holds the look before this item too and would set the look late.
      const look = i < keys.length - 1 ? lookAhead(held, i > 0 ? previousCallMs : lastCallMs) : undefined;
      let result: R;
      try {
        result = await call(key);
      } catch (error) {
        if (signal.aborted) throw error;
        return { results, sentAt, outcome, stoppedBy: error instanceof Error ? error.message : String(error) };
      } finally {
        if (look) clearTimeout(look);
      }
      previousCallMs = lastCallMs = Date.now() - sentAt[i];
      const { outcome: callOutcome, ...rest } = result;
      note(callOutcome);
      if (throttled(result))
        return {
          results,
          sentAt,
          outcome: { ...outcome, throttled: true, retryAfterMs: callOutcome.retryAfterMs, cause: callOutcome.cause },
          stoppedBy: 'throttle',
        };
      results.push(rest);
    }
    return { results, sentAt, outcome };
  });
}
