import type { LimiterState } from '../../contract/run';

/** The window of calls in flight, AIMD (see Limiter): +1 per window of successes, halved once per burst of throttles. */
export class AimdWindow {
  private window: number;
  private lastDecrease = -Infinity;

  constructor(
    private concurrency: number,
    state?: Pick<LimiterState, 'window'>,
  ) {
    this.window = state?.window ?? concurrency;
  }

  /** Calls allowed in flight now, within [1, concurrency]. */
  get allowed(): number {
    return Math.max(1, Math.min(this.concurrency, Math.floor(this.window)));
  }

  /**
   * A new ceiling (`judgeflow tune`): lowered, the window shrinks to it at once; raised, a window at the old ceiling (no
   * throttle held it lower) opens to the new one, while one a throttle halved keeps growing from where it is.
   */
  setConcurrency(concurrency: number): void {
    if (this.window >= this.concurrency) this.window = concurrency;
    this.concurrency = concurrency;
    this.window = Math.min(this.window, concurrency);
  }

  succeeded(): void {
    this.window = Math.min(this.concurrency, this.window + 1 / this.allowed);
  }

  /** A call started at `startedAt` was throttled: true when this is a new burst (it started after the last halving). */
  throttled(startedAt: number, now: number): boolean {
    if (startedAt < this.lastDecrease) return false;
    this.window = Math.max(1, this.allowed / 2);
    this.lastDecrease = now;
    return true;
  }

  state(): Pick<LimiterState, 'window'> {
    return { window: this.window };
  }
}
