import { headersOf, ProviderHttpError } from './httpError';
import { ProviderReplyError, ProviderTimeoutError } from './replyError';

/**
 * One OpenAI-style Chat Completions request over fetch. The timeout covers the whole call, body included (a reply that
 * sends its headers and then stalls fails at timeoutMs, not at undici's 300 s body timeout), combined with the caller's
 * signal. Errors keep the provider's body: ProviderHttpError for an HTTP error status — and for HTTP 200 carrying
 * `{"error": …}` instead of choices (openrouter.ai docs, "Errors": errors during generation come back with status 200),
 * classed as a 5xx unless the error names its own status.
 */
export async function openaiChat(args: {
  baseURL: string;
  apiKey?: string;
  body: Record<string, unknown>;
  timeoutMs: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}): Promise<{ completion: any; headers: Record<string, string> }> {
  const timeout = AbortSignal.timeout(args.timeoutMs);
  const signal = args.signal ? AbortSignal.any([timeout, args.signal]) : timeout;
  try {
    const response = await fetch(`${args.baseURL.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(args.apiKey ? { authorization: `Bearer ${args.apiKey}` } : {}),
        ...args.headers,
      },
      body: JSON.stringify(args.body),
      signal,
    });
    const headers = headersOf(response.headers);
    const text = await response.text();
    if (!response.ok) throw new ProviderHttpError(response.status, text, headers);
    let completion: any;
    try {
      completion = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      throw new ProviderReplyError(`the reply is not JSON (HTTP ${response.status}): ${text.replace(/\s+/g, ' ').slice(0, 200)}`, text);
    }
    if (completion && typeof completion === 'object' && completion.error && !Array.isArray(completion.choices)) {
      const code = Number(completion.error?.code);
      throw new ProviderHttpError(Number.isInteger(code) && code >= 400 && code < 600 ? code : 502, text, headers);
    }
    if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices))
      throw new ProviderReplyError(`the reply has no choices (HTTP ${response.status}): ${text.replace(/\s+/g, ' ').slice(0, 200)}`, text);
    return { completion, headers };
  } catch (error) {
    if (timeout.aborted && !args.signal?.aborted) throw new ProviderTimeoutError(args.timeoutMs);
    throw error;
  }
}
