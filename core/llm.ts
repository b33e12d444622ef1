import { anthropicChat, anthropicReplyOf, anthropicRequestBody, type AnthropicChatResult, type AnthropicRequest } from './providers/anthropicMessages';
import type { z } from 'zod';
import { contentHash } from './hashing';
import { openaiChat } from './providers/chat';
import { contentText, extractJson, finishProblem, stripThink, toolCallProblem } from './providers/extract';
import { isQuotaError, providerErrorCodes, providerErrorMessage } from './providers/errorBody';
import { ProviderHttpError } from './providers/httpError';
import { profileOf, type ProviderId } from './providers';
import { chatRequestBody, type RequestSettings } from './providers/request';
import { droppedParameters, endpointKey, learnRefusedParameter, markQuotaExhausted, quotaExhausted } from './providers/session';
import { ProviderTimeoutError } from './providers/replyError';

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
  /** The provider profile (core/providers); absent: inferred from the base URL's host. */
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
   * reports no usage can still be estimated (core/cost.ts: about 4 characters a token).
   */
  requestChars?: number | null;
  replyChars?: number | null;
  /**
   * Answered from the results store (`--reuse-judgments`: a byte-identical request answered before): no request was
   * sent and nothing paid. Told and recorded so the cost table shows it with the price it avoided (core/cost.ts); never
   * in spend, budgets or the limiter's usage.
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

/** Read the rate-limit headers of a response; undefined when it sent none. Resets are durations like `1s`, `6m0s`, `20ms`. */
export function rateLimitHeaders(source: { get(name: string): string | null } | Record<string, string>): RateLimitInfo | undefined {
  const headers = typeof source.get === 'function' ? (source as { get(name: string): string | null }) : { get: (name: string) => (source as Record<string, string>)[name] ?? null };
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
  /**
   * Batch judging (activities/judgeBatch.ts): the reply a provider's Batch API gave to this request — the body of its
   * result line, read exactly as a live reply — or null to ask live. Preparing a batch, it throws instead
   * (DeferredToBatch), after taking `line()`: the request body this call would send now.
   */
  batchReply?(key: string, line: () => Record<string, unknown>, settings: ModelEndpoint): Promise<Record<string, unknown> | null>;
}

export function requestKey(settings: ModelEndpoint, messages: ChatMessage[], spec: { name: string; jsonSchema: unknown }): string {
  const request = { model: settings.model, baseURL: settings.baseURL, temperature: settings.temperature, format: settings.responseFormat ?? 'json_schema', messages, schema: spec.jsonSchema };
  return contentHash(settings.cacheVariant === undefined ? request : { ...request, variant: settings.cacheVariant }, 40);
}

/** The JSON value of a stored or received answer, read as robustly as when it was first checked. */
export function parseJsonAnswer(raw: string): unknown {
  const extracted = extractJson(raw);
  if ('error' in extracted) throw new Error(extracted.error);
  return extracted.value;
}

function parseAnswer<T>(raw: string | null | undefined, spec: JsonAnswerSpec<T>): { value: T } | { error: string } {
  if (!raw) return { error: 'empty answer' };
  const extracted = extractJson(raw);
  if ('error' in extracted) return extracted;
  const parsed = spec.zodSchema.safeParse(extracted.value);
  if (!parsed.success) return { error: `answer does not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}` };
  const problem = spec.check?.(parsed.data);
  return problem ? { error: problem } : { value: parsed.data };
}

/**
 * Ask for a JSON answer. Transport failures (HTTP errors, timeouts) throw, so Temporal retries the activity.
 * Invalid answers (also refusals, truncated or filtered answers, tool calls, Groq's json_validate_failed) are re-asked up
 * to `maxInvalidAnswers` times — as a fresh request, or inside the same conversation — then returned as a failure (the
 * caller records it; never a default score). A re-ask is never byte-identical to what failed: it carries the reason and
 * its own seed.
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
  /** Told about every request actually sent, failed ones included, and about every answer reused from the store (`reused`). */
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
    let problem: string | null = null;
    // Its sizes say roughly what the call it stands for would have cost.
    if (raw !== null) usage = { model: settings.model, promptTokens: null, completionTokens: null, cachedTokens: null, latencyMs: 0, ok: true, errorKind: null, requestChars: messageChars(messages), replyChars: raw.length, reused: true };
    else {
      const seed = settings.seed === null || settings.seed === undefined ? settings.seed : (settings.seed + attempt - 1) & 0x7fffffff;
      const asked = { ...settings, seed };
      const batched = (await args.cache?.batchReply?.(key, () => batchRequestBody(asked, messages, spec), asked)) ?? null;
      // A batch line's usage was recorded when the batch was ingested (at the batch price): not a call made here.
      const answer = batched ? { ...completedFromBody(asked, batched, spec), usage: null } : await complete(asked, messages, spec, args.env, args.signal, args.onCall);
      raw = answer.content;
      problem = answer.problem;
      usage = answer.usage;
      systemFingerprint = answer.systemFingerprint;
    }
    const parsed = parseAnswer(raw, spec);
    // A stored answer the check now refuses is asked again (it was never a call made or a failure of this run).
    if (usage && (!usage.reused || 'value' in parsed)) await args.onCall?.('value' in parsed ? usage : { ...usage, ok: false, errorKind: problem?.startsWith('refused') ? 'refusal' : 'invalid_answer' });
    if ('value' in parsed) {
      await args.cache?.set(key, raw ?? '');
      return { ok: true, value: parsed.value, raw: raw ?? '', attempts: attempt, messages: [...messages, { role: 'assistant', content: stripThink(raw ?? '') || (raw ?? '') }], systemFingerprint };
    }
    // A refusal, a cut-off or a tool call says more than the parse error it causes.
    lastError = problem ?? parsed.error;
    const again = `That answer was invalid: ${lastError}. Answer again with JSON that matches the schema exactly.`;
    if (args.retryIn === 'conversation') {
      // Never an empty assistant turn (Anthropic's Messages API rejects them): say what came back instead.
      messages = [...messages, { role: 'assistant', content: (raw && raw.trim()) || `(no answer: ${lastError})` }, { role: 'user', content: again }];
    } else {
      messages = withNote(args.messages, again);
    }
  }
  return { ok: false, error: `invalid judge answer after ${args.maxInvalidAnswers + 1} attempts: ${lastError}`, attempts: args.maxInvalidAnswers + 1, messages, systemFingerprint };
}

/** The original request with the reason for the re-ask added to its last user message (roles keep alternating). */
function withNote(messages: ChatMessage[], note: string): ChatMessage[] {
  const last = messages.map((m) => m.role).lastIndexOf('user');
  if (last < 0) return [...messages, { role: 'user', content: note }];
  return messages.map((m, i) => (i === last ? { ...m, content: `${m.content}\n\n(${note})` } : m));
}

/** The parts of a judge endpoint that decide the request body (for `run --dry-run` and `judgeflow providers`). */
export function requestSettings(settings: ModelEndpoint): RequestSettings {
  return {
    model: settings.model,
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    maxTokensParam: settings.maxTokensParam,
    seed: settings.seed,
    responseFormat: settings.responseFormat,
    extraBody: settings.extraBody,
  };
}

/** The request body a judge call would send now, after what this worker learnt about the endpoint. */
export function judgeRequestBody(settings: ModelEndpoint, messages: ChatMessage[], spec: { name: string; jsonSchema: Record<string, unknown> }): Record<string, unknown> {
  return chatRequestBody(profileOf(settings), requestSettings(settings), messages, { name: spec.name, schema: spec.jsonSchema }, droppedParameters(endpointKey(settings)));
}

interface Completed {
  content: string | null;
  /** Why the answer cannot be used, in words, when the reply says so itself (refusal, cut off, filtered, tool call). */
  problem: string | null;
  systemFingerprint: string | null;
  usage: CallUsage;
}

/** How many refused parameters one call may drop before giving up (each drop is one extra request, once per run). */
const MAX_DROPS = 4;

async function complete(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  onCall?: (usage: CallUsage) => void | Promise<void>,
): Promise<Completed> {
  const profile = profileOf(settings);
  const apiKey = (settings.apiKeyEnv && env[settings.apiKeyEnv]) || undefined;
  const key = endpointKey(settings);
  const failed = (started: number, errorKind: string): CallUsage => ({ model: settings.model, promptTokens: null, completionTokens: null, cachedTokens: null, latencyMs: Date.now() - started, ok: false, errorKind });
  const exhausted = quotaExhausted(key);
  if (exhausted) throw exhausted; // out of quota: not asked again (see core/providers/session.ts)
  if (profile.transport === 'anthropic-messages') return completeAnthropic(settings, messages, spec, apiKey, signal, onCall);
  const dropped = droppedParameters(key);
  for (let drops = 0; ; drops++) {
    const body = chatRequestBody(profile, requestSettings(settings), messages, { name: spec.name, schema: spec.jsonSchema }, dropped);
    const started = Date.now();
    let completion: any;
    let headers: Record<string, string>;
    try {
      ({ completion, headers } = await openaiChat({ baseURL: settings.baseURL, apiKey, body, timeoutMs: settings.timeoutMs, signal }));
    } catch (error) {
      // A 400/422 naming a parameter this request sent: left out for the rest of the run, and asked again at once.
      const refusal = drops < MAX_DROPS ? learnRefusedParameter(error, body, dropped) : null;
      if (refusal) {
        // Recorded once per endpoint: the note in llm_calls and the cost table; a concurrent repeat is a plain failed call.
        await onCall?.(failed(started, refusal.learnt ? `dropped:${refusal.parameter}` : 'unsupported_parameter'));
        continue;
      }
      if (error instanceof ProviderHttpError) {
        // Groq's best-effort JSON mode fails the request itself when the model's JSON does not validate
        // (console.groq.com docs, "Structured outputs"): an invalid answer, re-asked like one.
        if (error.status === 400 && providerErrorCodes(error.body).includes('json_validate_failed')) {
          const usage = failed(started, 'invalid_answer');
          return { content: null, problem: `the provider's JSON validation failed (json_validate_failed): ${providerErrorMessage(error.body) ?? error.body}`, systemFingerprint: null, usage };
        }
        if (isQuotaError(error.status, error.body)) markQuotaExhausted(key, error);
      }
      await onCall?.(failed(started, callErrorKind(error)));
      throw error;
    }
    return withSizes(chatCompleted(settings, completion, started, rateLimitHeaders(headers)), messages);
  }
}

/** A Chat Completions reply (live, or a batch output line's `response.body`) read into its answer, problem and usage. */
function chatCompleted(settings: ModelEndpoint, completion: any, started: number, rateLimit?: RateLimitInfo): Completed {
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  const message = choice?.message ?? {};
  const content = contentText(message.content);
  const problem =
    (typeof message.refusal === 'string' && message.refusal && !content ? `refused: ${message.refusal}` : null) ??
    toolCallProblem(content ? null : message) ??
    finishProblem(choice?.finish_reason) ??
    (content === null ? 'the reply has no message content' : null);
  // Reported by askJson once the answer is checked: an invalid answer is a failed call of kind invalid_answer.
  const usage: CallUsage = { model: settings.model, ...usageFrom(completion?.usage), latencyMs: Date.now() - started, ok: true, errorKind: null, ...(rateLimit ? { rateLimit } : {}) };
  return { content, problem, systemFingerprint: typeof completion?.system_fingerprint === 'string' ? completion.system_fingerprint : null, usage };
}

/** What a batch line asks: the body the live call would send now (a Chat Completions body, or Anthropic Messages params). */
export function batchRequestBody(settings: ModelEndpoint, messages: ChatMessage[], spec: { name: string; jsonSchema: Record<string, unknown> }): Record<string, unknown> {
  if (profileOf(settings).transport === 'anthropic-messages') return anthropicRequestBody(anthropicRequestOf(settings, messages, spec));
  return judgeRequestBody(settings, messages, spec);
}

/** A batch line's reply body (a chat completion, or an Anthropic Message), read as the live reply would be. */
function completedFromBody(settings: ModelEndpoint, body: Record<string, unknown>, spec: { name: string }): Completed {
  if (profileOf(settings).transport !== 'anthropic-messages') return chatCompleted(settings, body, Date.now());
  return anthropicCompleted(settings, anthropicReplyOf(body, spec), Date.now());
}

/** The characters a request's messages carry (for the estimate of a call reported without usage). */
export function messageChars(messages: ChatMessage[]): number {
  return messages.reduce((n, m) => n + String(m.content ?? '').length, 0);
}

/** A live call's usage also says how large its request and reply were (core/cost.ts estimates unreported usage from them). */
function withSizes(done: Completed, messages: ChatMessage[]): Completed {
  return { ...done, usage: { ...done.usage, requestChars: messageChars(messages), replyChars: done.content?.length ?? 0 } };
}

/** `provider: anthropic`: the native Messages API (core/providers/anthropicMessages.ts). */
async function completeAnthropic(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
  apiKey: string | undefined,
  signal: AbortSignal | undefined,
  onCall?: (usage: CallUsage) => void | Promise<void>,
): Promise<Completed> {
  const started = Date.now();
  try {
    const answer = await anthropicChat({ ...anthropicRequestOf(settings, messages, spec), baseURL: settings.baseURL, apiKey: apiKey ?? '', timeoutMs: settings.timeoutMs, signal });
    return withSizes(anthropicCompleted(settings, answer, started, answer.rateLimit), messages);
  } catch (error) {
    if (error instanceof ProviderHttpError && isQuotaError(error.status, error.body)) markQuotaExhausted(endpointKey(settings), error);
    await onCall?.({ model: settings.model, promptTokens: null, completionTokens: null, cachedTokens: null, latencyMs: Date.now() - started, ok: false, errorKind: callErrorKind(error) });
    throw error;
  }
}

/** A short failure kind for cost reports (the full error goes to Temporal): quota, rate_limited, http_5xx, http_4xx, timeout, network. */
export function callErrorKind(error: unknown): string {
  if (error instanceof ProviderTimeoutError || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))) return 'timeout';
  if (error instanceof ProviderHttpError) {
    if (isQuotaError(error.status, error.body)) return 'quota';
    return error.status === 429 ? 'rate_limited' : `http_${String(error.status)[0]}xx`;
  }
  if (error instanceof TypeError && /fetch failed/.test(error.message)) return 'network';
  return 'invalid_reply';
}

/** What a judge call asks of the Messages API (system turns lifted out; the schema asked as a forced tool). */
function anthropicRequestOf(settings: ModelEndpoint, messages: ChatMessage[], spec: { name: string; jsonSchema: Record<string, unknown> }): AnthropicRequest {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n') || undefined;
  return {
    model: settings.model,
    system,
    messages: messages.filter((m) => m.role !== 'system'),
    maxTokens: settings.maxTokens ?? 4096,
    temperature: settings.temperature,
    jsonSchema: { name: spec.name, schema: spec.jsonSchema },
    ...(settings.extraBody ? { extraBody: settings.extraBody } : {}),
  };
}

function anthropicCompleted(settings: ModelEndpoint, answer: Pick<AnthropicChatResult, 'content' | 'stopReason' | 'usage'>, started: number, rateLimit?: RateLimitInfo): Completed {
  const { promptTokens, completionTokens, cachedTokens } = answer.usage;
  const usage: CallUsage = { model: settings.model, promptTokens, completionTokens, cachedTokens, latencyMs: Date.now() - started, ok: true, errorKind: null, ...(rateLimit ? { rateLimit } : {}) };
  const problem = answer.stopReason === 'refusal' ? 'refused by the model (stop_reason "refusal")' : finishProblem(answer.stopReason);
  return { content: answer.content, problem: answer.content ? (answer.stopReason === 'max_tokens' ? problem : null) : problem, systemFingerprint: null, usage };
}
