import { Context } from '@temporalio/activity';

/**
 * Heartbeat while `work` runs, so a worker killed mid-call is noticed within the heartbeat timeout
 * instead of the (long) start-to-close timeout. Outside an activity (unit tests) it just runs `work`.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, everyMs = 2_000): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return work();
  }
  context.heartbeat();
  const timer = setInterval(() => context!.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/** The activity's cancellation signal (delivered with heartbeat responses); never aborted outside an activity (unit tests). */
export function cancellationSignal(): AbortSignal {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return new AbortController().signal;
  }
}
