import type OpenAI from 'openai';
import type { z } from 'zod';
import { contentHash } from './hashing';

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
  responseFormat: 'json_schema' | 'json_object';
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
}

/** `x-ratelimit-limit-*`, `x-ratelimit-remaining-*` and `x-ratelimit-reset-*` (OpenAI's names; many providers send the same). */
export interface RateLimitInfo {
  limitRequests?: number;
  remainingRequests?: number;
  resetRequestsMs?: number;
  remainingTokens?: number;
  resetTokensMs?: number;
}

/** Read the rate-limit headers of a response; undefined when it sent none. Resets are durations like `1s`, `6m0s`, `20ms`. */
export function rateLimitHeaders(headers: { get(name: string): string | null }): RateLimitInfo | undefined {
  const number = (name: string) => {
    const value = headers.get(name);
    const n = value === null ? NaN : Number(value);
    return Number.isFinite(n) ? n : undefined;
  };
  const info: RateLimitInfo = {
    limitRequests: number('x-ratelimit-limit-requests'),
    remainingRequests: number('x-ratelimit-remaining-requests'),
    resetRequestsMs: durationMs(headers.get('x-ratelimit-reset-requests')),
    remainingTokens: number('x-ratelimit-remaining-tokens'),
    resetTokensMs: durationMs(headers.get('x-ratelimit-reset-tokens')),
  };
  const present = Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined)) as RateLimitInfo;
  return Object.keys(present).length ? present : undefined;
}

function durationMs(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (!parts.length) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u as keyof typeof unit], 0);
}

/** OpenAI-style `usage` (chat completions, also sent by many JSON APIs) → token counts; null fields when absent. */
export function usageFrom(usage: unknown): Pick<CallUsage, 'promptTokens' | 'completionTokens' | 'cachedTokens'> {
  const u = (usage && typeof usage === 'object' ? usage : {}) as Record<string, any>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    promptTokens: num(u.prompt_tokens ?? u.input_tokens),
    completionTokens: num(u.completion_tokens ?? u.output_tokens),
    cachedTokens: num(u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens),
  };
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
) & { /** The provider's system_fingerprint of the last answer, when it returned one (null for cached answers). */ systemFingerprint: string | null };

/** Optional memo of answers keyed by the full request, used when re-judging with an unchanged rubric and judge. */
export interface AnswerCache {
  get(key: string): Promise<string | null>;
  set(key: string, answer: string): Promise<void>;
}

/** The SDK is loaded on first use, so commands that never call an LLM never load it. */
const openaiSdk = (): typeof OpenAI => (require('openai') as typeof import('openai')).default;

const clients = new Map<string, OpenAI>();
function clientFor(settings: ModelEndpoint, env: NodeJS.ProcessEnv): OpenAI {
  const apiKey = (settings.apiKeyEnv && env[settings.apiKeyEnv]) || 'unused';
  const key = `${settings.baseURL}\u0000${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    // Transport retries belong to Temporal (visible, bounded, survive crashes), so the SDK's own are off.
    client = new (openaiSdk())({ baseURL: settings.baseURL, apiKey, maxRetries: 0, timeout: settings.timeoutMs });
    clients.set(key, client);
  }
  return client;
}

export function requestKey(settings: ModelEndpoint, messages: ChatMessage[], spec: { name: string; jsonSchema: unknown }): string {
  const request = { model: settings.model, baseURL: settings.baseURL, temperature: settings.temperature, format: settings.responseFormat, messages, schema: spec.jsonSchema };
  return contentHash(settings.cacheVariant === undefined ? request : { ...request, variant: settings.cacheVariant }, 40);
}

/** Some endpoints wrap JSON in a Markdown code fence even when asked for JSON; the content is what counts. */
export function stripCodeFence(raw: string): string {
  const fenced = raw.trim().match(/^```(?:json)?\s*\n([\s\S]*?)\n?```$/i);
  return fenced ? fenced[1] : raw;
}

function parseAnswer<T>(raw: string | null | undefined, spec: JsonAnswerSpec<T>): { value: T } | { error: string } {
  if (!raw) return { error: 'empty answer' };
  let value: unknown;
  try {
    value = JSON.parse(stripCodeFence(raw));
  } catch (error) {
    return { error: `answer is not valid JSON (${(error as Error).message})` };
  }
  const parsed = spec.zodSchema.safeParse(value);
  if (!parsed.success) return { error: `answer does not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}` };
  const problem = spec.check?.(parsed.data);
  return problem ? { error: problem } : { value: parsed.data };
}

/**
 * Ask for a JSON answer. Transport failures (HTTP errors, timeouts) throw, so Temporal retries the activity.
 * Invalid answers are re-asked up to `maxInvalidAnswers` times — as a fresh request, or inside the same
 * conversation with the reason appended — then returned as a failure (the caller records it; never a default score).
 */
export async function askJson<T>(args: {
  settings: ModelEndpoint;
  messages: ChatMessage[];
  spec: JsonAnswerSpec<T>;
  maxInvalidAnswers: number;
  retryIn: 'fresh' | 'conversation';
  env: NodeJS.ProcessEnv;
  cache?: AnswerCache;
  signal?: AbortSignal;
  /** Told about every request actually sent (cache hits are not requests), failed ones included. */
  onCall?: (usage: CallUsage) => void | Promise<void>;
}): Promise<JsonAnswer<T>> {
  const { settings, spec } = args;
  let messages = [...args.messages];
  let lastError = '';
  let systemFingerprint: string | null = null;
  for (let attempt = 1; attempt <= args.maxInvalidAnswers + 1; attempt++) {
    const key = requestKey(settings, messages, spec);
    let raw = (await args.cache?.get(key)) ?? null;
    let usage: CallUsage | null = null;
    if (raw === null) {
      const answer = await complete(settings, messages, spec, args.env, args.signal, args.onCall);
      raw = answer.content;
      usage = answer.usage;
      systemFingerprint = answer.systemFingerprint;
    }
    const parsed = parseAnswer(raw, spec);
    if (usage) await args.onCall?.('value' in parsed ? usage : { ...usage, ok: false, errorKind: 'invalid_answer' });
    if ('value' in parsed) {
      await args.cache?.set(key, raw ?? '');
      return { ok: true, value: parsed.value, raw: raw ?? '', attempts: attempt, messages: [...messages, { role: 'assistant', content: raw ?? '' }], systemFingerprint };
    }
    lastError = parsed.error;
    if (args.retryIn === 'conversation') {
      messages = [
        ...messages,
        { role: 'assistant', content: raw ?? '' },
        { role: 'user', content: `That answer was invalid: ${parsed.error}. Answer again with JSON that matches the schema exactly.` },
      ];
    }
  }
  return { ok: false, error: `invalid judge answer after ${args.maxInvalidAnswers + 1} attempts: ${lastError}`, attempts: args.maxInvalidAnswers + 1, messages, systemFingerprint };
}

async function complete(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  onCall?: (usage: CallUsage) => void | Promise<void>,
): Promise<{ content: string | null; systemFingerprint: string | null; usage: CallUsage }> {
  const responseFormat =
    settings.responseFormat === 'json_schema'
      ? ({ type: 'json_schema', json_schema: { name: spec.name, strict: true, schema: spec.jsonSchema } } as const)
      : ({ type: 'json_object' } as const);
  const started = Date.now();
  let completion;
  let rateLimit: RateLimitInfo | undefined;
  try {
    const { data, response } = await clientFor(settings, env)
      .chat.completions.create({ model: settings.model, messages, response_format: responseFormat, ...optionalParameters(settings) }, { signal })
      .withResponse();
    completion = data;
    rateLimit = rateLimitHeaders(response.headers);
  } catch (error) {
    await onCall?.({ model: settings.model, promptTokens: null, completionTokens: null, cachedTokens: null, latencyMs: Date.now() - started, ok: false, errorKind: callErrorKind(error) });
    throw error;
  }
  // Reported by askJson once the answer is checked: an invalid answer is a failed call of kind invalid_answer.
  const usage: CallUsage = { model: settings.model, ...usageFrom(completion.usage), latencyMs: Date.now() - started, ok: true, errorKind: null, ...(rateLimit ? { rateLimit } : {}) };
  return { content: completion.choices[0]?.message?.content ?? null, systemFingerprint: completion.system_fingerprint ?? null, usage };
}

/** A short failure kind for cost reports (the full error goes to Temporal): rate_limited, http_5xx, http_4xx, timeout, network. */
function callErrorKind(error: unknown): string {
  if (error instanceof openaiSdk().APIUserAbortError || error instanceof openaiSdk().APIConnectionTimeoutError) return 'timeout';
  if (error instanceof openaiSdk().APIConnectionError) return 'network';
  if (error instanceof openaiSdk().APIError) return error.status === 429 ? 'rate_limited' : `http_${String(error.status ?? 0)[0]}xx`;
  return 'invalid_reply';
}

/** Parameters some models reject are sent only when set: temperature (null = omitted), the token cap under the name the model wants, seed. */
export function optionalParameters(settings: { temperature?: number | null; maxTokens?: number; maxTokensParam?: 'max_tokens' | 'max_completion_tokens'; seed?: number | null }) {
  return {
    ...(settings.temperature === null || settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxTokens ? { [settings.maxTokensParam ?? 'max_tokens']: settings.maxTokens } : {}),
    ...(settings.seed === null || settings.seed === undefined ? {} : { seed: settings.seed }),
  };
}
