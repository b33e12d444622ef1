import { Context } from '@temporalio/activity';
import type { CallOutcome } from '../contract/run';
import { cancellationSignal, withHeartbeat } from './heartbeat';

/** What a run of calls in one activity did: the items it finished, in order, and why it stopped early (if it did). */
export interface BatchResult<R> {
  /** Results of the items finished, a prefix of the items asked for; the workflow asks for the rest one by one. */
  results: R[];
  /** When each call was sent (the stopping one too), for the workflow's limiter. */
  sentAt: number[];
  /** What the endpoint said over the batch: tokens summed, its latest rate-limit headers, a throttle that stopped it. */
  outcome: CallOutcome;
  /** Why the batch stopped before its last item: a throttle, the run paused, or the error of the item it stopped at. */
  stoppedBy?: 'throttle' | 'paused' | string;
}

/** The run workflow's query (workflows/runControl.ts heldQuery): true while the run is paused. */
export const HELD_QUERY = 'held';

/**
 * Whether the run that started this activity is paused, asked of its workflow (a query: read-only, no history event).
 * An activity of a workflow without the query (or a query that fails) goes on: the workflow's own hold still applies.
 */
export async function runIsHeld(): Promise<boolean> {
  try {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId;
    return workflowId !== undefined && (await context.client.workflow.getHandle(workflowId).query<boolean>(HELD_QUERY)) === true;
  } catch {
    return false;
  }
}

/**
 * How long before a call ends a look at the pause may have been answered and still stand for the item after it. A look
 * is a query of the run's workflow: a round trip through the Temporal server and the workflow's thread, 20–50 ms on a
 * quiet machine and a few hundred under load. Asked after each call it added that much to every item of a batch after
 * the first (a joint LATTICE judge of 400 ms calls ran at 1.3–1.5× its bound, 2026-12-01); sent while the call is in
 * flight, timed to be answered just as it ends, it costs nothing. A look answered earlier than this does not stand
 * (the pause could have come since): the batch asks again after the call, as it would without the timing.
 */
export const LOOK_FRESH_MS = 50;

/** Per run (workflow id), this process's running times of a batch's calls and of its looks at the pause. */
const lookTimings = new Map<string, { callMs?: number; lookMs?: number }>();
const runningMean = (previous: number | undefined, sample: number) => (previous === undefined ? sample : 0.7 * previous + 0.3 * sample);

function timingsOf(): { callMs?: number; lookMs?: number } {
  let workflowId = '';
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
  } catch {
    // outside an activity (unit tests): one shared entry
  }
  let entry = lookTimings.get(workflowId);
  if (!entry) {
    if (lookTimings.size >= 1_000) lookTimings.delete(lookTimings.keys().next().value!);
    lookTimings.set(workflowId, (entry = {}));
  }
  return entry;
}

interface Look {
  /** Whether the run was held, and when the answer came (ms since the epoch); rejects as `held` did. */
  answer: Promise<{ held: boolean; answeredAt: number }>;
  /** Send it now if its time has not come (the call ended sooner than timed). */
  sendNow(): void;
  cancel(): void;
}

/** A look at the pause sent `delayMs` from now (a timer the batch cancels when it stops before its next item). */
function lookIn(delayMs: number, held: () => Promise<boolean>, timings: { lookMs?: number }): Look {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let state: 'waiting' | 'sent' | 'cancelled' = 'waiting';
  let send = () => undefined as void;
  const answer = new Promise<{ held: boolean; answeredAt: number }>((resolve, reject) => {
    send = () => {
      if (state !== 'waiting') return;
      state = 'sent';
      clearTimeout(timer);
      const sentAt = Date.now();
      held().then((h) => {
        const answeredAt = Date.now();
        timings.lookMs = runningMean(timings.lookMs, answeredAt - sentAt);
        resolve({ held: h, answeredAt });
      }, reject);
    };
  });
  answer.catch(() => undefined); // a cancelled look's failure is nobody's
  if (delayMs > 0) timer = setTimeout(send, delayMs);
  else send();
  return {
    answer,
    sendNow: send,
    cancel: () => {
      if (state === 'waiting') state = 'cancelled';
      clearTimeout(timer);
    },
  };
}

/**
 * The look for the item after a call sent at `sentAt`: timed from this run's call and look times to be answered as the
 * call ends; none until both have been timed (the batch then looks after the call).
 */
function lookNearEnd(sentAt: number, held: () => Promise<boolean>, timings: { callMs?: number; lookMs?: number }): Look | undefined {
  if (timings.callMs === undefined || timings.lookMs === undefined) return undefined;
  return lookIn(sentAt + timings.callMs - timings.lookMs - LOOK_FRESH_MS / 2 - Date.now(), held, timings);
}

/** Whether the run is held as of (about) `callEnded`: the timed look when it is fresh enough, else one asked now. */
async function heldAfter(look: Look | undefined, callEnded: number, held: () => Promise<boolean>, timings: { lookMs?: number }): Promise<boolean> {
  if (look) {
    look.sendNow();
    const answer = await look.answer;
    if (answer.answeredAt >= callEnded - LOOK_FRESH_MS) return answer.held;
  }
  return (await lookIn(0, held, timings).answer).held;
}

/**
 * Make the calls of several work items in a row, in one activity: a call costs its latency, not a workflow task, an
 * activity dispatch and a completion on the Temporal server besides (tens of milliseconds each, at 400 ms a call about
 * a tenth of the run). Items are stored as they finish, so a batch retried after a dead worker resumes where it was.
 * Stops at the first throttle (the workflow's limiter must hear of it before more calls go) or error: that item and
 * the rest go back to the workflow, which asks them one per activity, with each item's own attempts.
 * Before each item after the first it asks whether the run is paused (`held`), with a look sent while the call before
 * it is in flight and answered at most LOOK_FRESH_MS before that call ended: once a pause is recorded in the workflow no
 * new call of the batch starts (a pause recorded in the last LOOK_FRESH_MS of a call may let one more go); the rest go
 * back (`stoppedBy: 'paused'`) and wait there for the resume.
 */
export async function runBatch<K, R extends { outcome: CallOutcome }>(keys: K[], call: (key: K) => Promise<R>, throttled: (result: R) => boolean, held: () => Promise<boolean> = runIsHeld): Promise<BatchResult<Omit<R, 'outcome'>>> {
  const results: Array<Omit<R, 'outcome'>> = [];
  const sentAt: number[] = [];
  const outcome: CallOutcome = {};
  const signal = cancellationSignal();
  const note = (o: CallOutcome) => {
    if (o.tokens) outcome.tokens = (outcome.tokens ?? 0) + o.tokens;
    if (o.rateLimit) outcome.rateLimit = o.rateLimit;
  };
  const timings = timingsOf();
  let look: Look | undefined;
  let callEnded = 0;
  return withHeartbeat(async () => {
    try {
      for (const [i, key] of keys.entries()) {
        if (signal.aborted) throw signal.reason;
        // The first item started when the workflow's lane saw the run not held.
        if (i > 0 && (await heldAfter(look, callEnded, held, timings))) return { results, sentAt, outcome, stoppedBy: 'paused' };
        const sent = Date.now();
        sentAt.push(sent);
        let result: R;
        try {
          const pending = call(key); // the call leaves first: a look never delays it
          look = i + 1 < keys.length ? lookNearEnd(sent, held, timings) : undefined;
          result = await pending;
        } catch (error) {
          if (signal.aborted) throw error;
          return { results, sentAt, outcome, stoppedBy: error instanceof Error ? error.message : String(error) };
        }
        callEnded = Date.now();
        timings.callMs = runningMean(timings.callMs, callEnded - sent);
        const { outcome: callOutcome, ...rest } = result;
        note(callOutcome);
        if (throttled(result)) return { results, sentAt, outcome: { ...outcome, throttled: true, retryAfterMs: callOutcome.retryAfterMs, cause: callOutcome.cause }, stoppedBy: 'throttle' };
        results.push(rest);
      }
      return { results, sentAt, outcome };
    } finally {
      look?.cancel();
    }
  });
}
