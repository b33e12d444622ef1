import { toAdapterError } from '../../../activities/adapters/errors';
import { ProviderHttpError } from '../../../core/llm/providers/httpError';
import { InputError } from '../../../core/model/inputError';

/** One classifier for every copilot and judge failure: known transient faults retry, anything else is a non-retryable internal error. */
describe('toAdapterError', () => {
  test('a bug (TypeError) is internal, not retried, and keeps its real message', () => {
    const e = toAdapterError(new TypeError("Cannot read properties of undefined (reading 'text')"), 'judge');
    expect(e.kind).toBe('internal');
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("TypeError): Cannot read properties of undefined (reading 'text')");
  });

  test('a missing stored query is internal, not a network failure', () => {
    const e = toAdapterError(new Error('query q7 is not in snapshot snap-1'), 'copilot A');
    expect([e.kind, e.retryable]).toEqual(['internal', false]);
  });

  test('SQLITE_BUSY is a retryable busy store, never a network failure', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const e = toAdapterError(busy, 'judge');
    expect([e.kind, e.retryable]).toEqual(['store_busy', true]);
  });

  test('network faults from fetch, and timeouts, are retried', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
    });
    expect([
      toAdapterError(refused, 'copilot A').kind,
      toAdapterError(refused, 'copilot A').retryable,
      toAdapterError(refused, 'copilot A').message,
    ]).toEqual(['network', true, 'copilot A: fetch failed (connect ECONNREFUSED 127.0.0.1:9)']);
    const timeout = new AbortController();
    timeout.abort();
    const e = toAdapterError(new Error('This operation was aborted'), 'copilot A', {
      timeout: { signal: timeout.signal, ms: 500 },
    });
    expect([e.kind, e.retryable, e.message]).toEqual([
      'timeout',
      true,
      'copilot A did not answer within its timeout of 500 ms',
    ]);
  });

  test('HTTP 429/5xx retry, other 4xx do not; a 400 naming an unsupported parameter says how to fix it', () => {
    const api = (status: number, body: Record<string, unknown>) =>
      new ProviderHttpError(status, JSON.stringify(body), {});
    expect(toAdapterError(api(429, { error: { message: 'slow down' } }), 'judge').retryable).toBe(true);
    expect(toAdapterError(api(503, { error: { message: 'down' } }), 'judge').retryable).toBe(true);
    expect(toAdapterError(api(401, { error: { message: 'bad key' } }), 'judge').retryable).toBe(false);
    const unsupported = toAdapterError(
      api(400, {
        error: {
          message:
            "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'unsupported_value',
        },
      }),
      'judge',
    );
    expect([unsupported.kind, unsupported.retryable]).toEqual(['unsupported_parameter', false]);
    expect(unsupported.message).toContain('set `temperature: null`');
    // The fix names the config key that really exists (judge.sendSeed), not a made-up one.
    const seed = toAdapterError(
      api(400, {
        error: {
          message: "Unsupported parameter: 'seed' is not supported with this model.",
          type: 'invalid_request_error',
          param: 'seed',
          code: 'unsupported_parameter',
        },
      }),
      'judge',
    );
    expect([seed.kind, seed.retryable]).toEqual(['unsupported_parameter', false]);
    expect(seed.message).toContain('set `sendSeed: false`');
  });

  test('a cancelled run wins over every other reading; bad input is a config error', () => {
    const cancelled = new AbortController();
    cancelled.abort();
    expect(toAdapterError(new Error('aborted'), 'judge', { cancellation: cancelled.signal }).kind).toBe('cancelled');
    expect([
      toAdapterError(new InputError('no such column'), 'copilot A').kind,
      toAdapterError(new InputError('x'), 'copilot A').retryable,
    ]).toEqual(['config', false]);
  });
});

describe("ProviderHttpError (judgeflow's own transports): the provider words, Retry-After and the retry decision", () => {
  const body = (status: number, message: string, code: string | null = null) =>
    JSON.stringify({ error: { message, type: 'x', param: null, code } });

  test.each([
    [
      429,
      body(429, 'Rate limit reached for requests', 'rate_limit_exceeded'),
      { 'retry-after': '2' },
      ['rate_limited', true, 2000, 'judge answered HTTP 429: Rate limit reached for requests'],
    ],
    [
      429,
      body(429, 'slow down'),
      { 'retry-after-ms': '1500' },
      ['rate_limited', true, 1500, 'judge answered HTTP 429: slow down'],
    ],
    [
      500,
      body(500, 'The server had an error'),
      {},
      ['http', true, undefined, 'judge answered HTTP 500: The server had an error'],
    ],
    [400, body(400, 'Invalid model'), {}, ['http', false, undefined, 'judge answered HTTP 400: Invalid model']],
    [400, '', {}, ['http', false, undefined, 'judge answered HTTP 400 (no body)']],
  ])('HTTP %i %s', (status, text, headers, expected) => {
    const error = toAdapterError(new ProviderHttpError(status, text, headers), 'judge');
    expect([error.kind, error.retryable, error.options.retryAfterMs, error.message]).toEqual(expected);
  });

  test('quota is its own kind, never retried; a not-JSON reply and a whole-call timeout are retried', () => {
    const quota = toAdapterError(
      new ProviderHttpError(
        429,
        body(429, 'You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota'),
        {},
      ),
      'judge',
    );
    expect([quota.kind, quota.retryable]).toEqual(['quota', false]);
    const { ProviderReplyError, ProviderTimeoutError } =
      require('../../../core/llm/providers/replyError') as typeof import('../../../core/llm/providers/replyError');
    expect([
      toAdapterError(new ProviderReplyError('the reply is not JSON', '<html>'), 'judge').kind,
      toAdapterError(new ProviderTimeoutError(2000), 'judge').message,
    ]).toEqual(['invalid_reply', 'judge did not answer within its timeout of 2000 ms']);
  });
});
