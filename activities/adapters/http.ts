import { usageFrom } from '../../core/llm/client';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Query } from '../../core/model/types';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, expandEnv, headersSchema } from './common';
import { httpFailure, snippet, toAdapterError } from './errors';
import { providerErrorMessage } from '../../core/llm/providers/errorBody';
import { finishProblem } from '../../core/llm/providers/extract';
import { replyContext, replyContextShape } from './replyContext';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const jsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonSchema), z.record(z.string(), jsonSchema)]),
);

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z.literal('http').describe('Any JSON HTTP API, plain or streamed, described entirely by config.'),
    url: z
      .string()
      .url()
      .describe(
        'The request URL; {{query}}, {{conversationId}} and {{history}} may appear in it too (URL-encoded), which makes GET APIs usable.',
      ),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH']).default('POST').describe('HTTP method.'),
    headers: headersSchema.describe(
      'Request headers; values may contain ${ENV_VAR}, resolved in the worker so secrets never enter the config or the workflow history (credential headers must).',
    ),
    body: jsonSchema
      .optional()
      .describe(
        'Object template (placeholders {{query}}, {{conversationId}}, {{history}} replaced inside string values) or raw JSON text template (placeholders JSON-escaped).',
      ),
    answerPath: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Where the answer is in a non-streamed JSON reply, e.g. data.answer or choices[0].message.content; required when stream is none.',
      ),
    conversationIdPath: z
      .string()
      .min(1)
      .optional()
      .describe('Where the conversation id is in the reply (or in any streamed event).'),
    stream: z
      .enum(['none', 'sse', 'ndjson'])
      .default('none')
      .describe('How the reply arrives: one JSON body, server-sent events, or newline-delimited JSON.'),
    chunkPath: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Where each streamed event's text chunk is, e.g. choices[0].delta.content; required for ndjson; absent for sse means the event data is plain text.",
      ),
    ...replyContextShape,
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.stream === 'none' && !config.answerPath)
      ctx.addIssue({
        code: 'custom',
        path: ['answerPath'],
        message: 'answerPath is required when stream is "none" (e.g. "data.answer")',
      });
    if (config.stream !== 'none' && config.answerPath)
      ctx.addIssue({
        code: 'custom',
        path: ['answerPath'],
        message: `answerPath applies to stream "none"; a "${config.stream}" stream uses chunkPath`,
      });
    if (config.stream === 'ndjson' && !config.chunkPath)
      ctx.addIssue({
        code: 'custom',
        path: ['chunkPath'],
        message: 'chunkPath is required when stream is "ndjson" (e.g. "delta")',
      });
    for (const key of ['contextPath', 'sourcesPath'] as const)
      if (config.stream !== 'none' && config[key])
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} reads the JSON reply of stream "none"; a "${config.stream}" stream has no single reply to read it from`,
        });
    if (config.stream === 'none' && config.chunkPath)
      ctx.addIssue({
        code: 'custom',
        path: ['chunkPath'],
        message: 'chunkPath applies only to stream "sse" or "ndjson"',
      });
    for (const path of [
      config.answerPath,
      config.conversationIdPath,
      config.chunkPath,
      config.contextPath,
      config.sourcesPath,
    ]) {
      if (path !== undefined) {
        try {
          parsePath(path);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      }
    }
  });

export type HttpCopilotConfig = z.infer<typeof configSchema>;

/** Any JSON API (plain or streamed) playing a copilot, described entirely by config. */
export const httpAdapter: AdapterModule<HttpCopilotConfig> = {
  type: 'http',
  configSchema,
  supportsHistory: true,
  create(config, { env }) {
    let headers: Record<string, string>;
    try {
      headers = Object.fromEntries(
        Object.entries(config.headers).map(([name, value]) => [
          name,
          expandEnv(value, env, `copilot ${config.name} header ${name}`),
        ]),
      );
    } catch (error) {
      throw new AdapterError('config', (error as Error).message);
    }
    const hasHeader = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
    if (config.body !== undefined && !hasHeader('content-type')) headers['content-type'] = 'application/json';
    if (!hasHeader('accept')) headers.accept = config.stream === 'sse' ? 'text/event-stream' : 'application/json';
    const who = `copilot ${config.name}`;

    return {
      async collect({ query, signal }) {
        // A fresh id per attempt, so a retry never continues a half-finished conversation.
        const vars = templateVars(query, randomUUID());
        const url = fillText(config.url, vars, encodeURIComponent);
        const body = config.method === 'GET' || config.body === undefined ? undefined : renderBody(config.body, vars);
        let raw = '';
        try {
          const response = await fetch(url, { method: config.method, headers, body, signal });
          if (!response.ok) {
            raw = await response.text();
            throw httpFailure(who, response.status, raw, response.headers.get('retry-after'));
          }
          if (config.stream === 'none') {
            raw = await response.text();
            const reply = parseJson(raw, who);
            const text = pickText(reply, config.answerPath!);
            // An error in a 200 reply (OpenRouter during generation — openrouter.ai docs, "Errors"): the error it is, retried like a 5xx.
            if (text === undefined && reply && typeof reply === 'object' && 'error' in reply)
              throw new AdapterError(
                'http',
                `${who} answered HTTP ${response.status} with an error: ${snippet(providerErrorMessage(raw) ?? raw)}`,
                { retryable: true, raw, status: 502 },
              );
            if (text === undefined)
              throw new AdapterError(
                'invalid_reply',
                `${who}: the reply has no answer at answerPath "${config.answerPath}" (${describe(reply)})`,
                { raw },
              );
            return {
              text,
              raw,
              conversationId: pickConversationId(reply, config.conversationIdPath) ?? usedConversationId(config, vars),
              ...usageOf(reply),
              ...replyContext(reply, config, getPath),
            };
          }
          const streamed = await readStream(response, config, who, (r) => (raw = r), signal);
          return {
            text: streamed.text,
            raw,
            conversationId: streamed.conversationId ?? usedConversationId(config, vars),
            ...usageOf(streamed),
          };
        } catch (error) {
          throw toAdapterError(error, who, { timeout: { signal, ms: config.timeoutMs }, raw });
        }
      },
    };
  },
};

// ---------- templates ----------

type Vars = Record<'query' | 'conversationId' | 'history', { value: Json; text: string }>;

function templateVars(query: Query, conversationId: string): Vars {
  const history = (query.history ?? []).map((t) => ({ role: t.role, content: t.content }));
  return {
    query: { value: query.text, text: query.text },
    conversationId: { value: conversationId, text: conversationId },
    history: { value: history, text: JSON.stringify(history) },
  };
}

const placeholder = /\{\{\s*(query|conversationId|history)\s*\}\}/g;
const wholePlaceholder = /^\{\{\s*(query|conversationId|history)\s*\}\}$/;

function fillText(template: string, vars: Vars, encode: (s: string) => string): string {
  return template.replace(placeholder, (_, name: keyof Vars) => encode(vars[name].text));
}

/** A string value that is exactly one placeholder becomes that value (history stays a JSON array); otherwise substitute as text. */
function fillJson(template: Json, vars: Vars): Json {
  if (typeof template === 'string') {
    const whole = template.match(wholePlaceholder);
    return whole ? vars[whole[1] as keyof Vars].value : fillText(template, vars, (s) => s);
  }
  if (Array.isArray(template)) return template.map((item) => fillJson(item, vars));
  if (template && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillJson(v, vars)]));
  return template;
}

/**
 * A string body is raw JSON text: `"{{query}}"` (a whole quoted placeholder) becomes the JSON value,
 * a placeholder inside a longer string becomes JSON-escaped text, and a bare `{{history}}` the JSON array.
 */
function renderBody(template: Json, vars: Vars): string {
  if (typeof template !== 'string') return JSON.stringify(fillJson(template, vars));
  return template.replace(
    /("?)\{\{\s*(query|conversationId|history)\s*\}\}("?)/g,
    (_, open: string, name: keyof Vars, close: string) => {
      const { value, text } = vars[name];
      if (open && close) return JSON.stringify(value);
      const insideString = open || close || typeof value === 'string';
      return open + (insideString ? JSON.stringify(text).slice(1, -1) : JSON.stringify(value)) + close;
    },
  );
}

function usedConversationId(config: HttpCopilotConfig, vars: Vars): string | undefined {
  const templates = [config.url, JSON.stringify(config.body ?? null)];
  return templates.some((t) => /\{\{\s*conversationId\s*\}\}/.test(t)) ? vars.conversationId.text : undefined;
}

// ---------- path expressions ----------

/** `data.answer`, `choices[0].message.content`, `items[-1].text`, `a["odd key"]`. */
export function parsePath(path: string): Array<string | number> {
  const segments: Array<string | number> = [];
  const token = /(?:^|\.)([A-Za-z_$][\w$-]*|\d+)|\[(-?\d+)\]|\[(?:"([^"]*)"|'([^']*)')\]/y;
  let at = 0;
  while (at < path.length) {
    token.lastIndex = at;
    const m = path.match(token); // sticky, non-global: one match at token.lastIndex
    if (!m)
      throw new Error(
        `path "${path}" is not understood at "${path.slice(at)}" (use e.g. data.answer or choices[0].message.content)`,
      );
    segments.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (m[3] ?? m[4])!));
    at = token.lastIndex;
  }
  if (!segments.length) throw new Error('path is empty');
  return segments;
}

export function getPath(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of parsePath(path)) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[segment < 0 ? current.length + segment : segment];
    } else {
      if (current === null || typeof current !== 'object' || !Object.prototype.hasOwnProperty.call(current, segment))
        return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** Text at a path; numbers and booleans are stringified, anything else counts as absent. */
function pickText(value: unknown, path: string): string | undefined {
  const picked = getPath(value, path);
  if (typeof picked === 'string') return picked;
  if (typeof picked === 'number' || typeof picked === 'boolean') return String(picked);
  return undefined;
}

function pickConversationId(value: unknown, path: string | undefined): string | undefined {
  return path === undefined ? undefined : pickText(value, path);
}

// ---------- streams ----------

async function readStream(
  response: Response,
  config: HttpCopilotConfig,
  who: string,
  setRaw: (raw: string) => void,
  signal: AbortSignal,
): Promise<{ text: string; conversationId?: string; usage?: unknown }> {
  if (!response.body) throw new AdapterError('invalid_reply', `${who}: the reply has no body to stream`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  let pending = '';
  let eventData: string[] = [];
  let text = '';
  let sawChunk = false;
  let conversationId: string | undefined;
  let usage: unknown;
  let done = false;
  let eventName = '';
  /** Set when events are OpenAI-style chunks (`choices`): such a stream is complete only with `[DONE]` or a finish_reason. */
  let chatChunks = false;
  let finishReason: string | null = null;

  const takeChunk = (data: string): void => {
    if (config.stream === 'sse' && data.trim() === '[DONE]') {
      done = true;
      return;
    }
    // An error part-way (`event: error`, or OpenRouter's `data: {"error": …}` — openrouter.ai docs, "Errors"): the
    // answer so far is not the answer. Retried like a 5xx.
    const errorEvent = eventName === 'error';
    eventName = '';
    if (errorEvent || /^\s*\{\s*"error"\s*:/.test(data)) {
      throw new AdapterError(
        'incomplete',
        `${who}: the stream reported an error before the answer was complete: ${snippet(providerErrorMessage(data) ?? data)}`,
        { retryable: true, raw: raw || data },
      );
    }
    if (config.stream === 'sse' && !config.chunkPath) {
      text += data; // plain-text events
      sawChunk = true;
      return;
    }
    const event = parseJson(data, who, raw);
    conversationId ??= pickConversationId(event, config.conversationIdPath);
    if (event && typeof event === 'object' && !Array.isArray(event) && (event as Record<string, unknown>).usage)
      usage = (event as Record<string, unknown>).usage;
    const choices = (event as { choices?: Array<{ finish_reason?: string | null }> } | null)?.choices;
    if (Array.isArray(choices)) {
      chatChunks = true;
      finishReason = choices[0]?.finish_reason ?? finishReason;
    }
    // Events without a chunk (role headers, usage, finish markers) carry no answer text.
    const chunk = pickText(event, config.chunkPath!);
    if (chunk !== undefined) {
      text += chunk;
      sawChunk = true;
    }
  };

  const takeLine = (line: string) => {
    if (config.stream === 'ndjson') {
      if (line.trim()) takeChunk(line);
      return;
    }
    if (line === '') {
      // A blank line ends an SSE event; its data lines are joined with newlines (per the SSE spec).
      if (eventData.length) takeChunk(eventData.join('\n'));
      eventData = [];
    } else if (line.startsWith('data:')) {
      eventData.push(line.slice(line[5] === ' ' ? 6 : 5));
    } else if (line.startsWith('event:')) {
      eventName = line.slice(6).trim();
    } // comments, `id:` and `retry:` lines carry no answer text
  };

  try {
    while (!done) {
      if (signal.aborted) throw signal.reason;
      const { value, done: ended } = await reader.read();
      const piece = ended ? decoder.decode() : decoder.decode(value, { stream: true });
      raw += piece;
      pending += piece;
      const lines = pending.split(/\r\n|\r|\n/);
      pending = ended ? '' : lines.pop()!;
      for (const line of lines) {
        takeLine(line);
        if (done) break;
      }
      if (ended) {
        takeLine(''); // the stream may end without a final blank line
        break;
      }
    }
  } finally {
    setRaw(raw);
    if (done) await reader.cancel().catch(() => undefined);
  }
  const cut = finishProblem(finishReason);
  if (cut) throw new AdapterError('incomplete', `${who}: ${cut}`, { raw });
  if (chatChunks && !done && !finishReason)
    throw new AdapterError(
      'incomplete',
      `${who}: the stream ended before the answer was complete (no finish_reason and no [DONE])`,
      { retryable: true, raw },
    );
  if (!sawChunk) {
    const where = config.chunkPath ? `at chunkPath "${config.chunkPath}"` : 'as data: events';
    throw new AdapterError('invalid_reply', `${who}: the ${config.stream} stream carried no answer text ${where}`, {
      raw,
    });
  }
  return { text, conversationId, usage };
}

// ---------- errors ----------

function parseJson(text: string, who: string, raw = text): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Often an HTML error page from a proxy; a later attempt may succeed.
    throw new AdapterError('invalid_reply', `${who} sent something that is not JSON: ${snippet(text)}`, {
      retryable: true,
      raw,
    });
  }
}

function describe(reply: unknown): string {
  if (reply && typeof reply === 'object' && !Array.isArray(reply))
    return `top-level keys: ${Object.keys(reply).join(', ') || 'none'}`;
  return `the reply is ${Array.isArray(reply) ? 'an array' : `a ${reply === null ? 'null' : typeof reply}`}`;
}

/** An OpenAI-style `usage` object at the top of a reply (or in a stream's last event), when the API sends one. */
function usageOf(reply: unknown): { usage?: ReturnType<typeof usageFrom> } {
  const usage =
    reply && typeof reply === 'object' && !Array.isArray(reply) ? (reply as Record<string, unknown>).usage : undefined;
  return usage && typeof usage === 'object' ? { usage: usageFrom(usage) } : {};
}
