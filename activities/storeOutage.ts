import { Context } from '@temporalio/activity';
import type { ResultsStore } from '../core/model/store';
import { isStoreConnectionError, STORE_UNREACHABLE_CODE } from './adapters/errors';

/** How long activities wait for an unreachable results store when the run does not say (`storeOutageMinutes`). */
export const DEFAULT_STORE_OUTAGE_MINUTES = 30;

export interface OutageOptions {
  /** The wait for calls that name no run whose policy is known. */
  defaultOutageMs?: number;
  /** Longest pause between two tries. */
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The results store as activities use it: a call that fails because the database cannot be reached (PostgreSQL down or
 * restarting) is made again, with backoff, heartbeating meanwhile, until it succeeds or the run's `storeOutageMinutes`
 * have passed since the first failure. A store outage therefore never reaches the copilot's or judge's retry schedule, and
 * an answer already paid for waits in the activity until it is stored. Every store write is idempotent (core/model/store.ts),
 * so repeating one that may have landed before the connection dropped stores nothing twice.
 *
 * The bound is learnt from the run records this store returns (every activity reads its run first); calls for other runs,
 * or naming none, wait `defaultOutageMs`.
 */
export function outageTolerantStore(store: ResultsStore, options: OutageOptions = {}): ResultsStore {
  const defaultMs = options.defaultOutageMs ?? DEFAULT_STORE_OUTAGE_MINUTES * 60_000;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  const sleep = options.sleep ?? heartbeatingSleep;
  const bounds = new Map<string, number>();

  const boundFor = (args: unknown[]): number => {
    // A batch (putResponses, putJudgments) is one run's: its first record names the run.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const runId =
      typeof first === 'string'
        ? first
        : typeof (first as { runId?: unknown })?.runId === 'string'
          ? (first as { runId: string }).runId
          : undefined;
    return (runId !== undefined ? bounds.get(runId) : undefined) ?? defaultMs;
  };
  const learn = (result: unknown) => {
    const run = result as { runId?: unknown; config?: { storeOutageMinutes?: unknown } } | null;
    const minutes = run?.config?.storeOutageMinutes;
    if (typeof run?.runId === 'string' && typeof minutes === 'number') bounds.set(run.runId, minutes * 60_000);
  };

  async function retrying<T>(name: string, call: () => Promise<T>, boundMs: number): Promise<T> {
    let since: number | undefined;
    let delay = 250;
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (!isStoreConnectionError(error)) throw error;
        since ??= Date.now();
        const left = since + boundMs - Date.now();
        if (left <= 0) {
          const minutes = Math.round((boundMs / 60_000) * 10) / 10;
          throw Object.assign(
            new Error(
              `the results store ${store.location} could not be reached for ${minutes} minute(s) (storeOutageMinutes), during ${name}: ${(error as Error).message}`,
            ),
            {
              code: STORE_UNREACHABLE_CODE,
            },
          );
        }
        await sleep(Math.min(delay, left));
        delay = Math.min(delay * 2, maxDelayMs);
      }
    }
  }

  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        const first = value.apply(target, args);
        if (!(first instanceof Promise)) return first;
        let attempt = 0;
        const result = retrying(
          String(property),
          () => (attempt++ === 0 ? first : value.apply(target, args)),
          boundFor(args),
        );
        return property === 'getRun' ? result.then((run) => (learn(run), run)) : result;
      };
    },
  });
}

/** Wait `ms`, heartbeating every second inside an activity (so a long outage is not taken for a dead worker); a cancel ends the wait. */
async function heartbeatingSleep(ms: number): Promise<void> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    // not in an activity (unit tests): a plain wait
  }
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (context?.cancellationSignal.aborted) throw context.cancellationSignal.reason;
    context?.heartbeat();
    await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, until - Date.now())));
  }
}
