import type { LimiterState } from '../types';

/** The window of calls in flight, AIMD (see Limiter): +1 per window of successes, halved once per burst of throttles. */
export class AimdWindow {
  private window: number;
  private lastDecrease = -Infinity;

  constructor(private readonly concurrency: number, state?: Pick<LimiterState, 'window'>) {
    this.window = state?.window ?? concurrency;
  }

  /** Calls allowed in flight now, within [1, concurrency]. */
  get allowed(): number {
    return Math.max(1, Math.min(this.concurrency, Math.floor(this.window)));
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
