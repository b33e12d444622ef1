import type { LimiterState } from '../../contract/run';

/** The start rate after a throttle: 0.9 × the admitted rate, back to it along a cubic in 10 s (see Limiter). */
const DECREASE = 0.9;
const RECOVERY_S = 10;
/** C of CUBIC: (1 − decrease) / K³. */
const CUBIC_C = (1 - DECREASE) / RECOVERY_S ** 3;
/** Admitted starts are counted over this span (or since the first start, when that is sooner). */
export const ADMITTED_SPAN_MS = 5_000;

/** The start rate learnt from throttles, CUBIC-like (see Limiter). */
export class CubicStartRate {
  /** The rate admitted at the last new burst of throttles, and when; undefined before the first. */
  private base?: number;
  private throttledAt: number;
  /** When the rate was first measured from admitted calls (the same burst's later refusals refine it). */
  private measuredAt?: number;
  /** Start times of throttled calls, within the span admitted starts are counted over. */
  private refused: number[];

  constructor(state?: LimiterState) {
    this.base = state?.rateBase ?? undefined;
    this.throttledAt = state?.throttledAt ?? 0;
    this.refused = state?.refusedStarts ?? [];
  }

  /** Calls per second along the cubic; undefined before any throttle. */
  rate(now: number): number | undefined {
    if (this.base === undefined) return undefined;
    const seconds = Math.max(0, now - this.throttledAt) / 1_000;
    return this.base * (1 + CUBIC_C * (seconds - RECOVERY_S) ** 3);
  }

  /** A refused call (any): counted against what the endpoint admitted. */
  refusedAt(startedAt: number, now: number): void {
    this.refused = [...this.refused.filter((at) => at > now - ADMITTED_SPAN_MS), startedAt];
  }

  /**
   * A new burst of throttles. Paced already, the limit is just below the pace the refused call started at (as CUBIC
   * takes the window at a loss); the first time, it is what the endpoint admitted.
   */
  newBurst(now: number, refusedAt: number, retryAfterMs: number, starts: number[]): void {
    const pace = this.base !== undefined ? Math.max(0.01, this.rate(refusedAt)!) : undefined;
    this.base = pace ?? this.admitted(now, refusedAt, retryAfterMs, starts);
    this.measuredAt = pace === undefined ? now : undefined;
    this.throttledAt = now;
  }

  /**
   * A later refusal of the burst that gave the first measure: calls started with the refused one were counted as
   * admitted until their own refusals came back. Measured again with them.
   */
  sameBurst(now: number, refusedAt: number, retryAfterMs: number, starts: number[]): void {
    if (this.measuredAt === undefined || this.base === undefined) return;
    this.base = Math.min(this.base, this.admitted(now, refusedAt, retryAfterMs, starts));
  }

  /** Paced by an endpoint's headers from now on: what they say supersedes a rate guessed from throttles. */
  forget(): void {
    this.base = undefined;
  }

  /**
   * The rate the endpoint admitted: the calls started up to the refused one over the span (the last 5 s, or since the
   * first start), less those it refused, over that span up to when it said it would take another (the refused call's
   * start + Retry-After: the workflow may hear of the refusal a while after it was made). Against a sliding window that
   * first fills in a burst this is its limit over its window; in a steady state, the rate it let through. At least one
   * call, so an endpoint that refuses the very first call still gets asked again.
   */
  private admitted(now: number, refusedAt: number, retryAfterMs: number, starts: number[]): number {
    const from = Math.max(now - ADMITTED_SPAN_MS, starts[0] ?? now);
    const started = starts.filter((at) => at >= from && at <= refusedAt).length;
    const refused = this.refused.filter((at) => at >= from && at <= refusedAt).length;
    return (1_000 * Math.max(1, started - refused)) / Math.max(100, refusedAt - from + retryAfterMs);
  }

  state(now: number): Pick<LimiterState, 'rateBase' | 'throttledAt' | 'refusedStarts'> {
    return {
      rateBase: this.base ?? null,
      throttledAt: this.throttledAt,
      refusedStarts: this.refused.filter((at) => at > now - ADMITTED_SPAN_MS),
    };
  }
}
