import { condition } from '@temporalio/workflow';
import type { CallOutcome, LimiterState } from '../../contract/run';
import { HeaderPacing } from './headers';
import { ADMITTED_SPAN_MS, CubicStartRate } from './startRate';
import { TokensPerMinute } from './tokens';
import { AimdWindow } from './window';

export interface LimiterOptions {
  /** The most calls in flight; the window adapts within [1, concurrency]. */
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

const MINUTE_MS = 60_000;
/** The bucket of starts the start rate allows holds this many seconds of them (at least one). */
const BURST_S = 0.1;
/** The run's workers keep their paced sends to the endpoint this share of the pace's interval apart (see SendSlot). */
const SEND_SPACING = 0.95;
/**
 * …and, where the headers say the limit's window, at least this share of window ÷ limit: at the headers' 96% pace, 95% of
 * the interval is 99% of window ÷ limit, so limit + 1 late sends in a row fit in 99% of the window, which a sliding
 * window refuses (each 429 of the bench's two-worker row came after limit sends spaced just under window ÷ limit). At
 * 1.02 the late sends after a stall (a continue-as-new, a busy worker) still drew 429s: limit + 1 of them span 2% of a
 * window more than it, and arrival jitter took that (2026-12-04). 1.04 is the 96% pace's own interval within 0.3%:
 * late sends no longer catch up on the pace (they could gain 3 ms a send at most), and keep 4% of a window for jitter.
 */
const WINDOW_SPACING = 1.04;
/**
 * A paced send that left later than this share of the headers' window after its time may have carried it into a later
 * send's window: at the headers' 96% pace, limit sends span 4% of a window more than the window, so a send half that
 * late leaves only arrival jitter to make up the rest (see release).
 */
const LATE_SHARE = 0.02;
/** A second lateness-explained throttle this soon after the last one widens the margin all the same (see release). */
const EXPLAINED_AGAIN_MS = 5_000;

/** A started call: when it may be sent, and (paced) how far apart the run's workers keep their sends. */
export interface Ticket {
  startedAt: number;
  spacingMs?: number;
}

/**
 * One endpoint's calls, adapted like TCP congestion control (AIMD, window.ts): the window of calls in flight grows by one per
 * window of successful calls and halves when the endpoint throttles (once per burst: only calls started after the last
 * halving count), within [1, concurrency]. Fast calls against a low limit exceed it even one at a time, so starts are
 * also paced (a token bucket) at a rate learnt from the endpoint:
 * - a throttle (429/503, Retry-After) sets it to 0.9 × the rate the endpoint admitted — the calls started in the last
 *   5 s (or since the first start) before the refused one, less those refused, over that span plus the Retry-After —
 *   and it grows back along a cubic (as TCP CUBIC does): fast at first, flat for a while around that rate (where the
 *   limit was just found), then faster again in case the limit was underestimated or has grown. Back to the admitted
 *   rate after 10 s, so against a steady limit a throttle comes about once every ten seconds: with one refused call
 *   each, a few percent at one call a second, under 2% from about 6 a second (startRate.ts);
 * - rate-limit headers that say the requests are used up (none remain beyond the calls started since) give the window
 *   the limit holds over: the time the endpoint says it needs to be back to its initial state (limit ÷ rate for a token
 *   bucket, as OpenAI's and Anthropic's headers describe; at most the window for a sliding window, nearly so when a
 *   request has just arrived: the longest reset of the last minute counts). Starts are paced at 96% of limit ÷ window,
 *   and never more than the limit start within one window, rather than bursting and then waiting for the whole reset;
 *   a throttle while so paced widens the margin by 3%, down to 85%, growing back by 0.1% a second (headers.ts), unless
 *   another send's lateness explains it: one that left more than 2% of the window after its time, within 1.02 windows
 *   before the refused call (a busy worker's timer fired late, taking half the slack the 96% pace leaves, so limit + 1
 *   sends fell in the window though their times did not; not twice within 5 s). A call that reports leaving late
 *   counts at the time it left, so the next starts keep a window from it;
 * requestsPerMinute spaces starts; tokensPerMinute holds the tokens reported over the last minute under the cap;
 * Retry-After holds every start until then; exhausted headers with no limit header to pace by hold starts until their
 * reset (tokens.ts). Starts allowed by the start rate are a bucket holding 0.1 s of them (at least one), so starts stay
 * spaced; the server's timers are coarse, so a paced start due within a second is taken ahead and the activity sends
 * its call on time, the run's workers keeping their sends 95% of the pace's interval apart (SendSlot). Only while nothing but
 * the window limits an endpoint may one start carry several calls (windowOnly; workflows/limits/itemGroupSize.ts). Held by
 * the run's workflow, so every worker's calls share one state. Deterministic (workflow time and timers). This is the
 * one place the limiter's reasons are written down; the parts' comments say only what each does.
 */
export class Limiter {
  private inFlight = 0;
  private readonly window: AimdWindow;
  private readonly cubic: CubicStartRate;
  private readonly headers: HeaderPacing;
  private readonly tokens: TokensPerMinute;
  /** Earliest start: requestsPerMinute spacing, Retry-After, tokens the headers say are used up. */
  private notBefore: number;
  private recentStarts: number[];
  /** Starts allowed by the start rate: a bucket refilled at that rate. */
  private rateTokens: number;
  private rateTokensAt: number;
  /**
   * Paced sends that left late: [when they actually left, how late, their start]. Only the last window's are read (a
   * throttle's explanation), so continue-as-new does not carry them.
   */
  private lateSends: Array<[number, number, number]> = [];
  private lastExplainedAt = -Infinity;

  constructor(
    private options: LimiterOptions,
    state?: LimiterState,
  ) {
    this.window = new AimdWindow(options.concurrency, state);
    this.cubic = new CubicStartRate(state);
    this.headers = new HeaderPacing(state);
    this.tokens = new TokensPerMinute(options.tokensPerMinute, state);
    this.notBefore = state?.notBefore ?? 0;
    this.recentStarts = state?.recentStarts ?? [];
    this.rateTokens = state?.rateTokens ?? 0;
    this.rateTokensAt = state?.rateTokensAt ?? 0;
  }

  /**
   * New limits for a running endpoint (`judgeflow tune`, `resume --config`), keeping what it learnt (the throttle rate,
   * the headers' pace, the calls in flight). A lower concurrency starts no new call until fewer than it are in flight;
   * those in flight finish. A new requestsPerMinute spaces the next start from the last.
   */
  setLimits(options: LimiterOptions): void {
    const before = this.options.requestsPerMinute;
    this.options = { ...options };
    this.window.setConcurrency(options.concurrency);
    this.tokens.setCap(options.tokensPerMinute);
    const last = this.recentStarts[this.recentStarts.length - 1];
    if (options.requestsPerMinute === before || last === undefined) return;
    const spaced = (rpm: number | undefined) => (rpm ? last + MINUTE_MS / rpm : 0);
    // Only the spacing the old cap set is replaced: a Retry-After or a token hold later than it stays.
    this.notBefore =
      this.notBefore <= spaced(before)
        ? spaced(options.requestsPerMinute)
        : Math.max(this.notBefore, spaced(options.requestsPerMinute));
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
    return this.window.allowed;
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
        await condition(
          () => stop() || Date.now() >= due || this.startsAfter(Date.now()) < ahead,
          Math.ceil(start.waitMs),
        );
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
    if (this.options.requestsPerMinute)
      this.notBefore = Math.max(this.notBefore, at) + MINUTE_MS / this.options.requestsPerMinute;
    if (this.startRate(at) !== undefined) this.rateTokens -= 1;
    this.headers.started();
    this.recentStarts.push(at);
    while (this.recentStarts[0] <= now - this.startsKeptMs()) this.recentStarts.shift();
    const rate = this.startRate(at);
    return rate ? { startedAt: at, spacingMs: this.sendSpacingMs(rate) } : { startedAt: at };
  }

  /** How far apart the run's workers keep paced sends (see SEND_SPACING, WINDOW_SPACING). */
  private sendSpacingMs(rate: number): number {
    const window = this.headers.window();
    const perWindow = window ? (WINDOW_SPACING * window.ms) / window.limit : 0;
    return Math.max((SEND_SPACING * 1_000) / rate, perWindow);
  }

  /** The last Retry-After that holds starts, for status (not carried across continue-as-new: it is only shown). */
  private retryAfterHold: { until: number; seconds: number; cause?: string } | null = null;

  /** What holds every start now, if a Retry-After does: "waiting 60 s (Retry-After) after HTTP 503, 42 s left". */
  waitingFor(now = Date.now()): string | null {
    const hold = this.retryAfterHold;
    if (!hold || hold.until <= now) return null;
    return `waiting ${hold.seconds} s (Retry-After)${hold.cause ? ` after ${hold.cause}` : ''}, ${Math.ceil((hold.until - now) / 1_000)} s left`;
  }

  /** Calls started and not yet released (status shows what a paused run is still finishing). */
  get callsInFlight(): number {
    return this.inFlight;
  }

  release(ticket: { startedAt: number }, outcome: CallOutcome = {}, now = Date.now()): void {
    this.inFlight--;
    if (outcome.tokens) this.tokens.note(now, outcome.tokens);
    this.honourHeaders(now, ticket, outcome);
    // After the headers: they count the starts after this one's, which its own, moved to when it left, is not.
    const sentAt = this.noteSent(ticket.startedAt, outcome.sentLateMs, now);
    if (!outcome.throttled) return this.window.succeeded();
    if (outcome.retryAfterMs) {
      this.notBefore = Math.max(this.notBefore, now + outcome.retryAfterMs);
      this.retryAfterHold = {
        until: now + outcome.retryAfterMs,
        seconds: Math.round(outcome.retryAfterMs / 1_000),
        ...(outcome.cause ? { cause: outcome.cause } : {}),
      };
    }
    const retryAfterMs = outcome.retryAfterMs ?? 0;
    this.cubic.refusedAt(ticket.startedAt, now);
    if (!this.window.throttled(ticket.startedAt, now))
      return this.cubic.sameBurst(now, ticket.startedAt, retryAfterMs, this.recentStarts);
    if (this.headers.knowsLimit) {
      if (!this.lateExplains(ticket.startedAt, sentAt, now)) this.headers.widenMargin(now);
    } else this.cubic.newBurst(now, ticket.startedAt, retryAfterMs, this.recentStarts);
    // One start is allowed the moment a Retry-After ends (the endpoint said it would take one then).
    this.rateTokens = retryAfterMs > 0 ? 1 : 0;
    this.rateTokensAt = now + retryAfterMs;
  }

  /**
   * A call that left `lateMs` after its start counts at the time it left: the headers' "never more than the limit within
   * one window" then holds for the sends as they left, and a later start keeps a window from a late send, not from the
   * time it was meant to leave. (Capped at now: another machine's clock may run ahead.) Returns when it left.
   */
  private noteSent(startedAt: number, lateMs: number | undefined, now: number): number {
    if (!lateMs || lateMs <= 0) return startedAt;
    const sentAt = Math.max(startedAt, Math.min(now, startedAt + lateMs));
    const i = this.recentStarts.lastIndexOf(startedAt);
    if (i >= 0) {
      this.recentStarts.splice(i, 1);
      let j = this.recentStarts.length;
      while (j > 0 && this.recentStarts[j - 1] > sentAt) j--;
      this.recentStarts.splice(j, 0, sentAt);
    }
    const keptMs = Math.max(this.headers.windowMs(), 1_000);
    this.lateSends = this.lateSends.filter(([at]) => at > now - 2 * keptMs);
    this.lateSends.push([sentAt, sentAt - startedAt, startedAt]);
    return sentAt;
  }

  /**
   * A throttle while paced by the headers that another send's lateness explains: one that left more than LATE_SHARE of
   * the window late, and within the window (and that share) before the refused call left. Its lateness took at least
   * half the slack the pace leaves, arrival jitter the rest; the pace was right, so the margin is not widened. A second
   * such throttle within EXPLAINED_AGAIN_MS widens it all the same: refusals that often are the pace's (the limit may
   * be shared with another client).
   */
  private lateExplains(startedAt: number, sentAt: number, now: number): boolean {
    const window = this.headers.window();
    if (!window || now - this.lastExplainedAt < EXPLAINED_AGAIN_MS) return false;
    const explained = this.lateSends.some(
      ([at, lateMs, start]) =>
        start !== startedAt &&
        lateMs > LATE_SHARE * window.ms &&
        at > sentAt - (1 + LATE_SHARE) * window.ms &&
        at <= sentAt,
    );
    if (explained) this.lastExplainedAt = now;
    return explained;
  }

  /** Nothing but the window limits calls now (no rate caps, no start rate, no hold, headroom by the headers' word). */
  windowOnly(now: number): boolean {
    const { requestsPerMinute, tokensPerMinute, concurrency } = this.options;
    return (
      !requestsPerMinute &&
      !tokensPerMinute &&
      this.startRate(now) === undefined &&
      this.notBefore <= now &&
      this.headers.headroom(now, concurrency)
    );
  }

  /** Calls sent within a start's batch after its first: they count as starts for the rate a later throttle measures. */
  noteStarts(times: number[], now = Date.now()): void {
    if (!times.length) return;
    // Another machine's clock may run ahead: a start counted after now would read as one taken ahead (see startsAfter).
    this.recentStarts = [...this.recentStarts, ...times.map((at) => Math.min(at, now))].sort((a, b) => a - b);
    this.headers.started(times.length);
  }

  /** Calls per second allowed to start now; undefined while neither a throttle nor the headers have set one. */
  startRate(now: number): number | undefined {
    const rates = [this.cubic.rate(now), this.headers.pacedRate(now)].filter((r): r is number => r !== undefined);
    return rates.length ? Math.max(0.01, Math.min(...rates)) : undefined;
  }

  /** Starts are kept for the admitted rate's span, and for the headers' window (up to a minute). */
  private startsKeptMs(): number {
    return Math.max(ADMITTED_SPAN_MS, this.headers.windowMs());
  }

  /** A call's rate-limit headers; tokens left that would not cover the calls started since and one more hold starts until their reset. */
  private honourHeaders(now: number, ticket: { startedAt: number }, { rateLimit }: CallOutcome): void {
    if (!rateLimit) return;
    const startedSince = this.recentStarts.filter((at) => at > ticket.startedAt).length;
    if (this.headers.honour(now, startedSince, rateLimit)) {
      // Paced by the headers from now on: no rate guessed from a throttle, and no store of starts saved up from before.
      this.cubic.forget();
      if (this.rateTokensAt <= now) this.rateTokens = 0;
      this.rateTokensAt = Math.max(this.rateTokensAt, now);
    }
    const { remainingTokens, resetTokensMs } = rateLimit;
    if (
      remainingTokens !== undefined &&
      resetTokensMs !== undefined &&
      remainingTokens < this.tokens.perCall() * (startedSince + 1)
    )
      this.notBefore = Math.max(this.notBefore, now + resetTokensMs);
  }

  /** What continue-as-new carries over. */
  state(now = Date.now()): LimiterState {
    return {
      ...this.window.state(),
      notBefore: this.notBefore,
      ...this.tokens.state(now),
      ...this.cubic.state(now),
      recentStarts: this.recentStarts.filter((at) => at > now - this.startsKeptMs()),
      ...this.headers.state(),
      rateTokens: this.rateTokens,
      rateTokensAt: this.rateTokensAt,
    };
  }

  private earliestStart(now: number): number {
    let start = Math.max(
      this.notBefore,
      this.headers.earliestStart(now, this.recentStarts),
      this.tokens.earliestStart(now),
    );
    const rate = this.startRate(now);
    if (rate !== undefined) {
      const capacity = Math.max(1, rate * BURST_S);
      this.rateTokens = Math.min(capacity, this.rateTokens + (rate * Math.max(0, now - this.rateTokensAt)) / 1_000);
      // Nothing accrues during a Retry-After (the bucket refills from its end).
      this.rateTokensAt = Math.max(this.rateTokensAt, now);
      if (this.rateTokens < 1) start = Math.max(start, this.rateTokensAt + ((1 - this.rateTokens) * 1_000) / rate);
    }
    return start;
  }
}
