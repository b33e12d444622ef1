import OpenAI from 'openai';
import { toAdapterError } from '../../../activities/adapters/errors';
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

  test('network faults from fetch and the OpenAI client, and timeouts, are retried', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    expect([toAdapterError(refused, 'copilot A').kind, toAdapterError(refused, 'copilot A').retryable]).toEqual(['network', true]);
    const connection = new OpenAI.APIConnectionError({ message: 'Connection error.' });
    expect(toAdapterError(connection, 'judge').kind).toBe('network');
    const timeout = new AbortController();
    timeout.abort();
    const e = toAdapterError(new Error('This operation was aborted'), 'copilot A', { timeout: { signal: timeout.signal, ms: 500 } });
    expect([e.kind, e.retryable, e.message]).toEqual(['timeout', true, 'copilot A did not answer within its timeout of 500 ms']);
  });

  test('HTTP 429/5xx retry, other 4xx do not; a 400 naming an unsupported parameter says how to fix it', () => {
    const api = (status: number, body: Record<string, unknown>) => OpenAI.APIError.generate(status, body, undefined, new Headers());
    expect(toAdapterError(api(429, { error: { message: 'slow down' } }), 'judge').retryable).toBe(true);
    expect(toAdapterError(api(503, { error: { message: 'down' } }), 'judge').retryable).toBe(true);
    expect(toAdapterError(api(401, { error: { message: 'bad key' } }), 'judge').retryable).toBe(false);
    const unsupported = toAdapterError(
      api(400, { error: { message: "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.", type: 'invalid_request_error', param: 'temperature', code: 'unsupported_value' } }),
      'judge',
    );
    expect([unsupported.kind, unsupported.retryable]).toEqual(['unsupported_parameter', false]);
    expect(unsupported.message).toContain('set `temperature: null`');
    // The fix names the config key that really exists (judge.sendSeed), not a made-up one.
    const seed = toAdapterError(api(400, { error: { message: "Unsupported parameter: 'seed' is not supported with this model.", type: 'invalid_request_error', param: 'seed', code: 'unsupported_parameter' } }), 'judge');
    expect([seed.kind, seed.retryable]).toEqual(['unsupported_parameter', false]);
    expect(seed.message).toContain('set `sendSeed: false`');
  });

  test('a cancelled run wins over every other reading; bad input is a config error', () => {
    const cancelled = new AbortController();
    cancelled.abort();
    expect(toAdapterError(new Error('aborted'), 'judge', { cancellation: cancelled.signal }).kind).toBe('cancelled');
    expect([toAdapterError(new InputError('no such column'), 'copilot A').kind, toAdapterError(new InputError('x'), 'copilot A').retryable]).toEqual(['config', false]);
  });
});

describe('ProviderHttpError (judgeflow\'s own transports) is read exactly like the SDK\'s APIError', () => {
  const { ProviderHttpError } = require('../../../core/llm/providers/httpError') as typeof import('../../../core/llm/providers/httpError');
  const body = (status: number, message: string, code: string | null = null) => JSON.stringify({ error: { message, type: 'x', param: null, code } });

  test.each([
    [429, body(429, 'Rate limit reached for requests', 'rate_limit_exceeded'), { 'retry-after': '2' }],
    [500, body(500, 'The server had an error'), {}],
    [400, body(400, 'Invalid model'), {}],
    [400, body(400, "Unsupported value: 'temperature' does not support 0 with this model."), {}],
  ])('HTTP %i', (status, text, headers) => {
    const ours = toAdapterError(new ProviderHttpError(status, text, headers), 'judge');
    const sdk = toAdapterError(OpenAI.APIError.generate(status, JSON.parse(text), undefined, new Headers(headers)), 'judge');
    expect([ours.kind, ours.retryable, ours.options.retryAfterMs, ours.message]).toEqual([sdk.kind, sdk.retryable, sdk.options.retryAfterMs, sdk.message]);
  });

  test('quota is its own kind, never retried; a not-JSON reply and a whole-call timeout are retried', () => {
    const quota = toAdapterError(new ProviderHttpError(429, body(429, 'You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota'), {}), 'judge');
    expect([quota.kind, quota.retryable]).toEqual(['quota', false]);
    const { ProviderReplyError, ProviderTimeoutError } = require('../../../core/llm/providers/replyError') as typeof import('../../../core/llm/providers/replyError');
    expect([toAdapterError(new ProviderReplyError('the reply is not JSON', '<html>'), 'judge').kind, toAdapterError(new ProviderTimeoutError(2000), 'judge').message]).toEqual(['invalid_reply', 'judge did not answer within its timeout of 2000 ms']);
  });
});
