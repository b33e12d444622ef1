import { Context } from '@temporalio/activity';
import type { SendSlot } from '../contract/run';

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

/** Per run and endpoint, when this worker last let a paced call go (pruned as they age). */
const lastSends = new Map<string, number>();

/**
 * A paced call (see SendSlot): wait until the limiter's time for it, and until this worker's previous call to that
 * endpoint is `spacingMs` behind. Capped at a few seconds, so a clock that differs between machines never parks an
 * activity for long.
 */
export async function untilSendTime(runId: string, send: SendSlot | undefined): Promise<void> {
  if (!send) return;
  const key = `${runId}/${send.endpoint}`;
  // A call picked up late goes now, and the next one a full spacing after it.
  const at = Math.max(send.at, (lastSends.get(key) ?? -Infinity) + (send.spacingMs ?? 0), Date.now());
  lastSends.set(key, at); // taken before waiting, so the next call of this worker queues behind it
  if (lastSends.size > 1_000) for (const [k, last] of lastSends) if (last < Date.now() - 60_000) lastSends.delete(k);
  const wait = Math.min(5_000, at - Date.now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
