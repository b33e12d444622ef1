/**
 * A provider-style rate limit for the simulator: requests and tokens per window (a minute by default), counted over a
 * sliding window. A request over either limit is answered 429 with Retry-After (seconds) and retry-after-ms, as OpenAI
 * does; every answer carries x-ratelimit-limit/remaining/reset headers for requests and tokens.
 */
export interface SimRateLimit {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** The window the limits count over (default 60,000 ms; tests shrink it and the limits with it). */
  windowMs?: number;
  /** Send x-ratelimit-* headers (default true); without them a client only learns of the limit from 429s. */
  sendHeaders?: boolean;
}

export interface RateLimiter {
  /** On arrival: null when the request may go ahead (it now counts), else how long until it would have been allowed. */
  admit(now: number): { retryAfterMs: number } | null;
  /** Once answered: the tokens the answer used count against the token limit. */
  charge(now: number, tokens: number): void;
  headers(now: number): Record<string, string>;
}

export function createRateLimiter(limit: SimRateLimit): RateLimiter {
  const windowMs = limit.windowMs ?? 60_000;
  const requests: number[] = [];
  const tokens: Array<[number, number]> = [];
  const expire = (now: number) => {
    while (requests.length && requests[0] <= now - windowMs) requests.shift();
    while (tokens.length && tokens[0][0] <= now - windowMs) tokens.shift();
  };
  const tokensUsed = () => tokens.reduce((sum, [, n]) => sum + n, 0);
  /** When enough of the window has expired to bring `used` below `cap`. */
  const freeAt = (entries: Array<[number, number]>, used: number, cap: number) => {
    let excess = used - cap + 1;
    for (const [at, n] of entries) {
      excess -= n;
      if (excess <= 0) return at + windowMs;
    }
    return entries.length ? entries[entries.length - 1][0] + windowMs : 0;
  };
  return {
    admit(now) {
      expire(now);
      let until = 0;
      if (limit.requestsPerMinute && requests.length >= limit.requestsPerMinute)
        until = Math.max(
          until,
          freeAt(
            requests.map((at) => [at, 1]),
            requests.length,
            limit.requestsPerMinute,
          ),
        );
      if (limit.tokensPerMinute && tokensUsed() >= limit.tokensPerMinute)
        until = Math.max(until, freeAt(tokens, tokensUsed(), limit.tokensPerMinute));
      if (until > now) return { retryAfterMs: until - now };
      requests.push(now);
      return null;
    },
    charge(now, n) {
      if (n > 0) tokens.push([now, n]);
    },
    headers(now) {
      expire(now);
      const out: Record<string, string> = {};
      if (limit.sendHeaders === false) return out;
      // As OpenAI's: the time until the limit is back to its initial state (the newest counted request leaves the window).
      const reset = (at: number | undefined) => `${Math.max(0, Math.ceil((at ?? now) + windowMs - now))}ms`;
      if (limit.requestsPerMinute) {
        out['x-ratelimit-limit-requests'] = String(limit.requestsPerMinute);
        out['x-ratelimit-remaining-requests'] = String(Math.max(0, limit.requestsPerMinute - requests.length));
        out['x-ratelimit-reset-requests'] = reset(requests[requests.length - 1]);
      }
      if (limit.tokensPerMinute) {
        out['x-ratelimit-limit-tokens'] = String(limit.tokensPerMinute);
        out['x-ratelimit-remaining-tokens'] = String(Math.max(0, limit.tokensPerMinute - tokensUsed()));
        out['x-ratelimit-reset-tokens'] = reset(tokens[tokens.length - 1]?.[0]);
      }
      return out;
    },
  };
}
