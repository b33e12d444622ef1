import { Context } from '@temporalio/activity';

/**
 * Heartbeat while `work` runs, so a worker killed mid-call is noticed within the heartbeat timeout
 * instead of the (long) start-to-close timeout. Outside an activity (unit tests) it just runs `work`.
 * The first heartbeat leaves after `everyMs`, not at once: the server counts the heartbeat timeout from the activity's
 * start, and every heartbeat is a write of the run's state on the server, so a call shorter than that sends none.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, everyMs = 2_000): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return work();
  }
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

/**
 * A call the workflow's limiter started ahead of its time (`sendAt`, epoch ms): wait until then before sending it. Capped
 * at a few seconds, so a clock that differs between machines never parks an activity for long.
 */
export async function untilSendTime(sendAt: number | undefined): Promise<void> {
  const wait = sendAt === undefined ? 0 : Math.min(5_000, sendAt - Date.now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
