import {
  anthropicReplyOf,
  anthropicRequestBody,
  type AnthropicChatResult,
  type AnthropicRequest,
} from './providers/anthropicMessages';
import { anthropicMessage, chatCompletion, EndpointPausedError } from './call';
import { contentHash } from '../model/hashing';
import { contentText, extractJson, finishProblem, stripThink, toolCallProblem } from './providers/extract';
import { ProviderHttpError } from './providers/httpError';
import { classifyProviderError, isQuotaError, profileOf } from './providers';
import { chatRequestBody, type RequestSettings } from './providers/request';
import { droppedParameters, endpointKey } from './providers/session';
import { ProviderTimeoutError } from './providers/replyError';
import type {
  AnswerCache,
  CallUsage,
  ChatMessage,
  JsonAnswer,
  JsonAnswerSpec,
  ModelEndpoint,
  RateLimitInfo,
} from './types';
// Re-exported: callers import the request types from the client they use.
export type {
  AnswerCache,
  CallUsage,
  ChatMessage,
  JsonAnswer,
  JsonAnswerSpec,
  ModelEndpoint,
  RateLimitInfo,
} from './types';

/** Read the rate-limit headers of a response; undefined when it sent none. Resets are durations like `1s`, `6m0s`, `20ms`. */
export function rateLimitHeaders(
  source: { get(name: string): string | null } | Record<string, string>,
): RateLimitInfo | undefined {
  const headers =
    typeof source.get === 'function'
      ? (source as { get(name: string): string | null })
      : { get: (name: string) => (source as Record<string, string>)[name] ?? null };
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

export function requestKey(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: unknown },
): string {
  const request = {
    model: settings.model,
    baseURL: settings.baseURL,
    temperature: settings.temperature,
    format: settings.responseFormat ?? 'json_schema',
    messages,
    schema: spec.jsonSchema,
  };
  return contentHash(
    settings.cacheVariant === undefined ? request : { ...request, variant: settings.cacheVariant },
    40,
  );
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
  if (!parsed.success)
    return {
      error: `answer does not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`,
    };
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
  /** Awaited before each request is sent (not for an answer reused or taken from a batch): a paced call's send time. */
  beforeSend?: () => Promise<void>;
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
    if (raw !== null)
      usage = {
        model: settings.model,
        promptTokens: null,
        completionTokens: null,
        cachedTokens: null,
        latencyMs: 0,
        ok: true,
        errorKind: null,
        requestChars: messageChars(messages),
        replyChars: raw.length,
        reused: true,
      };
    else {
      const seed =
        settings.seed === null || settings.seed === undefined
          ? settings.seed
          : (settings.seed + attempt - 1) & 0x7fffffff;
      const asked = { ...settings, seed };
      const batched =
        (await args.cache?.batchReply?.(key, () => batchRequestBody(asked, messages, spec), asked)) ?? null;
      // A batch line's usage was recorded when the batch was ingested (at the batch price): not a call made here.
      if (!batched) await args.beforeSend?.();
      const answer = batched
        ? { ...completedFromBody(asked, batched, spec), usage: null }
        : await complete(asked, messages, spec, args.env, args.signal, args.onCall);
      raw = answer.content;
      problem = answer.problem;
      usage = answer.usage;
      systemFingerprint = answer.systemFingerprint;
    }
    const parsed = parseAnswer(raw, spec);
    // A stored answer the check now refuses is asked again (it was never a call made or a failure of this run).
    if (usage && (!usage.reused || 'value' in parsed))
      await args.onCall?.(
        'value' in parsed
          ? usage
          : { ...usage, ok: false, errorKind: problem?.startsWith('refused') ? 'refusal' : 'invalid_answer' },
      );
    if ('value' in parsed) {
      await args.cache?.set(key, raw ?? '');
      return {
        ok: true,
        value: parsed.value,
        raw: raw ?? '',
        attempts: attempt,
        messages: [...messages, { role: 'assistant', content: stripThink(raw ?? '') || (raw ?? '') }],
        systemFingerprint,
      };
    }
    // A refusal, a cut-off or a tool call says more than the parse error it causes.
    lastError = problem ?? parsed.error;
    const again = `That answer was invalid: ${lastError}. Answer again with JSON that matches the schema exactly.`;
    if (args.retryIn === 'conversation') {
      // Never an empty assistant turn (Anthropic's Messages API rejects them): say what came back instead.
      messages = [
        ...messages,
        { role: 'assistant', content: (raw && raw.trim()) || `(no answer: ${lastError})` },
        { role: 'user', content: again },
      ];
    } else {
      messages = withNote(args.messages, again);
    }
  }
  return {
    ok: false,
    error: `invalid judge answer after ${args.maxInvalidAnswers + 1} attempts: ${lastError}`,
    attempts: args.maxInvalidAnswers + 1,
    messages,
    systemFingerprint,
  };
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
export function judgeRequestBody(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
): Record<string, unknown> {
  return chatRequestBody(
    profileOf(settings),
    requestSettings(settings),
    messages,
    { name: spec.name, schema: spec.jsonSchema },
    droppedParameters(endpointKey(settings)),
  );
}

interface Completed {
  content: string | null;
  /** Why the answer cannot be used, in words, when the reply says so itself (refusal, cut off, filtered, tool call). */
  problem: string | null;
  systemFingerprint: string | null;
  usage: CallUsage;
}

async function complete(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  onCall?: (usage: CallUsage) => void | Promise<void>,
): Promise<Completed> {
  const apiKey = (settings.apiKeyEnv && env[settings.apiKeyEnv]) || undefined;
  const failed = (started: number, errorKind: string): CallUsage => ({
    model: settings.model,
    promptTokens: null,
    completionTokens: null,
    cachedTokens: null,
    latencyMs: Date.now() - started,
    ok: false,
    errorKind,
  });
  if (profileOf(settings).transport === 'anthropic-messages')
    return completeAnthropic(settings, messages, spec, apiKey, signal, onCall);
  const started = Date.now();
  try {
    const reply = await chatCompletion({
      endpoint: settings,
      messages,
      json: { name: spec.name, schema: spec.jsonSchema },
      apiKey,
      signal,
      // Recorded once per endpoint: the note in llm_calls and the cost table; a concurrent repeat is a plain failed call.
      onRefused: ({ parameter, learnt, started }) =>
        onCall?.(failed(started, learnt ? `dropped:${parameter}` : 'unsupported_parameter')),
    });
    return withSizes(
      chatCompleted(settings, reply.completion, reply.started, rateLimitHeaders(reply.headers)),
      messages,
    );
  } catch (error) {
    if (error instanceof EndpointPausedError) throw error; // not asked: no call to record
    // An error a provider's profile reads as a bad answer, not a bad request (Groq's json_validate_failed): re-asked.
    const meaning = error instanceof ProviderHttpError ? classifyProviderError(error.status, error.body) : null;
    if (meaning?.kind === 'invalid_answer')
      return {
        content: null,
        problem: meaning.problem,
        systemFingerprint: null,
        usage: failed(started, 'invalid_answer'),
      };
    await onCall?.(failed(started, callErrorKind(error)));
    throw error;
  }
}

/** A Chat Completions reply (live, or a batch output line's `response.body`) read into its answer, problem and usage. */
function chatCompleted(
  settings: ModelEndpoint,
  completion: any,
  started: number,
  rateLimit?: RateLimitInfo,
): Completed {
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  const message = choice?.message ?? {};
  const content = contentText(message.content);
  const problem =
    (typeof message.refusal === 'string' && message.refusal && !content ? `refused: ${message.refusal}` : null) ??
    toolCallProblem(content ? null : message) ??
    finishProblem(choice?.finish_reason) ??
    (content === null ? 'the reply has no message content' : null);
  // Reported by askJson once the answer is checked: an invalid answer is a failed call of kind invalid_answer.
  const usage: CallUsage = {
    model: settings.model,
    ...usageFrom(completion?.usage),
    latencyMs: Date.now() - started,
    ok: true,
    errorKind: null,
    ...(rateLimit ? { rateLimit } : {}),
  };
  return {
    content,
    problem,
    systemFingerprint: typeof completion?.system_fingerprint === 'string' ? completion.system_fingerprint : null,
    usage,
  };
}

/** What a batch line asks: the body the live call would send now (a Chat Completions body, or Anthropic Messages params). */
export function batchRequestBody(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
): Record<string, unknown> {
  if (profileOf(settings).transport === 'anthropic-messages')
    return anthropicRequestBody(anthropicRequestOf(settings, messages, spec));
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

/** A live call's usage also says how large its request and reply were (core/stats/cost.ts estimates unreported usage from them). */
function withSizes(done: Completed, messages: ChatMessage[]): Completed {
  return {
    ...done,
    usage: { ...done.usage, requestChars: messageChars(messages), replyChars: done.content?.length ?? 0 },
  };
}

/** `provider: anthropic`: the native Messages API (core/llm/providers/anthropicMessages.ts). */
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
    const answer = await anthropicMessage({
      endpoint: settings,
      request: anthropicRequestOf(settings, messages, spec),
      apiKey: apiKey ?? '',
      signal,
    });
    return withSizes(anthropicCompleted(settings, answer, started, answer.rateLimit), messages);
  } catch (error) {
    if (error instanceof EndpointPausedError) throw error; // not asked: no call to record
    await onCall?.({
      model: settings.model,
      promptTokens: null,
      completionTokens: null,
      cachedTokens: null,
      latencyMs: Date.now() - started,
      ok: false,
      errorKind: callErrorKind(error),
    });
    throw error;
  }
}

/** A short failure kind for cost reports (the full error goes to Temporal): quota, rate_limited, http_5xx, http_4xx, timeout, network. */
export function callErrorKind(error: unknown): string {
  if (
    error instanceof ProviderTimeoutError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
  )
    return 'timeout';
  if (error instanceof ProviderHttpError) {
    if (isQuotaError(error.status, error.body)) return 'quota';
    return error.status === 429 ? 'rate_limited' : `http_${String(error.status)[0]}xx`;
  }
  if (error instanceof TypeError && /fetch failed/.test(error.message)) return 'network';
  return 'invalid_reply';
}

/** What a judge call asks of the Messages API (system turns lifted out; the schema asked as a forced tool). */
function anthropicRequestOf(
  settings: ModelEndpoint,
  messages: ChatMessage[],
  spec: { name: string; jsonSchema: Record<string, unknown> },
): AnthropicRequest {
  const system =
    messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n') || undefined;
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

function anthropicCompleted(
  settings: ModelEndpoint,
  answer: Pick<AnthropicChatResult, 'content' | 'stopReason' | 'usage'>,
  started: number,
  rateLimit?: RateLimitInfo,
): Completed {
  const { promptTokens, completionTokens, cachedTokens } = answer.usage;
  const usage: CallUsage = {
    model: settings.model,
    promptTokens,
    completionTokens,
    cachedTokens,
    latencyMs: Date.now() - started,
    ok: true,
    errorKind: null,
    ...(rateLimit ? { rateLimit } : {}),
  };
  const problem =
    answer.stopReason === 'refusal' ? 'refused by the model (stop_reason "refusal")' : finishProblem(answer.stopReason);
  return {
    content: answer.content,
    problem: answer.content ? (answer.stopReason === 'max_tokens' ? problem : null) : problem,
    systemFingerprint: null,
    usage,
  };
}
