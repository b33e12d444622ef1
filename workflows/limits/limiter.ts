import { condition } from '@temporalio/workflow';
import type { CallOutcome, LimiterState } from '../types';

export interface LimiterOptions {
  /** The most calls in flight; the window adapts within [1, concurrency]. */
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

const MINUTE_MS = 60_000;

/**
 * Paced rules. A throttle sets the start rate to 0.9 × the rate the endpoint admitted; it grows back along a cubic (as
 * TCP CUBIC does): fast at first, flat for a while around that rate (where the limit was just found), then faster again
 * in case the limit was underestimated or has grown. Back to the admitted rate after 10 s, so against a steady limit a
 * throttle comes about once every ten seconds: with one refused call each, a few percent at one call a second, under 2%
 * from about 6 a second.
 */
const PACED = {
  decrease: 0.9,
  /** Seconds from a throttle back to the admitted rate (K of CUBIC; C = (1 − decrease) / K³). */
  recoveryS: 10,
  /** Admitted starts are counted over this span (or since the first start, when that is sooner). */
  spanMs: 5_000,
  /** Starts are paced at this share of the rate the headers show, so a little jitter in arrival stays under the limit. */
  headerMargin: 0.96,
  /** Each throttle while paced so makes that share 3% smaller, down to 85%; it grows back by 0.1% a second. */
  headerMarginDecrease: 0.97,
  minHeaderMargin: 0.85,
  headerMarginGrowthPerSecond: 0.001,
  /** Header reports the window is taken from: those of this span before the last (the longest reset counts). */
  headerSpanMs: 60_000,
  /**
   * The bucket of allowed starts holds this many seconds of them (at least one): little, so starts stay spaced. (The
   * server's timers are coarse, but paced starts are taken up to a second ahead and sent on time by the activity.)
   */
  burstS: 0.1,
};
const CUBIC_C = (1 - PACED.decrease) / PACED.recoveryS ** 3;
/** Paced, a worker keeps its sends to the endpoint 95% of the pace's interval apart (see SendSlot). */
const SEND_SPACING = 0.95;

/** A started call: when it may be sent, and (paced) how far apart one worker should keep its sends. */
export interface Ticket {
  startedAt: number;
  spacingMs?: number;
}

/**
 * One endpoint's calls, adapted like TCP congestion control (AIMD): the window of calls in flight grows by one per
 * window of successful calls and halves when the endpoint throttles (once per burst: only calls started after the last
 * halving count), within [1, concurrency]. Fast calls against a low limit exceed it even one at a time, so starts are
 * also paced (a token bucket) at a rate learnt from the endpoint:
 * - a throttle (429/503, Retry-After) sets it to 0.9 × the rate the endpoint admitted — the calls started in the last
 *   5 s (or since the first start) before the refused one, less those refused, over that span plus the Retry-After —
 *   and it grows back along a cubic (see PACED);
 * - rate-limit headers that say the requests are used up (none remain beyond the calls started since) give the window
 *   the limit holds over: the time the endpoint says it needs to be back to its initial state (limit ÷ rate for a token
 *   bucket, as OpenAI's and Anthropic's headers describe; at most the window for a sliding window, nearly so when a
 *   request has just arrived: the longest reset of the last minute counts). Starts are paced at 96% of limit ÷ window,
 *   and never more than the limit start within one window, rather than bursting and then waiting for the whole reset;
 *   a throttle while so paced widens the margin (see PACED).
 * requestsPerMinute spaces starts; tokensPerMinute holds the tokens reported over the last minute under the cap;
 * Retry-After holds every start until then; exhausted headers with no limit header to pace by hold starts until their
 * reset. Held by the run's workflow, so every worker's calls share one state. Deterministic (workflow time and timers).
 */
export class Limiter {
  private inFlight = 0;
  private window: number;
  private notBefore: number;
  private lastDecrease = -Infinity;
  private recentTokens: Array<[number, number]>;
  /** Start rate control, set by the first throttle: the rate admitted then, and when. */
  private rateBase?: number;
  private throttledAt = 0;
  private recentStarts: number[];
  /** Start times of throttled calls, within the span admitted starts are counted over. */
  private refusedStarts: number[];
  /** [when, requests per second] from headers that said the requests were used up. */
  private headerRates: Array<[number, number]>;
  /** The endpoint's request limit, as its headers last said. */
  private headerLimit?: number;
  /** Starts allowed by the start rate: a bucket refilled at that rate (see PACED.burstS). */
  private rateTokens = 0;
  private rateTokensAt = 0;
  /** Requests the endpoint's headers last said remain (less those started since), until its reset. */
  private headerBudget?: number;
  private headerResetAt = 0;
  private headerMargin: number;
  private headerMarginAt: number;
  /** When the start rate was first measured from admitted calls (the same burst's later refusals refine it). */
  private measuredAt?: number;

  constructor(private readonly options: LimiterOptions, state?: LimiterState) {
    this.window = state?.window ?? options.concurrency;
    this.notBefore = state?.notBefore ?? 0;
    this.recentTokens = state?.recentTokens ?? [];
    this.rateBase = state?.rateBase ?? undefined;
    this.throttledAt = state?.throttledAt ?? 0;
    this.recentStarts = state?.recentStarts ?? [];
    this.refusedStarts = state?.refusedStarts ?? [];
    this.headerRates = state?.headerRates ?? [];
    this.headerLimit = state?.headerLimit ?? undefined;
    this.rateTokens = state?.rateTokens ?? 0;
    this.rateTokensAt = state?.rateTokensAt ?? 0;
    this.headerBudget = state?.headerBudget ?? undefined;
    this.headerResetAt = state?.headerResetAt ?? 0;
    this.headerMargin = state?.headerMargin ?? PACED.headerMargin;
    this.headerMarginAt = state?.headerMarginAt ?? 0;
  }

  /** A start taken ahead of its time is not at the endpoint yet, so it does not count against the window. */
  private hasRoom(now: number): boolean {
    return this.inFlight - this.startsAfter(now) < this.allowed;
  }

  /** Starts taken for a time after `now` (at most one: see tryStart). */
  private startsAfter(now: number): number {
    let n = 0;
    for (let i = this.recentStarts.length - 1; i >= 0 && this.recentStarts[i] > now; i--) n++;
    return n;
  }

  /** Calls allowed in flight now. */
  get allowed(): number {
    return Math.max(1, Math.min(this.options.concurrency, Math.floor(this.window)));
  }

  /**
   * Wait for a free place and the earliest allowed start; null when `stop()` became true first. Safe for several
   * waiters: the check and the taking of a place happen with no await between them.
   */
  async acquire(stop: () => boolean, aheadMs = 0): Promise<Ticket | null> {
    for (;;) {
      await condition(() => stop() || this.hasRoom(Date.now()));
      if (stop()) return null;
      const start = this.tryStart(Date.now(), aheadMs);
      if (start === 'full') continue; // another waiter took the place
      if ('waitMs' in start) {
        // The server's timers are coarse (about a second); any activation on the way (a call finishing) that finds the
        // start due, or the start taken ahead now sent (so the next may be taken ahead), looks again sooner. So does a
        // throttle, which may have moved the start.
        const due = Date.now() + start.waitMs;
        const ahead = this.startsAfter(Date.now());
        await condition(() => stop() || Date.now() >= due || this.startsAfter(Date.now()) < ahead, Math.ceil(start.waitMs));
      } else return start;
    }
  }

  /**
   * Start a call at `now` if the limits allow it: its ticket, how long to wait, or 'full' when the window is. With
   * `aheadMs`, a start due within that time is taken now for then: the ticket's `startedAt` is when the call may be
   * sent (the activity waits until then), so pacing does not hang on the server's coarse timers.
   */
  tryStart(now: number, aheadMs = 0): Ticket | { waitMs: number } | 'full' {
    if (!this.hasRoom(now)) return 'full';
    const wait = this.earliestStart(now) - now;
    // One start at a time is taken ahead: enough to carry the pace past a late timer, without parking many activities.
    const ahead = this.startsAfter(now) ? 0 : aheadMs;
    if (wait > ahead) return { waitMs: wait - ahead };
    const at = now + Math.max(0, wait);
    if (at > now) this.earliestStart(at); // the bucket as it will be then
    this.inFlight++;
    if (this.options.requestsPerMinute) this.notBefore = Math.max(this.notBefore, at) + MINUTE_MS / this.options.requestsPerMinute;
    if (this.startRate(at) !== undefined) this.rateTokens -= 1;
    if (this.headerBudget !== undefined) this.headerBudget -= 1;
    this.recentStarts.push(at);
    while (this.recentStarts[0] <= now - this.startsKeptMs()) this.recentStarts.shift();
    const rate = this.startRate(at);
    return rate ? { startedAt: at, spacingMs: (SEND_SPACING * 1_000) / rate } : { startedAt: at };
  }

  release(ticket: { startedAt: number }, outcome: CallOutcome = {}, now = Date.now()): void {
    this.inFlight--;
    if (outcome.tokens) this.recentTokens.push([now, outcome.tokens]);
    this.honourHeaders(now, ticket, outcome);
    if (outcome.throttled) {
      if (outcome.retryAfterMs) this.notBefore = Math.max(this.notBefore, now + outcome.retryAfterMs);
      this.refusedStarts = [...this.refusedStarts.filter((at) => at > now - PACED.spanMs), ticket.startedAt];
      if (ticket.startedAt >= this.lastDecrease) {
        this.window = Math.max(1, this.allowed / 2);
        // An endpoint that sends its limit in headers is paced by them: a throttle is arrival jitter at the edge of the
        // limit, so keep a wider margin below it (a rate guessed from admitted calls would only be worse than theirs).
        if (this.headerLimit !== undefined) {
          this.headerMargin = Math.max(PACED.minHeaderMargin, this.marginAt(now) * PACED.headerMarginDecrease);
          this.headerMarginAt = now;
        } else {
          // Paced already, the limit is just below the pace the calls were started at (as CUBIC takes the window at a
          // loss); the first time, it is what the endpoint admitted.
          const pace = this.rateBase !== undefined ? this.startRate(ticket.startedAt) : undefined;
          this.rateBase = pace ?? this.admittedRate(now, ticket.startedAt, outcome.retryAfterMs ?? 0);
          this.measuredAt = pace === undefined ? now : undefined;
          this.throttledAt = now;
        }
        // One start is allowed the moment a Retry-After ends (the endpoint said it would take one then).
        const hold = outcome.retryAfterMs ?? 0;
        this.rateTokens = hold > 0 ? 1 : 0;
        this.rateTokensAt = now + hold;
        this.lastDecrease = now;
      } else if (this.measuredAt !== undefined && this.rateBase !== undefined) {
        // The rest of the burst that gave the first measure: calls started with the refused one were counted as admitted
        // until their own refusals came back. Measured again with them.
        this.rateBase = Math.min(this.rateBase, this.admittedRate(now, ticket.startedAt, outcome.retryAfterMs ?? 0));
      }
    } else this.window = Math.min(this.options.concurrency, this.window + 1 / this.allowed);
  }

  /**
   * Nothing but the window limits calls now: no requests or tokens per minute, no start rate learnt from a throttle or
   * from headers, no hold, and plenty of requests left by the headers' word. Only then may one start carry several calls
   * in a row (see runBatch): paced calls need each start to be its own.
   */
  windowOnly(now: number): boolean {
    const { requestsPerMinute, tokensPerMinute, concurrency } = this.options;
    const headroom = this.headerBudget === undefined || now >= this.headerResetAt || this.headerBudget >= 16 * concurrency;
    return !requestsPerMinute && !tokensPerMinute && this.startRate(now) === undefined && this.notBefore <= now && headroom;
  }

  /** Calls sent within a start's batch after its first: they count as starts for the rate a later throttle measures. */
  noteStarts(times: number[], now = Date.now()): void {
    if (!times.length) return;
    // Another machine's clock may run ahead: a start counted after now would read as one taken ahead (see startsAfter).
    this.recentStarts = [...this.recentStarts, ...times.map((at) => Math.min(at, now))].sort((a, b) => a - b);
    if (this.headerBudget !== undefined) this.headerBudget -= times.length;
  }

  /** Calls per second allowed to start now; undefined while neither a throttle nor the headers have set one. */
  startRate(now: number): number | undefined {
    const seconds = Math.max(0, now - this.throttledAt) / 1_000;
    const rates: number[] = [];
    if (this.rateBase !== undefined) rates.push(this.rateBase * (1 + CUBIC_C * (seconds - PACED.recoveryS) ** 3));
    const fromHeaders = this.headerRate();
    if (fromHeaders !== undefined) rates.push(fromHeaders * this.marginAt(now));
    return rates.length ? Math.max(0.01, Math.min(...rates)) : undefined;
  }

  /** The window the headers' limit holds over (the limit over their rate), once they have shown a rate. */
  private headerWindow(): { limit: number; ms: number } | undefined {
    const rate = this.headerRate();
    return rate && this.headerLimit ? { limit: this.headerLimit, ms: (1_000 * this.headerLimit) / rate } : undefined;
  }

  /** Starts are kept for the admitted rate's span, and for the headers' window (up to a minute). */
  private startsKeptMs(): number {
    return Math.max(PACED.spanMs, Math.min(MINUTE_MS, this.headerWindow()?.ms ?? 0));
  }

  /** The share of the headers' rate starts are paced at now. */
  private marginAt(now: number): number {
    return Math.min(PACED.headerMargin, this.headerMargin + (PACED.headerMarginGrowthPerSecond * Math.max(0, now - this.headerMarginAt)) / 1_000);
  }

  /**
   * The rate the endpoint admitted: the calls started up to the refused one over the span (the last 5 s, or since the
   * first start), less those it refused, over that span up to when it said it would take another (the refused call's start + Retry-After: the
   * workflow may hear of the refusal a while after it was made).
   * Against a sliding window that first fills in a burst this is its limit over its window; in a steady state, the rate
   * it let through. At least one call, so an endpoint that refuses the very first call still gets asked again.
   */
  private admittedRate(now: number, refusedAt: number, retryAfterMs: number): number {
    const from = Math.max(now - PACED.spanMs, this.recentStarts[0] ?? now);
    const started = this.recentStarts.filter((at) => at >= from && at <= refusedAt).length;
    const refused = this.refusedStarts.filter((at) => at >= from && at <= refusedAt).length;
    return (1_000 * Math.max(1, started - refused)) / Math.max(100, refusedAt - from + retryAfterMs);
  }

  /**
   * The rate the headers showed (requests per second): the limit over the longest reset of the minute before their
   * last word on it; undefined when none did. It stays while paced starts keep the requests from running out.
   */
  private headerRate(): number | undefined {
    const last = this.headerRates[this.headerRates.length - 1]?.[0];
    if (last === undefined) return undefined;
    this.headerRates = this.headerRates.filter(([at]) => at > last - PACED.headerSpanMs);
    return Math.min(...this.headerRates.map(([, rate]) => rate));
  }

  /**
   * Rate-limit headers: the requests the endpoint said remain, less the calls started after this one (it may not have
   * counted them yet), may start before its reset. When none remain and the endpoint says its limit, that gives the rate
   * to pace starts at; without a limit header no call starts before the reset. Likewise when the tokens left would not
   * cover those calls and one more, at the average call's size.
   */
  private honourHeaders(now: number, ticket: { startedAt: number }, { rateLimit }: CallOutcome): void {
    if (!rateLimit) return;
    const { remainingRequests, resetRequestsMs, limitRequests, remainingTokens, resetTokensMs } = rateLimit;
    const startedSince = this.recentStarts.filter((at) => at > ticket.startedAt).length;
    if (limitRequests) this.headerLimit = limitRequests;
    if (remainingRequests !== undefined && resetRequestsMs !== undefined) {
      this.headerBudget = remainingRequests - startedSince;
      this.headerResetAt = now + resetRequestsMs;
      if (this.headerBudget <= 0 && limitRequests && resetRequestsMs > 0) {
        if (this.headerRate() === undefined) {
          // Paced by the headers from now on: what they say supersedes a rate guessed from an earlier throttle, and no
          // store of starts is saved up from before.
          this.rateBase = undefined;
          if (this.rateTokensAt <= now) this.rateTokens = 0;
          this.rateTokensAt = Math.max(this.rateTokensAt, now);
        }
        // A token bucket is back to its initial state after limit ÷ rate; a sliding window once its newest request leaves
        // it, at most a window away, nearly so when a request has just arrived. (The call's own time cannot be added: on
        // a loaded machine it is mostly the worker's, not the endpoint's.)
        this.headerRates.push([now, (1_000 * limitRequests) / resetRequestsMs]);
      }
    }
    const perCall = this.recentTokens.length ? this.recentTokens.reduce((sum, [, tokens]) => sum + tokens, 0) / this.recentTokens.length : 0;
    if (remainingTokens !== undefined && resetTokensMs !== undefined && remainingTokens < perCall * (startedSince + 1)) this.notBefore = Math.max(this.notBefore, now + resetTokensMs);
  }

  /** What continue-as-new carries over. */
  state(now = Date.now()): LimiterState {
    const since = now - MINUTE_MS;
    return {
      window: this.window,
      notBefore: this.notBefore,
      recentTokens: this.recentTokens.filter(([at]) => at > since),
      rateBase: this.rateBase ?? null,
      throttledAt: this.throttledAt,
      recentStarts: this.recentStarts.filter((at) => at > now - this.startsKeptMs()),
      refusedStarts: this.refusedStarts.filter((at) => at > now - PACED.spanMs),
      headerRates: this.headerRates,
      headerLimit: this.headerLimit ?? null,
      rateTokens: this.rateTokens,
      rateTokensAt: this.rateTokensAt,
      headerBudget: this.headerBudget ?? null,
      headerResetAt: this.headerResetAt,
      headerMargin: this.headerMargin,
      headerMarginAt: this.headerMarginAt,
    };
  }

  private earliestStart(now: number): number {
    let start = this.notBefore;
    if (this.headerBudget !== undefined && now >= this.headerResetAt) this.headerBudget = undefined;
    // Paced by the headers' rate, a used-up budget needs no hold: the pace is what the endpoint frees.
    const window = this.headerWindow();
    if (this.headerBudget !== undefined && this.headerBudget <= 0 && !window) start = Math.max(start, this.headerResetAt);
    if (window) {
      // Never more than the limit in any window (as long as the limit over the rate): a sliding window is full for that
      // long after a burst (at the start), and a token bucket then has no more either.
      const recent = this.recentStarts.filter((at) => at > now - window.ms);
      if (recent.length >= window.limit) start = Math.max(start, recent[recent.length - window.limit] + window.ms);
    }
    const rate = this.startRate(now);
    if (rate !== undefined) {
      const capacity = Math.max(1, rate * PACED.burstS);
      this.rateTokens = Math.min(capacity, this.rateTokens + (rate * Math.max(0, now - this.rateTokensAt)) / 1_000);
      // Nothing accrues during a Retry-After (the bucket refills from its end).
      this.rateTokensAt = Math.max(this.rateTokensAt, now);
      if (this.rateTokens < 1) start = Math.max(start, this.rateTokensAt + ((1 - this.rateTokens) * 1_000) / rate);
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
