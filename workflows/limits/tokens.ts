import type { LimiterState } from '../../contract/run';

const MINUTE_MS = 60_000;

/** The tokens the endpoint reported per call over the last minute, and the tokensPerMinute cap they are held under. */
export class TokensPerMinute {
  private recent: Array<[number, number]>;

  constructor(
    private cap: number | undefined,
    state?: Pick<LimiterState, 'recentTokens'>,
  ) {
    this.recent = state?.recentTokens ?? [];
  }

  /** A new cap (`judgeflow tune`); the tokens of the last minute still count against it. */
  setCap(cap: number | undefined): void {
    this.cap = cap;
  }

  note(now: number, tokens: number): void {
    this.recent.push([now, tokens]);
  }

  /** The average call's tokens so far (0 before any). */
  perCall(): number {
    return this.recent.length ? this.recent.reduce((sum, [, tokens]) => sum + tokens, 0) / this.recent.length : 0;
  }

  /** The earliest start the cap allows: room for one more call of the average size, or when enough of the minute expires. */
  earliestStart(now: number): number {
    if (!this.cap) return -Infinity;
    this.recent = this.recent.filter(([at]) => at > now - MINUTE_MS);
    const used = this.recent.reduce((sum, [, tokens]) => sum + tokens, 0);
    let excess = used + this.perCall() - this.cap;
    let start = -Infinity;
    for (const [at, tokens] of this.recent) {
      if (excess <= 0) break;
      start = Math.max(start, at + MINUTE_MS);
      excess -= tokens;
    }
    return start;
  }

  state(now: number): Pick<LimiterState, 'recentTokens'> {
    return { recentTokens: this.recent.filter(([at]) => at > now - MINUTE_MS) };
  }
}
