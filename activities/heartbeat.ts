import { Context } from '@temporalio/activity';
import type { CallOutcome, SendSlot } from '../contract/run';
import type { ResultsStore } from '../core/model/store';

/**
 * Heartbeat while `work` runs, so a worker killed mid-call is noticed within the heartbeat timeout
 * instead of the (long) start-to-close timeout. Only inside an activity (unit tests use MockActivityEnvironment).
 * The first heartbeat leaves after `everyMs`, not at once: the server counts the heartbeat timeout from the activity's
 * start, and every heartbeat is a write of the run's state on the server, so a call shorter than that sends none.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, everyMs = 2_000): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** This attempt of the current activity (1 for the first). */
export function currentAttempt(): number {
  return Context.current().info.attempt;
}

/** The current activity's cancellation signal (delivered with heartbeat responses). */
export function cancellationSignal(): AbortSignal {
  return Context.current().cancellationSignal;
}

/** How long a paced call waits at most for its slot, so a clock that differs between machines never parks an activity for long. */
const MAX_SEND_WAIT_MS = 5_000;

/**
 * A paced call (see SendSlot): wait until the limiter's time for it, and until the run's previous paced call to that
 * endpoint, from any worker, is `spacingMs` behind. The limiter's times are spaced for the whole run, but a call
 * picked up late goes at once; the slot claimed from the results store (one atomic upsert, shared by every worker of
 * the run) keeps late calls of different workers apart, where each worker's own memory would let two of them leave
 * together, a burst a sliding-window rate limit refuses. Capped at MAX_SEND_WAIT_MS. Returns what the workflow's
 * limiter is told of the call's send (`sentLateMs`: how long after the limiter's time it left, when it did), so a late
 * send counts when it left; the call should leave right after (its store reads done before).
 */
export async function untilSendTime(
  store: Pick<ResultsStore, 'claimSendSlot'>,
  runId: string,
  send: SendSlot | undefined,
  now: () => number = Date.now,
): Promise<Pick<CallOutcome, 'sentLateMs'>> {
  if (!send) return {};
  const earliest = Math.max(send.at, now());
  // Unspaced (a requests-per-minute cap or a Retry-After alone): the limiter's time is all there is to keep.
  const at = send.spacingMs ? await store.claimSendSlot(runId, send.endpoint, earliest, send.spacingMs) : earliest;
  const wait = Math.min(MAX_SEND_WAIT_MS, at - now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // Whole milliseconds: a timer fires a millisecond or so after its time even on an idle worker.
  const lateMs = Math.floor(now() - send.at);
  return lateMs > 0 ? { sentLateMs: lateMs } : {};
}
