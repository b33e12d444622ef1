import type { ItemFailure } from './types';

/** Failure kinds another attempt may fix, for failures that do not say (`transient`): they never trip the breaker. */
const TRANSIENT = new Set(['timeout', 'network', 'rate_limited', 'cancelled', 'store_busy', 'store_unreachable']);

/** Config `failFast`: how many of an endpoint's first items may fail, all for a non-transient reason, before the run pauses. */
export interface FailFast {
  firstCalls: number;
}

/**
 * One endpoint's circuit breaker: the run pauses (workflows/runControl.ts) when the endpoint is out of quota or credit
 * (at the first such failure: every further call would be refused and some are billed), or when its first
 * `firstCalls` items all failed for a non-transient reason (a wrong answerPath, a bad key, a model that does not
 * exist): asking the rest would only fail them too. The reason is the endpoint's own words, for the user to fix and
 * `judgeflow resume`. Deterministic: it only counts outcomes the workflow saw.
 */
export class Breaker {
  private seen = 0;
  private failedFirst = 0;
  private lastFailure?: ItemFailure;

  constructor(
    private readonly who: string,
    private readonly failFast: FailFast | false,
  ) {}

  /** An item ended: its failure (undefined when it succeeded). Returns why the run must pause, or null. */
  observe(failure: ItemFailure | undefined): string | null {
    this.seen++;
    if (failure && /quota/.test(failure.kind)) return `${this.who} out of quota or credit: ${failure.message}`;
    if (!this.failFast || this.seen > this.failFast.firstCalls) return null;
    if (failure && !(failure.transient ?? TRANSIENT.has(failure.kind.replace(/^judge_/, '')))) {
      this.failedFirst++;
      this.lastFailure = failure;
    }
    if (this.seen === this.failFast.firstCalls && this.failedFirst === this.seen) return `${this.who} failing: ${this.lastFailure!.message}`;
    return null;
  }
}
