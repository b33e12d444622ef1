import { anthropicChat, type AnthropicChatResult, type AnthropicRequest } from './providers/anthropicMessages';
import { openaiChat } from './providers/chat';
import { ProviderHttpError } from './providers/httpError';
import { isQuotaError, profileOf } from './providers';
import { chatRequestBody, type JsonWanted, type RequestSettings } from './providers/request';
import {
  droppedParameters,
  endpointKey,
  learnRefusedParameter,
  markQuotaExhausted,
  quotaExhausted,
} from './providers/session';

/**
 * The one request path of judges (core/llm/client.ts) and copilots (activities/adapters/): every call to a model
 * endpoint goes through here, so what the worker learnt about an endpoint holds for both —
 *   1. out of quota earlier (session.ts): not asked; the error it answered then is thrown again at once (EndpointPausedError);
 *   2. the body is built from the endpoint's provider profile, minus the parameters it refused before;
 *   3. a 400/422 naming a parameter the body sent (in any profile's words): that parameter is dropped for the endpoint
 *      and the call is asked again at once, at most MAX_DROPS times;
 *   4. an error a profile reads as out of quota marks the endpoint (step 1 for the next calls) and is thrown.
 * Other errors are thrown as they came (ProviderHttpError keeps the body): the caller decides what they mean.
 */

/** Where a call goes and what it asks, as a judge's ModelEndpoint or an `openai` copilot's config says it. */
export interface CallEndpoint extends RequestSettings {
  baseURL: string;
  /** The environment variable holding the key: part of the endpoint's identity (two accounts are two endpoints). */
  apiKeyEnv?: string;
  /** The provider profile's id; absent: inferred from the base URL's host. */
  provider?: string | null;
  /** Covers the whole call, body included. */
  timeoutMs: number;
}

/** A Chat Completions request. */
export interface ChatCall {
  endpoint: CallEndpoint;
  messages: Array<{ role: string; content: string }>;
  /** The JSON answer wanted (a judge's schema), or null for free text (a copilot). */
  json: JsonWanted | null;
  apiKey?: string;
  signal?: AbortSignal;
  /**
   * Told about each request the endpoint refused for a parameter (dropped, then asked again): `learnt` is false when a
   * concurrent call learnt the same refusal first. A judge records it in llm_calls as `dropped:<parameter>`.
   */
  onRefused?: (refusal: { parameter: string; learnt: boolean; started: number }) => void | Promise<void>;
}

export interface ChatReply {
  /** The parsed reply: it has a `choices` array (core/llm/providers/chat.ts checks). */
  completion: any;
  /** The reply's headers, lower-cased names. */
  headers: Record<string, string>;
  /** The body that was answered (after any drops). */
  body: Record<string, unknown>;
  /** When that last request was sent (Date.now()). */
  started: number;
}

/** How many refused parameters one call may drop before giving up (each drop is one extra request, once per endpoint). */
export const MAX_DROPS = 4;

/** Ask a Chat Completions endpoint once, through the profile and what was learnt about the endpoint (steps 1–4 above). */
export async function chatCompletion(call: ChatCall): Promise<ChatReply> {
  const { endpoint } = call;
  const profile = profileOf(endpoint);
  return guardQuota(endpoint, async () => {
    const dropped = droppedParameters(endpointKey(endpoint));
    for (let drops = 0; ; drops++) {
      const body = chatRequestBody(profile, endpoint, call.messages, call.json, dropped);
      const started = Date.now();
      try {
        const { completion, headers } = await openaiChat({
          baseURL: endpoint.baseURL,
          apiKey: call.apiKey,
          body,
          timeoutMs: endpoint.timeoutMs,
          signal: call.signal,
        });
        return { completion, headers, body, started };
      } catch (error) {
        const refusal = drops < MAX_DROPS ? learnRefusedParameter(error, body, dropped) : null;
        if (!refusal) throw error;
        await call.onRefused?.({ ...refusal, started });
      }
    }
  });
}

/** Ask Anthropic's native Messages API once (steps 1 and 4 above: it names no refused parameters judgeflow could drop). */
export async function anthropicMessage(call: {
  endpoint: Pick<CallEndpoint, 'baseURL' | 'model' | 'apiKeyEnv' | 'timeoutMs'>;
  request: AnthropicRequest;
  apiKey: string;
  signal?: AbortSignal;
}): Promise<AnthropicChatResult> {
  const { endpoint } = call;
  return guardQuota(endpoint, () =>
    anthropicChat({
      ...call.request,
      baseURL: endpoint.baseURL,
      apiKey: call.apiKey,
      timeoutMs: endpoint.timeoutMs,
      signal: call.signal,
    }),
  );
}

/**
 * Step 1's error: the endpoint was not asked, because it answered out of quota earlier in this worker — that answer,
 * read exactly like it (status, body, headers), so the failure says the provider's words. No request was sent: a caller
 * that records calls records none.
 */
export class EndpointPausedError extends ProviderHttpError {
  constructor(answered: ProviderHttpError) {
    super(answered.status, answered.body, answered.headers, answered.message);
    this.name = 'EndpointPausedError';
  }
}

/** Steps 1 and 4: an endpoint out of quota is not asked; an out-of-quota answer marks it. */
async function guardQuota<T>(
  endpoint: { baseURL: string; model: string; apiKeyEnv?: string },
  send: () => Promise<T>,
): Promise<T> {
  const key = endpointKey(endpoint);
  const exhausted = quotaExhausted(key);
  if (exhausted) throw new EndpointPausedError(exhausted);
  try {
    return await send();
  } catch (error) {
    if (error instanceof ProviderHttpError && isQuotaError(error.status, error.body)) markQuotaExhausted(key, error);
    throw error;
  }
}
