import { InputError } from '../../core/model/inputError';
import { retryAfterMs } from './common';
import { AdapterError } from './types';
import { ProviderHttpError } from '../../core/llm/providers/httpError';
import { ProviderReplyError, ProviderTimeoutError } from '../../core/llm/providers/replyError';
import { providerErrorMessage } from '../../core/llm/providers/errorBody';
import { isQuotaError, refusedParameter } from '../../core/llm/providers';

/** What the caller knows about the failed call, so the message can say what was happening. */
export interface FailureContext {
  /** The timeout signal of the call: when it fired, whatever was thrown is a timeout. */
  timeout?: { signal: AbortSignal; ms: number };
  /** The activity's cancellation signal: when it fired, the call was abandoned on purpose. */
  cancellation?: AbortSignal;
  /** Appended to messages, e.g. " while waiting for the answer on https://…". */
  where?: string;
  /** The raw reply received so far, kept with the failure. */
  raw?: string;
}

/** Network faults Node and undici report as codes (fetch wraps them in a TypeError "fetch failed" with this cause). */
const NETWORK_CODES =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|UND_ERR_\w+)$/;
/**
 * SQLite lock contention outlasting busy_timeout (several workers on one store file). Transient, so retried, but never
 * the copilot's or judge's fault: callers send it back to Temporal instead of recording it as the item's failure.
 */
const STORE_BUSY_CODES = /^SQLITE_(BUSY|LOCKED)/;
/**
 * The results store could not be reached for as long as the run allows (see activities/storeOutage.ts). Like a busy
 * store, nobody's answer: sent back to Temporal, never recorded as the copilot's or judge's failure.
 */
export const STORE_UNREACHABLE_CODE = 'JUDGEFLOW_STORE_UNREACHABLE';

/**
 * A store call that failed because the database could not be reached, not because of what was asked: the server is down
 * or restarting (connection refused or reset, node-postgres' "Connection terminated", SQLSTATE class 08 connection
 * exceptions, 57P01-57P03 administrator/crash shutdown and "the database system is starting up"). Writes are idempotent
 * (core/model/store.ts), so the same call can simply be made again once the server is back.
 */
export function isStoreConnectionError(error: unknown): boolean {
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown })?.cause);
  if (
    code &&
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|08\w{3}|57P0[123])$/.test(code)
  )
    return true;
  const message = error instanceof Error ? error.message : String(error);
  return /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command/i.test(
    message,
  );
}

/**
 * The one place that decides what a failed copilot or judge call was and whether another attempt can help.
 * Known transient faults (HTTP 429/5xx/408, timeouts, network errors, malformed replies, a busy store) are retryable;
 * anything unrecognised is a non-retryable "internal" error carrying its real message — retrying a bug 8 times and
 * storing it as a network failure hides it.
 */
export function toAdapterError(error: unknown, who: string, context: FailureContext = {}): AdapterError {
  if (error instanceof AdapterError) return error;
  // Playwright is loaded here, on a failure, not whenever a config is read (the CLI loads only what a command uses).
  const playwrightErrors = (require('playwright-core') as typeof import('playwright-core')).errors;
  const where = context.where ?? '';
  const raw = context.raw || undefined;
  if (context.cancellation?.aborted)
    return new AdapterError('cancelled', `${who}: the call was abandoned because the run was cancelled`, { raw });
  if (context.timeout?.signal.aborted)
    return new AdapterError(
      'timeout',
      `${who} did not answer within its timeout${context.timeout ? ` of ${context.timeout.ms} ms` : ''}${where}`,
      { retryable: true, raw },
    );
  if (error instanceof InputError) return new AdapterError('config', `${who}: ${error.message}`);
  if (error instanceof ProviderTimeoutError)
    return new AdapterError('timeout', `${who} did not answer within its timeout of ${error.ms} ms${where}`, {
      retryable: true,
      raw,
    });
  // judgeflow's own transports (core/llm/providers: every provider call goes through core/llm/call.ts over fetch).
  if (error instanceof ProviderHttpError)
    return httpFailure(who, error.status, error.body, retryAfterHeader({ get: (name) => error.headers[name] ?? null }));
  if (error instanceof ProviderReplyError)
    return new AdapterError('invalid_reply', `${who}: ${error.message}${where}`, { retryable: true, raw: error.raw });
  if (error instanceof playwrightErrors.TimeoutError)
    return new AdapterError('timeout', `${who} timed out${where}: ${firstLine(error)}`, { retryable: true });
  const message = firstLine(error);
  if (/net::ERR_/.test(message))
    return new AdapterError('network', `${who} could not load the page${where}: ${message}`, { retryable: true });
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown })?.cause);
  if (code && NETWORK_CODES.test(code))
    return new AdapterError('network', `${who}: ${message}${causeOf(error)}${where}`, { retryable: true });
  if (code === STORE_UNREACHABLE_CODE) return new AdapterError('store_busy', message, { retryable: true });
  if (code && STORE_BUSY_CODES.test(code))
    return new AdapterError(
      'store_busy',
      `the results store is busy (${code}: ${message}); another process holds its write lock`,
      { retryable: true },
    );
  const name = error instanceof Error ? error.name : typeof error;
  return new AdapterError('internal', `${who}: internal error (${name}): ${message}${where}`, { raw });
}

/**
 * An HTTP error status from a copilot or judge: 429/5xx/408 retry (honouring Retry-After); other 4xx do not. The message
 * carries the provider's own words from whatever shape its body has (core/llm/providers/errorBody.ts); what they mean is
 * read by the provider profiles' hooks (core/llm/providers/index.ts). Out of credit (OpenAI's 429 insufficient_quota,
 * OpenRouter's 402) is `quota`: never retried — "retrying billing, spend, or quota errors won't
 * restore API access" (OpenAI error codes guide).
 */
export function httpFailure(who: string, status: number, body: string, retryAfter: string | null): AdapterError {
  const after = retryAfterMs(retryAfter);
  const words = providerErrorMessage(body);
  const detail = words ? `: ${snippet(words)}` : body ? `: ${snippet(body)}` : ' (no body)';
  if (isQuotaError(status, body))
    return new AdapterError(
      'quota',
      `${who} is out of quota or credit (HTTP ${status})${detail}. Not retried: add credit or raise the limit, then run again`,
      { raw: body || undefined, status },
    );
  if (status === 429)
    return new AdapterError('rate_limited', `${who} answered HTTP 429${detail}`, {
      retryable: true,
      retryAfterMs: after,
      raw: body || undefined,
    });
  const unsupported = status === 400 || status === 422 ? refusedParameter(`${words ?? ''} ${body}`) : null;
  if (unsupported)
    return new AdapterError(
      'unsupported_parameter',
      `${who} answered HTTP ${status}${detail}. ${fixFor(unsupported)}`,
      { raw: body || undefined },
    );
  return new AdapterError('http', `${who} answered HTTP ${status}${detail}`, {
    retryable: status >= 500 || status === 408,
    retryAfterMs: after,
    raw: body || undefined,
    status,
  });
}

function fixFor(parameter: string): string {
  if (parameter === 'temperature')
    return 'This model does not accept temperature: set `temperature: null` in the judge (or copilot) config to leave it out.';
  if (parameter === 'max_tokens')
    return 'This model wants max_completion_tokens: set `maxTokensParam: max_completion_tokens` in the judge (or copilot) config.';
  if (parameter === 'seed' || parameter === 'random_seed')
    return 'This endpoint does not accept seed: set `sendSeed: false` (or the right `provider:`) in the judge (or copilot) config to leave it out.';
  if (parameter === 'response_format')
    return 'This endpoint does not take this response_format: set `responseFormat: json_object` (or `none`) or the right `provider:` in the judge config.';
  return `Remove "${parameter}" from the request settings in the config; this model does not accept it.`;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message ? ` (${cause.message})` : '';
}

export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/** OpenAI's precise `retry-after-ms` when sent, else `Retry-After` (seconds or an HTTP date). */
function retryAfterHeader(headers: { get?(name: string): string | null } | undefined): string | null {
  const ms = Number(headers?.get?.('retry-after-ms') ?? NaN);
  return Number.isFinite(ms) ? String(ms / 1000) : (headers?.get?.('retry-after') ?? null);
}
