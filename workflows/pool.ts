import { condition, patched, sleep } from '@temporalio/workflow';
import type { CallOutcome, LimiterState } from './types';

/**
 * Run `task` over `items` with at most `concurrency` in flight, starting at most one every `minIntervalMs`.
 * Deterministic: it uses only workflow timers and promises, so it replays exactly.
 */
export async function runPool<T>(items: T[], concurrency: number, minIntervalMs: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let gate: Promise<void> = Promise.resolve();
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (minIntervalMs > 0) {
        // Serialise starts through one gate so the rate holds across lanes.
        const turn = gate;
        let release!: () => void;
        gate = new Promise((resolve) => (release = resolve));
        await turn;
        const started = task(item);
        // Observe the task now: if it rejects while this lane sleeps (a fast-failing activity, or a cancelled run),
        // an unobserved rejection would fail every workflow task for ever. `await started` below still rethrows it.
        started.catch(() => undefined);
        try {
          // Nothing left to start: waiting out the interval would only delay the end of the chunk (a minute at 1 rpm).
          const last = next >= items.length && patched('pool-no-wait-after-last-start');
          if (!last) await sleep(minIntervalMs);
        } finally {
          release(); // a cancelled sleep must not leave the other lanes waiting at the gate
        }
        await started;
      } else await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

export function chunkRanges(total: number, size: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let from = 0; from < total; from += size) ranges.push([from, Math.min(total, from + size)]);
  return ranges;
}

export interface LimiterOptions {
  /** The most calls in flight; the window adapts within [1, concurrency]. */
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

const MINUTE_MS = 60_000;

/** A throttle sets the start rate to this share of the rate calls were just started at (as AWS SDKs' adaptive mode does). */
const RATE_DECREASE = 0.85;
/** Then the start rate grows back by this share of that measured rate per second without a throttle. */
const RATE_GROWTH_PER_SECOND = 0.03;
/** The span the start rate is measured over. */
const RATE_SPAN_MS = 2_000;

/**
 * One endpoint's calls, adapted like TCP congestion control (AIMD): the window of calls in flight grows by one per
 * window of successful calls and halves when the endpoint throttles (once per burst: only calls started after the last
 * halving count), within [1, concurrency]. Fast calls against a low limit exceed it even one at a time, so a throttle also
 * caps the start rate at 0.85 × the rate calls were started at over the last 2 s, growing back linearly with time (3%
 * of that rate per second) until the next throttle (a token bucket of one second's starts). requestsPerMinute spaces starts; tokensPerMinute holds the tokens reported over
 * the last minute under the cap; Retry-After and exhausted rate-limit headers hold every start until then.
 * Held by the run's workflow, so every worker's calls share one state. Deterministic (workflow time and timers only).
 */
export class Limiter {
  private inFlight = 0;
  private window: number;
  private notBefore: number;
  private lastDecrease = -Infinity;
  private recentTokens: Array<[number, number]>;
  /** Start rate control, set by the first throttle: the rate measured then, and when. */
  private rateBase?: number;
  private throttledAt = 0;
  private recentStarts: number[];
  /**
   * Starts allowed by the start rate: a bucket refilled at that rate, holding up to one second's worth, so a timer that
   * fires late (the server's timers are coarse, about a second) starts the calls that were due together.
   */
  private rateTokens = 0;
  private rateTokensAt = 0;
  /** Requests the endpoint's headers last said remain (less those started since), until its reset. */
  private headerBudget?: number;
  private headerResetAt = 0;

  constructor(private readonly options: LimiterOptions, state?: LimiterState) {
    this.window = state?.window ?? options.concurrency;
    this.notBefore = state?.notBefore ?? 0;
    this.recentTokens = state?.recentTokens ?? [];
    this.rateBase = state?.rateBase ?? undefined;
    this.throttledAt = state?.throttledAt ?? 0;
    this.recentStarts = state?.recentStarts ?? [];
    this.rateTokens = state?.rateTokens ?? 0;
    this.rateTokensAt = state?.rateTokensAt ?? 0;
    this.headerBudget = state?.headerBudget ?? undefined;
    this.headerResetAt = state?.headerResetAt ?? 0;
  }

  /** Calls allowed in flight now. */
  get allowed(): number {
    return Math.max(1, Math.min(this.options.concurrency, Math.floor(this.window)));
  }

  /**
   * Wait for a free place and the earliest allowed start; null when `stop()` became true first. Safe for several
   * waiters: the check and the taking of a place happen with no await between them.
   */
  async acquire(stop: () => boolean): Promise<{ startedAt: number } | null> {
    for (;;) {
      await condition(() => stop() || this.inFlight < this.allowed);
      if (stop()) return null;
      const start = this.tryStart(Date.now());
      if (start === 'full') continue; // another waiter took the place
      if ('waitMs' in start) {
        // The server's timers are coarse (about a second); any activation on the way (a call finishing) that finds the
        // start due takes it sooner. Then look again: a throttle may have moved the start.
        const due = Date.now() + start.waitMs;
        await condition(() => stop() || Date.now() >= due, Math.ceil(start.waitMs));
      } else return start;
    }
  }

  /** Start a call at `now` if the limits allow it: its ticket, how long to wait, or 'full' when the window is. */
  tryStart(now: number): { startedAt: number } | { waitMs: number } | 'full' {
    if (this.inFlight >= this.allowed) return 'full';
    const wait = this.earliestStart(now) - now;
    if (wait > 0) return { waitMs: wait };
    this.inFlight++;
    if (this.options.requestsPerMinute) this.notBefore = Math.max(this.notBefore, now) + MINUTE_MS / this.options.requestsPerMinute;
    if (this.rateBase !== undefined) this.rateTokens -= 1;
    if (this.headerBudget !== undefined) this.headerBudget -= 1;
    this.recentStarts.push(now);
    while (this.recentStarts[0] <= now - RATE_SPAN_MS) this.recentStarts.shift();
    return { startedAt: now };
  }

  release(ticket: { startedAt: number }, outcome: CallOutcome = {}, now = Date.now()): void {
    this.inFlight--;
    if (outcome.tokens) this.recentTokens.push([now, outcome.tokens]);
    this.honourHeaders(now, ticket, outcome);
    if (outcome.throttled) {
      if (outcome.retryAfterMs) this.notBefore = Math.max(this.notBefore, now + outcome.retryAfterMs);
      if (ticket.startedAt >= this.lastDecrease) {
        this.window = Math.max(1, this.allowed / 2);
        const measured = (1_000 * this.recentStarts.filter((at) => at > now - RATE_SPAN_MS).length) / RATE_SPAN_MS;
        this.rateBase = Math.max(0.05, Math.min(measured, this.startRate(now) ?? Infinity));
        this.throttledAt = now;
        this.rateTokens = 0;
        this.rateTokensAt = now;
        this.lastDecrease = now;
      }
    } else this.window = Math.min(this.options.concurrency, this.window + 1 / this.allowed);
  }

  /** Calls per second allowed to start now; undefined before any throttle. */
  startRate(now: number): number | undefined {
    if (this.rateBase === undefined) return undefined;
    return this.rateBase * (RATE_DECREASE + (RATE_GROWTH_PER_SECOND * Math.max(0, now - this.throttledAt)) / 1_000);
  }

  /**
   * Rate-limit headers: the requests the endpoint said remain, less the calls started after this one (it may not have
   * counted them yet), may start before its reset; then none until the reset. Likewise when the tokens left would not
   * cover those calls and one more, at the average call's size.
   */
  private honourHeaders(now: number, ticket: { startedAt: number }, { rateLimit }: CallOutcome): void {
    if (!rateLimit) return;
    const { remainingRequests, resetRequestsMs, remainingTokens, resetTokensMs } = rateLimit;
    const startedSince = this.recentStarts.filter((at) => at > ticket.startedAt).length;
    if (remainingRequests !== undefined && resetRequestsMs !== undefined) {
      this.headerBudget = remainingRequests - startedSince;
      this.headerResetAt = now + resetRequestsMs;
    }
    const perCall = this.recentTokens.length ? this.recentTokens.reduce((sum, [, tokens]) => sum + tokens, 0) / this.recentTokens.length : 0;
    if (remainingTokens !== undefined && resetTokensMs !== undefined && remainingTokens < perCall * (startedSince + 1)) this.notBefore = Math.max(this.notBefore, now + resetTokensMs);
  }

  /** What continue-as-new carries over. */
  state(now = Date.now()): LimiterState {
    const since = now - MINUTE_MS;
    return { window: this.window, notBefore: this.notBefore, recentTokens: this.recentTokens.filter(([at]) => at > since), rateBase: this.rateBase ?? null, throttledAt: this.throttledAt, recentStarts: this.recentStarts.filter((at) => at > now - RATE_SPAN_MS), rateTokens: this.rateTokens, rateTokensAt: this.rateTokensAt, headerBudget: this.headerBudget ?? null, headerResetAt: this.headerResetAt };
  }

  private earliestStart(now: number): number {
    let start = this.notBefore;
    if (this.headerBudget !== undefined && now >= this.headerResetAt) this.headerBudget = undefined;
    if (this.headerBudget !== undefined && this.headerBudget <= 0) start = Math.max(start, this.headerResetAt);
    const rate = this.startRate(now);
    if (rate !== undefined) {
      this.rateTokens = Math.min(Math.max(1, rate), this.rateTokens + (rate * Math.max(0, now - this.rateTokensAt)) / 1_000);
      this.rateTokensAt = now;
      if (this.rateTokens < 1) start = Math.max(start, now + ((1 - this.rateTokens) * 1_000) / rate);
    }
    const cap = this.options.tokensPerMinute;
    if (cap) {
      const since = now - MINUTE_MS;
      this.recentTokens = this.recentTokens.filter(([at]) => at > since);
      const used = this.recentTokens.reduce((sum, [, tokens]) => sum + tokens, 0);
      // Room for one more call of the average size seen so far; otherwise wait until enough of the last minute expires.
      const expected = this.recentTokens.length ? used / this.recentTokens.length : 0;
      let excess = used + expected - cap;
      for (const [at, tokens] of this.recentTokens) {
        if (excess <= 0) break;
        start = Math.max(start, at + MINUTE_MS);
        excess -= tokens;
      }
    }
    return start;
  }
}
