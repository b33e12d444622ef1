import type { ItemFailure } from '../contract/run';

/** Failure kinds another attempt may fix, for failures that do not say (`transient`): they never trip the breaker. */
const TRANSIENT = new Set(['timeout', 'network', 'rate_limited', 'cancelled', 'store_busy', 'store_unreachable']);

/**
 * Config `failFast`: how many of an endpoint's first items may fail, all for a non-transient reason, before the run
 * pauses; and over how many of its last items (`window`) what share may so fail (`maxFailureRate`).
 */
export interface FailFast {
  firstCalls: number;
  window: number;
  maxFailureRate: number;
}

export const FAIL_FAST_DEFAULTS: FailFast = { firstCalls: 5, window: 20, maxFailureRate: 0.5 };

/** The run's `failFast` setting with its defaults filled in (`false` turns the item rules off; quota always trips). */
export function failFastFrom(setting: Partial<FailFast> | false | undefined): FailFast | false {
  return setting === false ? false : { ...FAIL_FAST_DEFAULTS, ...setting };
}

/**
 * One endpoint's circuit breaker: the run pauses (workflows/runControl.ts) when the endpoint is out of quota or credit
 * (at the first such failure: every further call would be refused and some are billed), when its first `firstCalls`
 * items all failed for a non-transient reason (a wrong answerPath, a bad key, a model that does not exist): asking the
 * rest would only fail them too, or when, over its last `window` finished items, the share that failed for a
 * non-transient reason reaches `maxFailureRate` (an endpoint that broke mid-run, or fails on most queries). The reason
 * is the endpoint's own words, for the user to fix and `judgeflow resume`. Deterministic: it only counts outcomes the
 * workflow saw.
 */
export class Breaker {
  private seen = 0;
  private failedFirst = 0;
  private lastFailure?: ItemFailure;
  /** The last `window` items: the failure message of each that failed for a non-transient reason, else null. */
  private recent: Array<string | null> = [];

  constructor(
    private readonly who: string,
    private failFast: FailFast | false,
  ) {}

  /** Start afresh (the endpoint's settings were replaced: `judgeflow resume --config`), with the run's `failFast` now. */
  reset(failFast: FailFast | false): void {
    Object.assign(this, { seen: 0, failedFirst: 0, lastFailure: undefined, recent: [], failFast });
  }

  /** An item ended: its failure (undefined when it succeeded). Returns why the run must pause, or null. */
  observe(failure: ItemFailure | undefined): string | null {
    this.seen++;
    if (failure && /quota/.test(failure.kind)) return `${this.who} out of quota or credit: ${failure.message}`;
    if (!this.failFast) return null;
    const lasting =
      failure && !(failure.transient ?? TRANSIENT.has(failure.kind.replace(/^judge_/, ''))) ? failure : undefined;
    return this.firstCallsRule(lasting) ?? this.windowRule(lasting);
  }

  private firstCallsRule(lasting: ItemFailure | undefined): string | null {
    const { firstCalls } = this.failFast as FailFast;
    if (this.seen > firstCalls) return null;
    if (lasting) {
      this.failedFirst++;
      this.lastFailure = lasting;
    }
    if (this.seen === firstCalls && this.failedFirst === this.seen)
      return `${this.who} failing: ${this.lastFailure!.message}`;
    return null;
  }

  /** Over a full window only (a few early failures are the first-calls rule's); after a trip the window starts empty. */
  private windowRule(lasting: ItemFailure | undefined): string | null {
    const { window, maxFailureRate } = this.failFast as FailFast;
    this.recent.push(lasting ? lasting.message : null);
    if (this.recent.length > window) this.recent.shift();
    const failed = this.recent.filter((m): m is string => m !== null);
    if (this.recent.length < window || failed.length / window < maxFailureRate) return null;
    this.recent = [];
    return `${this.who} failing: ${failed.length} of the last ${window} items failed: ${topReason(failed)}`;
  }
}

/** The most frequent message (the latest of equally frequent ones). */
function topReason(messages: string[]): string {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  let top = messages[messages.length - 1];
  for (const [m, n] of counts) if (n > counts.get(top)!) top = m;
  return top;
}
