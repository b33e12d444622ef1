/**
 * The simulator's Anthropic Messages API (`POST /v1/messages`), strict about the rules the real API enforces, so the
 * transport and the `anthropic` copilot are tested against what Anthropic rejects, not against a forgiving fake.
 * Reference: https://platform.claude.com/docs/en/api/messages and https://platform.claude.com/docs/en/api/errors.
 *
 * Model names choose faults, as on the chat endpoint: `fault-529:` (overloaded), `fault-429:` (rate limit, retry-after),
 * `fault-500:` (api_error), `fault-credit:` (400, out of credit); a model named `…refusal…` answers `stop_reason: refusal` with no content, `…empty…` an
 * `end_turn` with no content blocks.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerForSchema, judgeHints } from './schemaAnswer';
import { jsonAnswer, writeAnswer, type HttpAnswer } from './http';
import { agentMessagesAnswer, isAgentModel, messagesToolTurnProblem } from './agentModel';
import { defaultCopilotAnswer, receive } from './requests';
import type { SimOptions, SimReply, SimRequestLog } from './types';

type Turn = { role: string; content: unknown };
export type ErrorType =
  | 'invalid_request_error'
  | 'not_found_error'
  | 'authentication_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

/** Per server (keyed by its request log): prefixes written to the simulated prompt cache. */
const promptCaches = new WeakMap<SimRequestLog[], Set<string>>();
const REQUESTS_PER_MINUTE = 1000;
const TOKENS_PER_MINUTE = 400_000;

export async function anthropicMessages(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  options: SimOptions,
  log: SimRequestLog[],
): Promise<void> {
  const { body, entry, requestIndex } = await receive(req, path, options, log);
  if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs).unref()); // a closed server's waiting reply keeps no process alive
  const refused = headerProblem(req, rateLimitHeaders(log));
  writeAnswer(res, refused ?? (await messagesAnswer(body, { entry, requestIndex, options, log })));
}

/**
 * Both headers are required on every request (https://platform.claude.com/docs/en/api/overview, "Authentication"): the
 * live endpoint and the Message Batches endpoints check them alike. Null when both are there.
 */
export function headerProblem(req: IncomingMessage, headers: Record<string, string> = {}): HttpAnswer | null {
  if (!req.headers['x-api-key'])
    return anthropicError(401, 'authentication_error', 'x-api-key header is required', headers);
  if (!req.headers['anthropic-version'])
    return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required', headers);
  return null;
}

/** The answer to one Messages API body once received (undefined: not JSON): the live endpoint and every Message Batches request. */
export async function messagesAnswer(
  body: any,
  ctx: { entry: SimRequestLog; requestIndex: number; options: SimOptions; log: SimRequestLog[] },
): Promise<HttpAnswer> {
  const { entry, requestIndex, options, log } = ctx;
  const limits = rateLimitHeaders(log);
  if (body === undefined)
    return anthropicError(
      400,
      'invalid_request_error',
      'There was an issue with the format or content of your request: the body is not valid JSON.',
      limits,
    );
  const invalid = requestProblem(body);
  if (invalid) return anthropicError(400, 'invalid_request_error', invalid, limits);

  const fault = body.model.match(/^fault-(\d{3}|credit):/)?.[1];
  // Out of credit is a 400, not a 429 (anthropics/claude-code#4684): asking again cannot help.
  if (fault === 'credit')
    return anthropicError(
      400,
      'invalid_request_error',
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      limits,
    );
  if (fault === '529') return anthropicError(529, 'overloaded_error', 'Overloaded', limits);
  if (fault === '500') return anthropicError(500, 'api_error', 'Internal server error', limits);
  if (fault === '429')
    return anthropicError(
      429,
      'rate_limit_error',
      'Number of requests has exceeded your per-minute rate limit (simulated).',
      { ...limits, 'anthropic-ratelimit-requests-remaining': '0', 'retry-after': '1' },
    );

  const scripted = await options.handler?.(body, { requestIndex, log });
  const reply: SimReply = typeof scripted === 'string' ? { content: scripted } : (scripted ?? {});
  if (reply.body !== undefined)
    return {
      status: reply.status ?? 200,
      headers: { 'content-type': 'application/json', ...limits, ...reply.headers },
      body: reply.body,
    };
  if ((reply.status ?? 200) >= 400)
    return anthropicError(
      reply.status!,
      reply.status === 429 ? 'rate_limit_error' : reply.status! >= 500 ? 'api_error' : 'invalid_request_error',
      reply.content ?? `simulated HTTP ${reply.status}`,
      { ...limits, ...reply.headers },
    );

  const { content, stopReason, answer } = answerFor(body, reply.content);
  entry.content = answer;
  const usage = usageFor(body, answer, log);
  entry.usage = {
    prompt_tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens:
      usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.output_tokens,
  };
  const id = `msg_sim_${createHash('sha256')
    .update(JSON.stringify([body.model, body.messages, answer]))
    .digest('hex')
    .slice(0, 24)}`;
  return jsonAnswer(
    200,
    {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    },
    { 'request-id': `req_sim_${requestIndex}`, ...limits, ...reply.headers },
  );
}

/** The first rule of the Messages API a request breaks, in Anthropic's words; null when it keeps them all. */
function requestProblem(body: any): string | null {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  // max_tokens is required (the reference lists it under "required").
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  // The reference: temperature "Ranges from 0.0 to 1.0".
  if (
    body.temperature !== undefined &&
    (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)
  )
    return 'temperature: Input should be less than or equal to 1';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: Field required';
  const turns = body.messages as Turn[];
  for (const [i, turn] of turns.entries()) {
    if (turn?.role === 'system')
      return 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.';
    if (turn?.role !== 'user' && turn?.role !== 'assistant')
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    // Wording of FlowiseAI/Flowise#2006 and coaidev/coai#209 (the API's 400 for two turns of one role in a row).
    if (i > 0 && turns[i - 1].role === turn.role)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${turn.role}" roles in a row`;
    const final = i === turns.length - 1 && turn.role === 'assistant';
    if (Array.isArray(turn.content) && turn.content.some((b: any) => b?.type === 'text' && !b.text))
      return 'messages: text content blocks must be non-empty'; // anthropics/claude-code#59812
    // anthropics/claude-code#6774: "messages.0: all messages must have non-empty content except for the optional final assistant message".
    if (!final && textOf(turn.content).trim() === '' && !(Array.isArray(turn.content) && turn.content.length > 0))
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    if (final && /\s$/.test(textOf(turn.content)))
      return 'messages: final assistant content cannot end with trailing whitespace';
  }
  if (body.tool_choice?.type === 'tool' && !(body.tools ?? []).some((t: any) => t?.name === body.tool_choice.name))
    return `tool_choice: Tool '${body.tool_choice.name}' not found in 'tools'`;
  for (const [i, tool] of ((body.tools ?? []) as any[]).entries())
    if (tool?.input_schema?.type !== 'object') return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
  return messagesToolTurnProblem(turns);
}

/** A forced tool call gets a `tool_use` block whose input fits the tool's schema (a judge); anything else a text answer (a copilot). */
function answerFor(
  body: any,
  scripted: string | undefined,
): { content: unknown[]; stopReason: string; answer: string } {
  const model = body.model.replace(/^fault-[a-z0-9-]+:/, '');
  if (/refusal/i.test(model)) return { content: [], stopReason: 'refusal', answer: '' };
  if (/empty/i.test(model)) return { content: [], stopReason: 'end_turn', answer: '' };
  const messages = [
    ...(body.system ? [{ role: 'system', content: textOf(body.system) }] : []),
    ...(body.messages as Turn[]).map((m) => ({ role: m.role, content: textOf(m.content) })),
  ];
  const forced =
    body.tool_choice?.type === 'tool' ? (body.tools as any[]).find((t) => t.name === body.tool_choice.name) : undefined;
  if (forced) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const input =
      scripted === undefined
        ? answerForSchema(forced.input_schema, JSON.stringify(messages), judgeHints(lastUser))
        : JSON.parse(scripted);
    const toolUse = {
      type: 'tool_use',
      id: `toolu_sim_${createHash('sha256').update(JSON.stringify(input)).digest('hex').slice(0, 20)}`,
      name: forced.name,
      input,
    };
    return { content: [toolUse], stopReason: 'tool_use', answer: JSON.stringify(input) };
  }
  if (scripted === undefined && isAgentModel(model)) return agentMessagesAnswer(body);
  const text = scripted ?? defaultCopilotAnswer(model, messages);
  return { content: [{ type: 'text', text }], stopReason: 'end_turn', answer: text };
}

/**
 * Word counts as tokens. With `cache_control` (top level, or on a block) the system prompt is the cached prefix: written
 * (`cache_creation_input_tokens`) the first time this server sees it, read (`cache_read_input_tokens`) after that; the
 * three input groups are disjoint, as Anthropic reports them (https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
 */
function usageFor(body: any, answer: string, log: SimRequestLog[]) {
  const count = (text: string) => text.split(/\s+/).filter(Boolean).length;
  const system = count(textOf(body.system));
  const rest =
    (body.messages as Turn[]).reduce((n, m) => n + count(textOf(m.content)), 0) +
    (body.tools ? count(JSON.stringify(body.tools)) : 0);
  const cached =
    Boolean(body.cache_control) || JSON.stringify([body.system, body.messages]).includes('"cache_control"');
  let read = 0;
  let created = 0;
  if (cached && system > 0) {
    const cache = promptCaches.get(log) ?? new Set<string>();
    promptCaches.set(log, cache);
    const key = `${body.model}\u0000${textOf(body.system)}`;
    if (cache.has(key)) read = system;
    else ((created = system), cache.add(key));
  }
  return {
    input_tokens: system + rest - read - created,
    output_tokens: count(answer),
    cache_creation_input_tokens: created,
    cache_read_input_tokens: read,
  };
}

/** `anthropic-ratelimit-*` over the last minute of this server's requests; resets are RFC 3339 times (https://platform.claude.com/docs/en/api/rate-limits). */
function rateLimitHeaders(log: SimRequestLog[]): Record<string, string> {
  const now = Date.now();
  const recent = log.filter((r) => r.path === '/v1/messages' && r.at > now - 60_000);
  const tokens = recent.reduce((n, r) => n + (r.usage?.total_tokens ?? 0), 0);
  const reset = new Date((recent[0]?.at ?? now) + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    'anthropic-ratelimit-requests-limit': String(REQUESTS_PER_MINUTE),
    'anthropic-ratelimit-requests-remaining': String(Math.max(0, REQUESTS_PER_MINUTE - recent.length)),
    'anthropic-ratelimit-requests-reset': reset,
    'anthropic-ratelimit-tokens-limit': String(TOKENS_PER_MINUTE),
    'anthropic-ratelimit-tokens-remaining': String(Math.max(0, TOKENS_PER_MINUTE - tokens)),
    'anthropic-ratelimit-tokens-reset': reset,
  };
}

/** Message content: a string or an array of blocks; only text blocks count. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((b) => (b?.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
  return '';
}

/** Anthropic's error shape: `{"type":"error","error":{"type":…,"message":…},"request_id":…}` (https://platform.claude.com/docs/en/api/errors). */
export function anthropicError(
  status: number,
  type: ErrorType,
  message: string,
  headers: Record<string, string> = {},
): HttpAnswer {
  return jsonAnswer(
    status,
    { type: 'error', error: { type, message }, request_id: `req_sim_error_${status}` },
    headers,
  );
}
