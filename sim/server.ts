/**
 * A local OpenAI-compatible Chat Completions server (node:http, no framework) that plays
 * copilots and judges deterministically, for tests and the offline demo.
 *
 * Order of decisions per chat request: model-prefix faults → rate faults → custom handler →
 * default behaviour (schema answer for judges, analyst answer for copilots).
 */
import { wordCount } from '../core/stats/lengthBias';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicMessages } from './anthropic';
import { seededRandom } from '../core/stats/random';
import { chatPageHtml } from './chatPage';
import { answerForSchema, judgeHints } from './schemaAnswer';
import { createRateLimiter, type RateLimiter } from './rateLimit';
import { simProfileFor } from './profiles';
import { groundedCopilot } from './groundedCopilot';
import { groundingJudgeAnswer, isGroundingSchema } from './groundingJudge';
import { CAB_RANKING_SCHEMA, cabRankingAnswer } from './cabJudge';
import { jsonAnswer, readBody, sendJson, writeAnswer, type HttpAnswer } from './http';
import { createSimBatches, routeBatches, type SimBatches } from './batch/routes';
import { chatToolTurnProblem } from './agentModel';
import { createSimToolWorld, type SimToolWorld } from './world/serve';
import type { SimToolCall } from './world/tools';
import { responsesApi } from './responses';

export { answerForSchema } from './schemaAnswer';
import { defaultCopilotAnswer, errorAnswer, receive, sendError } from './requests';
import {
  SIMULATED_HEADER,
  type ChatContext,
  type SimJudgeProfile,
  type SimOptions,
  type SimReply,
  type SimRequestLog,
} from './types';
// Re-exported: the simulator's users (tests, the CLI) import its types and helpers from the server they start.
export { defaultCopilotAnswer, errorAnswer, receive, sendError } from './requests';
export * from './types';
export interface SimServer {
  url: string /* e.g. http://127.0.0.1:PORT/v1 */;
  port: number;
  requests: SimRequestLog[];
  /** Every tool call the world served (MCP at /mcp, plain HTTP at /tools/…), as GET /_sim/tool-calls lists them. */
  toolCalls: SimToolCall[];
  /**
   * Give a judge model a new character (or none) from the next request on: a judge that starts marking a copilot down
   * part-way through a schedule, for the regression alert tests.
   */
  setJudgeProfile(model: string, profile: SimJudgeProfile | undefined): void;
  close(): Promise<void>;
}

type Message = { role: string; content: string };

/** Content that starts a JSON object but is not valid JSON: what a sloppy judge produces. */
const BAD_JSON_CONTENT = 'Sure! Here is my verdict: {"score": 7, "rationale": "solid answer" (truncated';
/** A body that claims to be JSON but is cut off mid-object, like a dropped proxy connection. */
const MALFORMED_BODY =
  '{"id":"chatcmpl-sim-broken","object":"chat.completion","choices":[{"index":0,"message":{"role":"assist';

export async function startSimServer(given: SimOptions = {}): Promise<SimServer> {
  // Our own copy: setJudgeProfile changes the judges of this server, not the caller's options object.
  const options: SimOptions = { ...given, judges: { ...given.judges } };
  const requests: SimRequestLog[] = [];
  const seenOnce = new Set<string>();
  const limiter = options.rateLimit ? createRateLimiter(options.rateLimit) : undefined;
  const batches = createSimBatches();
  const world = createSimToolWorld(options.failTools, options.toolHeaders);
  const server = createServer((req, res) => {
    route(req, res, options, requests, seenOnce, batches, world, limiter).catch((error: unknown) => {
      if (!res.headersSent)
        sendError(
          res,
          500,
          `sim crashed: ${error instanceof Error ? error.message : String(error)}`,
          'server_error',
          'sim_crash',
        );
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    requests,
    toolCalls: world.calls,
    setJudgeProfile: (model, profile) => {
      const judges = { ...options.judges };
      if (profile) judges[model] = profile;
      else delete judges[model];
      options.judges = judges;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        batches.close();
        void world.close();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets from HTTP clients would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  options: SimOptions,
  log: SimRequestLog[],
  seenOnce: Set<string>,
  batches: SimBatches,
  world: SimToolWorld,
  limiter?: RateLimiter,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const path = url.pathname.replace(/\/+$/, '');
  res.setHeader(SIMULATED_HEADER, '1'); // every answer says it came from the simulator (see activities/simulated.ts)
  if (await routeBatches(req, res, url, path, { options, log, seenOnce, batches, chatAnswer })) return;
  if (await world.route(req, res, url, path)) return;
  if (req.method === 'POST' && path === '/v1/chat/completions')
    return chat(req, res, path, options, log, seenOnce, limiter);
  if (req.method === 'POST' && path === '/v1/messages') return anthropicMessages(req, res, path, options, log);
  if (req.method === 'POST' && path === '/v1/responses') {
    const { body, entry, requestIndex } = await receive(req, path, options, log);
    return responsesApi(
      req,
      res,
      { body, ctx: { entry, requestIndex, options, log, seenOnce, limiter } },
      chatAnswer,
      answeredWithin,
    );
  }
  if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelList());
  if (req.method === 'GET' && path === '/_sim/requests') return sendJson(res, 200, log);
  if (req.method === 'GET' && path === '/chat')
    return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(chatPageHtml());
  if (req.method === 'POST' && path === '/_sim/grounded')
    return groundedCopilot(req, res, (await readBody(req)).toString('utf8'));
  sendError(res, 404, `Unknown request URL: ${req.method} ${path}`, 'invalid_request_error', 'unknown_url');
}

async function chat(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  options: SimOptions,
  log: SimRequestLog[],
  seenOnce: Set<string>,
  limiter?: RateLimiter,
): Promise<void> {
  const { body, entry, requestIndex } = await receive(req, path, options, log);
  const refused = limiter?.admit(Date.now());
  if (refused) {
    entry.rateLimited = true;
    const headers = {
      ...limiter!.headers(Date.now()),
      'retry-after': String(Math.ceil(refused.retryAfterMs / 1000)),
      'retry-after-ms': String(Math.ceil(refused.retryAfterMs)),
    };
    return sendError(
      res,
      429,
      'Rate limit reached for requests (simulated).',
      'requests',
      'rate_limit_exceeded',
      headers,
    );
  }
  const ctx = { entry, requestIndex, options, log, seenOnce, limiter };
  const answer = await answeredWithin(options, limiter, () => chatAnswer(body, ctx), entry);
  res.once('finish', () => (entry.answeredAt = Date.now()));
  writeAnswer(res, answer);
}

/**
 * The answer after the latency. Built while the latency runs, so a call takes its latency, not its latency plus the
 * simulator's own work (a joint judge's answer is milliseconds of CPU on the event loop every endpoint shares; at 12
 * calls at a time that was most of what a call was held beyond its 400 ms, 2026-12-02, docs/bench.md); built after it
 * when a rate limit counts the tokens at the answer or a custom handler may look at the time.
 */
export async function answeredWithin(
  options: SimOptions,
  limiter: RateLimiter | undefined,
  answer: () => Promise<HttpAnswer>,
  entry: SimRequestLog,
): Promise<HttpAnswer> {
  const arrived = performance.now();
  const early = !limiter && !options.handler;
  const built = early ? await timed(answer, entry) : undefined;
  const wait = (options.latencyMs ?? 0) - (performance.now() - arrived);
  if (options.latencyMs && wait > 0) await sleep(wait);
  return built ?? timed(answer, entry);
}

async function timed(answer: () => Promise<HttpAnswer>, entry: SimRequestLog): Promise<HttpAnswer> {
  const working = performance.now();
  try {
    return await answer();
  } finally {
    entry.workMs = (entry.workMs ?? 0) + performance.now() - working;
  }
}

/** What answers one Chat Completions body once it is received: the live endpoint and every OpenAI batch line. */

/** The answer to a Chat Completions body (undefined: the body was not JSON), by the order of decisions at the top of this file. */
export async function chatAnswer(body: any, ctx: ChatContext): Promise<HttpAnswer> {
  const { entry, requestIndex, options, log, seenOnce, limiter } = ctx;
  if (body === undefined)
    return errorAnswer(
      400,
      'We could not parse the JSON body of your request.',
      'invalid_request_error',
      'invalid_json',
    );
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    return errorAnswer(
      400,
      'Request must include a string "model" and a "messages" array.',
      'invalid_request_error',
      'invalid_request',
    );
  }
  const toolTurns = chatToolTurnProblem(body.messages);
  if (toolTurns) return errorAnswer(400, toolTurns.message, 'invalid_request_error', null, undefined, toolTurns.param);
  const rejected = reasoningModelRejection(body);
  if (rejected)
    return errorAnswer(400, rejected.message, 'invalid_request_error', rejected.code, undefined, rejected.param);
  const profile = simProfileFor(baseModel(body.model));
  const profiled = profile?.(body, {
    requestIndex,
    seenBefore: (key) => {
      const hash = sha256(JSON.stringify(key));
      const seen = seenOnce.has(hash);
      seenOnce.add(hash);
      return seen;
    },
    plainAnswer: (b) => defaultContent(b, options.judges?.[baseModel(b.model)], requestIndex),
  });
  const reply =
    faultReply(body, requestIndex, options, seenOnce) ??
    profiled ??
    normalize(await options.handler?.(body, { requestIndex, log })) ??
    {};
  if (limiter) {
    // Tokens count once answered; the headers then say what is left.
    const content =
      reply.content ??
      (reply.body === undefined && (reply.status ?? 200) < 400
        ? defaultContent(body, options.judges?.[baseModel(body.model)], requestIndex)
        : undefined);
    if (content !== undefined && reply.content === undefined) reply.content = content;
    if (content !== undefined) limiter.charge(Date.now(), usage(body, content).total_tokens);
    reply.headers = { ...limiter.headers(Date.now()), ...reply.headers };
  }
  return replyAnswer(body, reply, entry, options.judges?.[baseModel(body.model)], requestIndex);
}

/**
 * Models named like `sim-reasoning…` behave as OpenAI's reasoning models do: only the default temperature (1) is
 * accepted, and max_tokens is refused in favour of max_completion_tokens — with OpenAI's wording, param and code.
 */
function reasoningModelRejection(body: any): { message: string; param: string; code: string } | undefined {
  if (!baseModel(body.model).startsWith('sim-reasoning')) return undefined;
  if (body.temperature !== undefined && body.temperature !== 1)
    return {
      message: `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
      param: 'temperature',
      code: 'unsupported_value',
    };
  if (body.max_tokens !== undefined)
    return {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: 'max_tokens',
      code: 'unsupported_parameter',
    };
  return undefined;
}

/** Per-request faults from the model prefix win over random ones; both are deterministic. */
function faultReply(body: any, requestIndex: number, options: SimOptions, seenOnce: Set<string>): SimReply | undefined {
  const faults = options.faults ?? {};
  const retryAfter = { 'Retry-After': String(faults.retryAfterSeconds ?? 1) };
  const prefix = body.model.match(/^(fault-[a-z0-9-]+):/)?.[1];
  if (prefix === 'fault-429') return errorReply(429, retryAfter);
  if (prefix === 'fault-500') return errorReply(500);
  if (prefix === 'fault-malformed') return { status: 200, body: MALFORMED_BODY };
  if (prefix === 'fault-badjson') return { content: BAD_JSON_CONTENT };
  if (prefix === 'fault-once-429') {
    const key = sha256(JSON.stringify([body.model, body.messages]));
    if (!seenOnce.has(key)) {
      seenOnce.add(key);
      return errorReply(429, retryAfter);
    }
  }
  // One uniform draw per request index, split into bands, so each rate is honoured independently.
  const u = seededRandom(`sim-faults:${faults.seed ?? 0}:${requestIndex}`)();
  const bands: Array<[number | undefined, () => SimReply]> = [
    [faults.rate429, () => errorReply(429, retryAfter)],
    [faults.rate500, () => errorReply(500)],
    [faults.rateMalformed, () => ({ status: 200, body: MALFORMED_BODY })],
  ];
  let edge = 0;
  for (const [rate, make] of bands) {
    edge += rate ?? 0;
    if (u < edge) return make();
  }
  return undefined;
}

function errorReply(status: number, headers?: Record<string, string>): SimReply {
  return {
    status,
    headers,
    content:
      status === 429
        ? 'Rate limit reached (simulated).'
        : 'The server had an error while processing your request (simulated).',
  };
}

function normalize(reply: SimReply | string | undefined): SimReply | undefined {
  return typeof reply === 'string' ? { content: reply } : reply;
}

function replyAnswer(
  body: any,
  reply: SimReply,
  entry: SimRequestLog,
  judge: SimJudgeProfile | undefined,
  requestIndex: number,
): HttpAnswer {
  const status = reply.status ?? 200;
  if (reply.stallMs !== undefined)
    return {
      status,
      headers: { 'content-type': body.stream ? 'text/event-stream' : 'application/json' },
      body: '',
      stallMs: reply.stallMs,
    };
  if (reply.stream !== undefined && body.stream)
    return { status, headers: { 'content-type': 'text/event-stream', ...reply.headers }, body: reply.stream };
  if (reply.body !== undefined) {
    const contentType = body.stream ? 'text/event-stream' : 'application/json';
    const payload = body.stream ? `data: ${reply.body}\n\n` : reply.body;
    return { status, headers: { 'content-type': contentType, ...reply.headers }, body: payload };
  }
  if (status >= 400) {
    const [type, code] =
      status === 429
        ? ['requests', 'rate_limit_exceeded']
        : status >= 500
          ? ['server_error', 'server_error']
          : ['invalid_request_error', null];
    return errorAnswer(status, reply.content ?? `simulated HTTP ${status}`, type as string, code, reply.headers);
  }
  const overridden = reply.message && 'content' in reply.message;
  const content =
    reply.content ?? (overridden ? String(reply.message!.content ?? '') : defaultContent(body, judge, requestIndex));
  entry.content = content;
  // A tool-call turn's output is its calls: counted as completion tokens, as a provider bills them.
  const billed = reply.message?.tool_calls ? `${content} ${JSON.stringify(reply.message.tool_calls)}` : content;
  if (!body.stream || body.stream_options?.include_usage) entry.usage = usage(body, billed);
  if (body.stream)
    return {
      status,
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        ...reply.headers,
      },
      body: streamCompletion(body, content),
    };
  const answer = { ...completion(body, content), usage: usage(body, billed) };
  if (reply.message || reply.finishReason)
    answer.choices[0] = {
      ...answer.choices[0],
      message: { ...answer.choices[0].message, ...reply.message } as never,
      finish_reason: reply.finishReason ?? 'stop',
    };
  return jsonAnswer(status, { ...answer, ...reply.extra }, reply.headers);
}

/** Judges ask for json_schema output; everything else is treated as a copilot question. */
function defaultContent(body: any, judge: SimJudgeProfile | undefined, requestIndex: number): string {
  const messages: Message[] = body.messages.map((m: any) => ({ role: String(m?.role), content: textOf(m?.content) }));
  const format = body.response_format;
  if (format?.type === 'json_schema') {
    if (isGroundingSchema(format.json_schema?.name))
      return JSON.stringify(groundingJudgeAnswer(format.json_schema.name, messages));
    if (format.json_schema?.name === CAB_RANKING_SCHEMA)
      return JSON.stringify(cabRankingAnswer(format.json_schema.schema, messages));
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const hints = {
      ...judgeHints(lastUser),
      ...(judge ? { scoreShift: judgeShift(judge, lastUser, requestIndex) } : {}),
    };
    return JSON.stringify(answerForSchema(format.json_schema?.schema ?? {}, JSON.stringify(messages), hints));
  }
  return defaultCopilotAnswer(baseModel(body.model), messages);
}

/** The points a profiled judge adds to each score of this request: leniency, self-preference bonus, fresh noise. */
function judgeShift(judge: SimJudgeProfile, judgedText: string, requestIndex: number): () => number {
  const rng = seededRandom(`sim-judge:${judge.seed ?? 0}:${requestIndex}`);
  const fixed =
    (judge.leniency ?? 0) + (judge.favour && judgedText.includes(judge.favour.contains) ? judge.favour.bonus : 0);
  // Box–Muller: a standard normal draw from two uniforms.
  const normal = () => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  return () => fixed + (judge.noise ? judge.noise * normal() : 0);
}

function completion(body: any, content: string) {
  const id = `chatcmpl-sim-${sha256(JSON.stringify([body.model, body.messages, content])).slice(0, 24)}`;
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    // Like OpenAI's: identifies the backend configuration that answered (here: the model name).
    system_fingerprint: `fp_sim_${sha256(String(body.model)).slice(0, 10)}`,
    choices: [
      { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' },
    ],
    usage: usage(body, content),
  };
}

/** The SSE body of a streamed completion: one chunk per word, then the finish, the usage when asked for, and [DONE]. */
function streamCompletion(body: any, content: string): string {
  const { id, created, model } = completion(body, content);
  const chunk = (delta: object, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null)];
  // Split before each word that follows whitespace so joining the pieces restores the text exactly.
  for (const word of content.split(/(?<=\s)(?=\S)/)) events.push(chunk({ content: word }, null));
  events.push(chunk({}, 'stop'));
  if (body.stream_options?.include_usage)
    events.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usage(body, content) });
  return `${events.map((data) => `data: ${JSON.stringify(data)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** Rough token counts (words) are enough for cost reports to have non-zero, stable numbers. */
function usage(body: any, content: string) {
  const prompt_tokens =
    promptTokens.get(body.messages) ??
    (body.messages as any[]).reduce((n: number, m) => n + wordCount(textOf(m?.content)), 0);
  promptTokens.set(body.messages, prompt_tokens);
  const completion_tokens = wordCount(content);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/**
 * A request's prompt count, once: an answer reports its usage three times (the log, the completion, the limiter), and
 * counting a 12 KB joint prompt was a third of the simulated judge's time per call (2026-12-02, docs/bench.md).
 */
const promptTokens = new WeakMap<object, number>();

function modelList() {
  const ids = [
    'sim-copilot',
    'sim-terse',
    'sim-thorough',
    'sim-refuser',
    'sim-agent',
    'sim-agent-hallucinating',
    'sim-judge',
  ];
  return {
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'judgeflow-sim' })),
  };
}

/** Model names may carry a fault prefix (`fault-once-429:sim-thorough`); behave as the inner model. */
function baseModel(model: string): string {
  return model.replace(/^fault-[a-z0-9-]+:/, '');
}

/** Chat content may be a string or an array of parts; only text matters to the simulator. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A simulated delay. Unref'd: a reply still waiting out its latency when the server closes must not keep the process alive. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
