import { ProviderHttpError } from './httpError';
import { postText } from './post';
import { errorInReply } from './index';
import { ProviderReplyError, ProviderTimeoutError } from './replyError';

/**
 * One OpenAI-style Chat Completions request (over Node's http module: post.ts, cheaper than fetch, failing alike). The timeout covers the whole call, body included (a reply that
 * sends its headers and then stalls fails at timeoutMs, not at undici's 300 s body timeout), combined with the caller's
 * signal. Errors keep the provider's body: ProviderHttpError for an HTTP error status, and for a 2xx reply that a
 * profile's errorInReply hook reads as an error. Judges and copilots reach it through core/llm/call.ts, never directly.
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
    const response = await postText(
      `${args.baseURL.replace(/\/+$/, '')}/chat/completions`,
      {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(args.apiKey ? { authorization: `Bearer ${args.apiKey}` } : {}),
        ...args.headers,
      },
      JSON.stringify(args.body),
      signal,
    );
    const { headers, text } = response;
    if (!response.ok) throw new ProviderHttpError(response.status, text, headers);
    let completion: any;
    try {
      completion = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      throw new ProviderReplyError(
        `the reply is not JSON (HTTP ${response.status}): ${text.replace(/\s+/g, ' ').slice(0, 200)}`,
        text,
      );
    }
    // An error inside a 2xx reply, as a provider's profile reads it (OpenRouter's: profiles/openrouter.ts).
    const status =
      completion && typeof completion === 'object' && !Array.isArray(completion) ? errorInReply(completion) : null;
    if (status) throw new ProviderHttpError(status, text, headers);
    if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices))
      throw new ProviderReplyError(
        `the reply has no choices (HTTP ${response.status}): ${text.replace(/\s+/g, ' ').slice(0, 200)}`,
        text,
      );
    return { completion, headers };
  } catch (error) {
    if (timeout.aborted && !args.signal?.aborted) throw new ProviderTimeoutError(args.timeoutMs);
    throw error;
  }
}
