import type { z } from 'zod';
import type { ProviderId } from './providers/profile';

/** The types of an LLM request and its answer, apart from the code that sends it, so providers and the domain's types import them without importing the client (core/llm/client.ts). */

/**
 * One OpenAI-compatible chat endpoint and how to ask it: the judge of a run (temperature already resolved from the
 * rubric), or the generator or tagger of a snapshot job. The key is named, never carried.
 */
export interface ModelEndpoint {
  baseURL: string;
  model: string;
  apiKeyEnv?: string;
  /** null: not sent (reasoning models accept only their default). */
  temperature: number | null;
  timeoutMs: number;
  /** The config's explicit response format; absent: the provider profile's. */
  responseFormat?: 'json_schema' | 'json_object' | 'none';
  /** The provider profile (core/llm/providers/profiles/); absent: inferred from the base URL's host. */
  provider?: ProviderId;
  /** Provider fields sent with every request as they are (reasoning_effort, provider routing…). */
  extraBody?: Record<string, unknown>;
  maxTokens?: number;
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** Sent as `seed` when set; recorded with every judgment. */
  seed?: number | null;
  /**
   * Part of the answer cache key when set: repeated samples (and panel members) ask identical requests but must get
   * independent answers. Unset for sample 0 of a single judge, so caches written before samples existed still match.
   */
  cacheVariant?: string;
}

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

/** What one LLM request cost, as the provider reported it (token fields null when it did not say). */
export interface CallUsage {
  model: string;
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
  latencyMs: number;
  ok: boolean;
  /** Why it failed (adapter error kind, e.g. rate_limited, http, timeout); null when ok. */
  errorKind: string | null;
  /** What the endpoint's rate-limit headers said, when it sent them. */
  rateLimit?: RateLimitInfo;
  /**
   * Characters of the request's messages and of the reply's answer (null: no reply came), so a call whose endpoint
   * reports no usage can still be estimated (core/stats/cost.ts: about 4 characters a token).
   */
  requestChars?: number | null;
  replyChars?: number | null;
  /**
   * Answered from the results store (`--reuse-judgments`: a byte-identical request answered before): no request was
   * sent and nothing paid. Told and recorded so the cost table shows it with the price it avoided (core/stats/cost.ts);
   * never in spend, budgets or the limiter's usage.
   */
  reused?: boolean;
}

/** `x-ratelimit-limit-*`, `x-ratelimit-remaining-*` and `x-ratelimit-reset-*` (OpenAI's names; many providers send the same). */
export interface RateLimitInfo {
  limitRequests?: number;
  remainingRequests?: number;
  resetRequestsMs?: number;
  remainingTokens?: number;
  resetTokensMs?: number;
}

export interface JsonAnswerSpec<T> {
  name: string;
  /** JSON schema sent as response_format (OpenAI structured outputs). */
  jsonSchema: Record<string, unknown>;
  /** Checked anyway: providers do not all honour the schema. */
  zodSchema: z.ZodType<T>;
  /** Extra semantic check (e.g. "a ranking is a permutation"); returns a reason or null. */
  check?: (value: T) => string | null;
}

export type JsonAnswer<T> = (
  | { ok: true; value: T; raw: string; attempts: number; messages: ChatMessage[] }
  | { ok: false; error: string; attempts: number; messages: ChatMessage[] }
) & {
  /** The provider's system_fingerprint of the last answer, when it returned one (null for cached answers). */ systemFingerprint:
    string | null;
};

/** Optional memo of answers keyed by the full request, used when re-judging with an unchanged rubric and judge. */
export interface AnswerCache {
  get(key: string): Promise<string | null>;
  set(key: string, answer: string): Promise<void>;
  /**
   * Batch judging (activities/judgeBatch.ts): the reply a provider's Batch API gave to this request — the body of its
   * result line, read exactly as a live reply — or null to ask live. Preparing a batch, it throws instead
   * (DeferredToBatch), after taking `line()`: the request body this call would send now.
   */
  batchReply?(
    key: string,
    line: () => Record<string, unknown>,
    settings: ModelEndpoint,
  ): Promise<Record<string, unknown> | null>;
}
