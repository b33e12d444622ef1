import type { RateLimitInfo } from '../../core/llm/client';
import type { LimiterState } from '../../contract/run';

const MINUTE_MS = 60_000;
/** Starts are paced at this share of the rate the headers show, so a little jitter in arrival stays under the limit. */
const MARGIN = 0.96;
/** Each throttle while paced so makes that share 3% smaller, down to 85%; it grows back by 0.1% a second. */
const MARGIN_DECREASE = 0.97;
const MIN_MARGIN = 0.85;
const MARGIN_GROWTH_PER_SECOND = 0.001;
/** Header reports the window is taken from: those of this span before the last (the longest reset counts). */
const HEADER_SPAN_MS = 60_000;

/** What an endpoint's x-ratelimit headers say: the requests left until a reset, and the rate and window of its limit (see Limiter). */
export class HeaderPacing {
  /** [when, requests per second] from headers that said the requests were used up. */
  private rates: Array<[number, number]>;
  /** The endpoint's request limit, as its headers last said. */
  private limit?: number;
  /** Requests the headers last said remain (less those started since), until `resetAt`. */
  private budget?: number;
  private resetAt: number;
  private margin: number;
  private marginSince: number;

  constructor(state?: LimiterState) {
    this.rates = state?.headerRates ?? [];
    this.limit = state?.headerLimit ?? undefined;
    this.budget = state?.headerBudget ?? undefined;
    this.resetAt = state?.headerResetAt ?? 0;
    this.margin = state?.headerMargin ?? MARGIN;
    this.marginSince = state?.headerMarginAt ?? 0;
  }

  /** The endpoint says its limit: a throttle is then arrival jitter at its edge, paced by the headers. */
  get knowsLimit(): boolean {
    return this.limit !== undefined;
  }

  /** The rate to pace starts at (requests per second, with the margin); undefined while the headers have shown none. */
  pacedRate(now: number): number | undefined {
    const rate = this.rate();
    return rate === undefined ? undefined : rate * this.marginAt(now);
  }

  /** The window the limit holds over (the limit over the headers' rate), once they have shown a rate. */
  window(): { limit: number; ms: number } | undefined {
    const rate = this.rate();
    return rate && this.limit ? { limit: this.limit, ms: (1_000 * this.limit) / rate } : undefined;
  }

  /** Calls started (`n`) that the endpoint will count against the requests it said remain. */
  started(n = 1): void {
    if (this.budget !== undefined) this.budget -= n;
  }

  /** Plenty of requests left (or nothing known): several calls may go in one start. */
  headroom(now: number, concurrency: number): boolean {
    return this.budget === undefined || now >= this.resetAt || this.budget >= 16 * concurrency;
  }

  /** A throttle while paced by the headers: keep a wider margin below their rate. */
  widenMargin(now: number): void {
    this.margin = Math.max(MIN_MARGIN, this.marginAt(now) * MARGIN_DECREASE);
    this.marginSince = now;
  }

  /**
   * A call's headers: the requests they say remain, less the calls started after it (`startedSince`: the endpoint may
   * not have counted them yet), may start before the reset. When none remain and the endpoint says its limit, that
   * gives the rate to pace starts at. Returns true when that pacing begins (the caller drops what it learnt before).
   */
  honour(now: number, startedSince: number, rateLimit: RateLimitInfo): boolean {
    const { remainingRequests, resetRequestsMs, limitRequests } = rateLimit;
    if (limitRequests) this.limit = limitRequests;
    if (remainingRequests === undefined || resetRequestsMs === undefined) return false;
    this.budget = remainingRequests - startedSince;
    this.resetAt = now + resetRequestsMs;
    if (this.budget > 0 || !limitRequests || resetRequestsMs <= 0) return false;
    const begins = this.rate() === undefined;
    // A token bucket is back to its initial state after limit ÷ rate; a sliding window once its newest request leaves
    // it, at most a window away, nearly so when a request has just arrived. (The call's own time cannot be added: on a
    // loaded machine it is mostly the worker's, not the endpoint's.)
    this.rates.push([now, (1_000 * limitRequests) / resetRequestsMs]);
    return begins;
  }

  /**
   * The earliest start the headers allow: with a rate to pace by, never more than the limit within one window (a
   * sliding window is full for that long after a burst, and a token bucket then has no more either); without one, a
   * used-up budget holds every start until the reset.
   */
  earliestStart(now: number, starts: number[]): number {
    if (this.budget !== undefined && now >= this.resetAt) this.budget = undefined;
    const window = this.window();
    if (!window) return this.budget !== undefined && this.budget <= 0 ? this.resetAt : -Infinity;
    const recent = starts.filter((at) => at > now - window.ms);
    return recent.length >= window.limit ? recent[recent.length - window.limit] + window.ms : -Infinity;
  }

  /** How long starts are kept: the headers' window, up to a minute. */
  windowMs(): number {
    return Math.min(MINUTE_MS, this.window()?.ms ?? 0);
  }

  /** The share of the headers' rate starts are paced at now. */
  private marginAt(now: number): number {
    return Math.min(MARGIN, this.margin + (MARGIN_GROWTH_PER_SECOND * Math.max(0, now - this.marginSince)) / 1_000);
  }

  /** The limit over the longest reset of the minute before their last word on it; undefined when none said so. */
  private rate(): number | undefined {
    const last = this.rates[this.rates.length - 1]?.[0];
    if (last === undefined) return undefined;
    this.rates = this.rates.filter(([at]) => at > last - HEADER_SPAN_MS);
    return Math.min(...this.rates.map(([, rate]) => rate));
  }

  state(): Pick<
    LimiterState,
    'headerRates' | 'headerLimit' | 'headerBudget' | 'headerResetAt' | 'headerMargin' | 'headerMarginAt'
  > {
    return {
      headerRates: this.rates,
      headerLimit: this.limit ?? null,
      headerBudget: this.budget ?? null,
      headerResetAt: this.resetAt,
      headerMargin: this.margin,
      headerMarginAt: this.marginSince,
    };
  }
}
