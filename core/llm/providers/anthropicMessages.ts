/**
 * Anthropic's native Messages API (`POST /v1/messages`) over plain fetch: one request, its answer, its usage and
 * rate-limit headers. Used for judges with `provider: anthropic` and by the `anthropic` copilot adapter.
 * Reference: https://platform.claude.com/docs/en/api/messages (Create a Message).
 */
import type { ChatMessage, RateLimitInfo } from '../types';
import { ProviderHttpError } from './httpError';
import { postText } from './post';
import { ProviderReplyError, ProviderTimeoutError } from './replyError';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** The one version header value the Messages API has (https://platform.claude.com/docs/en/api/versioning). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Sent in place of an empty turn. "all messages must have non-empty content except for the optional final assistant
 * message" (400 invalid_request_error, anthropics/claude-code#6774): CryptoAnalystBench's shared judge conversation keeps
 * an empty assistant answer after a refusal, which would otherwise make every later turn of that conversation fail.
 */
export const EMPTY_TURN_PLACEHOLDER = '(this turn was empty: no answer was given)';

export type AnthropicTurn = { role: 'user' | 'assistant'; content: string };

export interface AnthropicUsage {
  /** All input tokens, cached ones included (OpenAI's convention for prompt_tokens, which cost reports use). */
  promptTokens: number | null;
  completionTokens: number | null;
  /** Input tokens read from the prompt cache (`cache_read_input_tokens`). */
  cachedTokens: number | null;
  /** Input tokens written to the prompt cache (`cache_creation_input_tokens`). */
  cacheCreationTokens: number | null;
}

export interface AnthropicChatResult {
  /** Concatenated text blocks, or the forced tool call's `input` as JSON when a schema was asked for; null when none. */
  content: string | null;
  /** end_turn, max_tokens, stop_sequence, tool_use, refusal, … as Anthropic sent it. */
  stopReason: string | null;
  usage: AnthropicUsage;
  rateLimit?: RateLimitInfo;
  /** Names of the tools the model called (`tool_use` blocks). */
  toolCalls: string[];
  /** The message id (`msg_…`), and the whole body as received, for the copilot adapter's raw record. */
  id?: string;
  raw: string;
}

/**
 * Shape a chat for the Messages API: system-role messages go to the top-level `system` ("The Messages API accepts a
 * top-level `system` parameter, not \"system\" as an input message role" — the API's 400 wording), consecutive turns of
 * one role are merged (the reference: "Consecutive user or assistant turns in your request will be combined into a
 * single turn" — done here so what is sent is exactly what the model sees), an empty turn becomes a placeholder
 * (anthropics/claude-code#6774), an empty final assistant turn is dropped (a prefill of nothing), and a conversation
 * that starts with the assistant gets a user turn first (roles alternate starting from user).
 */
export function toAnthropicMessages(
  system: string | undefined,
  messages: ChatMessage[],
): { system?: string; messages: AnthropicTurn[] } {
  const systems = [system ?? '', ...messages.filter((m) => m.role === 'system').map((m) => m.content)].filter(
    (s) => s.trim() !== '',
  );
  const turns: AnthropicTurn[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const last = turns.at(-1);
    if (last?.role === m.role) last.content = [last.content, m.content].filter((c) => c.trim() !== '').join('\n\n');
    else turns.push({ role: m.role, content: m.content });
  }
  if (turns.at(-1)?.role === 'assistant' && turns.at(-1)!.content.trim() === '') turns.pop();
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: EMPTY_TURN_PLACEHOLDER });
  for (const turn of turns) if (turn.content.trim() === '') turn.content = EMPTY_TURN_PLACEHOLDER;
  // "final assistant content cannot end with trailing whitespace" (400 invalid_request_error for a prefill).
  const final = turns.at(-1);
  if (final?.role === 'assistant') final.content = final.content.trimEnd();
  return { ...(systems.length ? { system: systems.join('\n\n') } : {}), messages: turns };
}

/** What one request asks: the model, the chat, the token cap and, for a JSON answer, the schema it must fit. */
export interface AnthropicRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  maxTokens: number;
  temperature?: number | null;
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** Provider fields sent as they are (e.g. `metadata`, `top_k`, `cache_control`); the fields above win. */
  extraBody?: Record<string, unknown>;
  /**
   * Turns sent as they are instead of `messages` (content blocks: an agent's `tool_use` and `tool_result` turns, which
   * plain text turns cannot carry); `system` still goes to the top-level field.
   */
  blockTurns?: Array<{ role: 'user' | 'assistant'; content: unknown }>;
}

/** The request body: `max_tokens` is required by the Messages API; a JSON answer is a forced call of one tool. */
export function anthropicRequestBody(args: AnthropicRequest): Record<string, unknown> {
  const shaped = toAnthropicMessages(args.system, args.messages);
  return {
    ...args.extraBody,
    model: args.model,
    max_tokens: args.maxTokens,
    ...(shaped.system ? { system: shaped.system } : {}),
    messages: args.blockTurns ?? shaped.messages,
    ...(args.temperature === null || args.temperature === undefined ? {} : { temperature: args.temperature }),
    // Structured output by tool use: "tool_choice: {type: \"tool\", name}" forces Claude to call that tool, and the call's
    // `input` follows its `input_schema` (https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use,
    // "Forcing tool use"; https://platform.claude.com/cookbook/tool-use-tool-choice).
    ...(args.jsonSchema
      ? {
          tools: [
            {
              name: args.jsonSchema.name,
              description: `Record the answer as ${args.jsonSchema.name}: call this tool with the answer as its input.`,
              input_schema: args.jsonSchema.schema,
            },
          ],
          tool_choice: { type: 'tool', name: args.jsonSchema.name },
        }
      : {}),
  };
}

/**
 * One Messages API call. HTTP errors throw ProviderHttpError with Anthropic's error body
 * (`{"type":"error","error":{"type":"overloaded_error","message":…}}`, https://platform.claude.com/docs/en/api/errors);
 * the classifier retries 429, 5xx and 529 (overloaded) and honours `retry-after`, which stays in the error's headers.
 * The timeout covers the whole call, the body included (ProviderTimeoutError), with the caller's signal.
 */
export async function anthropicChat(
  args: AnthropicRequest & { baseURL?: string; apiKey: string; timeoutMs: number; signal?: AbortSignal },
): Promise<AnthropicChatResult> {
  const timeout = AbortSignal.timeout(args.timeoutMs);
  const signal = args.signal ? AbortSignal.any([timeout, args.signal]) : timeout;
  let text: string;
  let headers: Record<string, string>;
  let status: number;
  try {
    // Over node:http, as the chat-completions path (core/llm/providers/post.ts: a quarter of fetch's CPU a call);
    // failures are shaped as fetch's, so the classifier reads them unchanged.
    const response = await postText(
      messagesUrl(args.baseURL),
      { 'x-api-key': args.apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
      JSON.stringify(anthropicRequestBody(args)),
      signal,
    );
    headers = response.headers;
    status = response.status;
    text = response.text;
  } catch (error) {
    if (timeout.aborted && !args.signal?.aborted) throw new ProviderTimeoutError(args.timeoutMs);
    throw error;
  }
  if (status < 200 || status >= 300) throw new ProviderHttpError(status, text, headers, errorMessage(status, text));
  let message: any;
  try {
    message = JSON.parse(text);
  } catch {
    throw new ProviderReplyError(
      `the reply is not JSON (HTTP ${status}): ${text.replace(/\s+/g, ' ').slice(0, 200)}`,
      text,
    );
  }
  const rateLimit = anthropicRateLimit(headers);
  return {
    ...anthropicReplyOf(message, args.jsonSchema),
    ...(rateLimit ? { rateLimit } : {}),
    ...(typeof message?.id === 'string' ? { id: message.id } : {}),
    raw: text,
  };
}

/**
 * What a Message says (a live reply, or a Message Batches `succeeded` result's `message`): its text — or, when a schema
 * was asked for (`jsonSchema`, as in the request), the forced tool call's input as JSON — its stop reason, its usage and
 * the tools it called.
 */
export function anthropicReplyOf(
  message: unknown,
  jsonSchema?: { name: string },
): Pick<AnthropicChatResult, 'content' | 'stopReason' | 'usage' | 'toolCalls'> {
  const m = (message && typeof message === 'object' ? message : {}) as Record<string, any>;
  const blocks: any[] = Array.isArray(m.content) ? m.content : [];
  return {
    content: jsonSchema ? toolInput(blocks, jsonSchema.name) : textOf(blocks),
    stopReason: typeof m.stop_reason === 'string' ? m.stop_reason : null,
    usage: anthropicUsage(m.usage),
    toolCalls: blocks.filter((b) => b?.type === 'tool_use').map((b) => String(b.name)),
  };
}

/** `${baseURL}/v1/messages`; a baseURL written with its `/v1` (as OpenAI-style configs are) is accepted too. */
function messagesUrl(baseURL: string | undefined): string {
  return anthropicUrl(baseURL, '/v1/messages');
}

/** `${baseURL}${path}` for a path of the Anthropic API (`/v1/…`), with or without `/v1` at the end of baseURL. */
export function anthropicUrl(baseURL: string | undefined, path: string): string {
  return `${(baseURL || ANTHROPIC_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '')}${path}`;
}

function textOf(blocks: any[]): string | null {
  const texts = blocks.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  return texts.length ? texts.join('') : null;
}

/** The forced tool call's input, as the JSON answer; text blocks are the fallback (a refusal explains itself in text). */
function toolInput(blocks: any[], name: string): string | null {
  const call = blocks.find((b) => b?.type === 'tool_use' && b.name === name);
  return call && call.input !== undefined ? JSON.stringify(call.input) : textOf(blocks);
}

/**
 * `usage`: input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens. Anthropic counts the three
 * input groups separately ("total input tokens = cache_read_input_tokens + cache_creation_input_tokens + input_tokens",
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching), so promptTokens is their sum, as OpenAI's
 * prompt_tokens includes its cached tokens.
 */
export function anthropicUsage(usage: unknown): AnthropicUsage {
  const u = (usage && typeof usage === 'object' ? usage : {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens);
  const created = num(u.cache_creation_input_tokens);
  return {
    promptTokens: input === null ? null : input + (read ?? 0) + (created ?? 0),
    completionTokens: num(u.output_tokens),
    cachedTokens: read,
    cacheCreationTokens: created,
  };
}

/**
 * `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`; resets are RFC 3339 times, not durations
 * (https://platform.claude.com/docs/en/api/rate-limits, "Response headers"). Undefined when none was sent.
 */
export function anthropicRateLimit(headers: Record<string, string>, now = Date.now()): RateLimitInfo | undefined {
  const number = (name: string) => {
    const n = headers[name] === undefined ? NaN : Number(headers[name]);
    return Number.isFinite(n) ? n : undefined;
  };
  const untilMs = (name: string) => {
    const at = headers[name] === undefined ? NaN : Date.parse(headers[name]);
    return Number.isNaN(at) ? undefined : Math.max(0, at - now);
  };
  const info: RateLimitInfo = {
    limitRequests: number('anthropic-ratelimit-requests-limit'),
    remainingRequests: number('anthropic-ratelimit-requests-remaining'),
    resetRequestsMs: untilMs('anthropic-ratelimit-requests-reset'),
    remainingTokens: number('anthropic-ratelimit-tokens-remaining'),
    resetTokensMs: untilMs('anthropic-ratelimit-tokens-reset'),
  };
  const present = Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined)) as RateLimitInfo;
  return Object.keys(present).length ? present : undefined;
}

/** "HTTP 529 overloaded_error: Overloaded" from Anthropic's error body; the body itself when it has another shape. */
function errorMessage(status: number, body: string): string {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const error = parsed?.error;
  if (typeof error?.message === 'string')
    return `HTTP ${status} ${typeof error.type === 'string' ? `${error.type}: ` : ''}${error.message}`;
  return `HTTP ${status}${body ? `: ${body.replace(/\s+/g, ' ').trim().slice(0, 300)}` : ''}`;
}
