/**
 * One request to a provider's batch endpoints over fetch, with the transports' conventions (core/providers/chat.ts): the
 * timeout covers the whole call, body included (ProviderTimeoutError); an HTTP error status throws ProviderHttpError
 * carrying the body as received, its message the provider's own words (errorBody.ts reads every body shape).
 */
import { providerErrorMessage } from '../errorBody';
import { headersOf, ProviderHttpError } from '../httpError';
import { ProviderReplyError, ProviderTimeoutError } from '../replyError';

export async function batchRequest(url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | FormData }, timeoutMs: number): Promise<string> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: timeout });
    const text = await response.text();
    if (!response.ok) {
      const words = providerErrorMessage(text);
      throw new ProviderHttpError(response.status, text, headersOf(response.headers), `HTTP ${response.status} from ${init.method} ${new URL(url).pathname}${words ? `: ${words}` : ''}`);
    }
    return text;
  } catch (error) {
    if (timeout.aborted) throw new ProviderTimeoutError(timeoutMs);
    throw error;
  }
}

export async function batchJson(url: string, init: Parameters<typeof batchRequest>[1], timeoutMs: number): Promise<any> {
  const text = await batchRequest(url, init, timeoutMs);
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new ProviderReplyError(`the reply of ${init.method} ${new URL(url).pathname} is not JSON: ${text.replace(/\s+/g, ' ').slice(0, 200)}`, text);
  }
}

/** JSONL as objects; a line that is not JSON is a ProviderReplyError (a truncated download should be fetched again). */
export function jsonLines(text: string, what: string): any[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line);
      } catch {
        throw new ProviderReplyError(`${what}: line ${i + 1} is not JSON: ${line.slice(0, 200)}`, text);
      }
    });
}

/** The lines the provider never reported, as `kind` (expired, or canceled for a cancelled batch). */
export function unreported<R extends { customId: string }>(reported: R[], expected: string[] | undefined, kind: 'expired' | 'canceled', why: string) {
  const seen = new Set(reported.map((r) => r.customId));
  return (expected ?? []).filter((id) => !seen.has(id)).map((customId) => ({ customId, ok: false as const, kind, error: why }));
}
