import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import {
  anthropicChat,
  EMPTY_TURN_PLACEHOLDER,
  toAnthropicMessages,
} from '../../../../core/llm/providers/anthropicMessages';
import { ProviderHttpError } from '../../../../core/llm/providers/httpError';
import { ProviderReplyError, ProviderTimeoutError } from '../../../../core/llm/providers/replyError';
import type { ChatMessage } from '../../../../core/llm/client';
import { toAdapterError } from '../../../../activities/adapters/errors';
import { startSimServer } from '../../../../sim/server';
import { simServersForFile } from '../../../support/sims';

/**
 * The Messages API transport against the simulator's /v1/messages, which rejects what Anthropic rejects. The slow
 * endpoint answers long after a timed-out call's bound (5 s), which leaves a loaded machine's late timers room.
 */
const sim = simServersForFile({ anthropic: {}, slow: { latencyMs: 30_000 } });
/** The sim's url ends in /v1 (OpenAI style); the transport appends /v1/messages to a host, so both forms must work. */
const host = (url: string) => url.replace(/\/v1$/, '');

const schema = {
  type: 'object',
  properties: { accuracy_score: { type: 'integer', minimum: 1, maximum: 10 }, rationale: { type: 'string' } },
  required: ['accuracy_score', 'rationale'],
  additionalProperties: false,
};
const answerZod = z.object({ accuracy_score: z.number().int().min(1).max(10), rationale: z.string().min(1) }).strict();
const ask = (over: Partial<Parameters<typeof anthropicChat>[0]> = {}) =>
  anthropicChat({
    baseURL: host(sim.anthropic.url),
    model: 'claude-sim',
    apiKey: 'sk-ant-test-key',
    messages: [{ role: 'user', content: 'Score this answer about ETH staking.' }],
    maxTokens: 512,
    timeoutMs: 10_000,
    ...over,
  });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as Error,
  );

test('a schema answer is a forced tool call; its input comes back as the JSON content, with the headers, usage and rate limits Anthropic sends', async () => {
  const answer = await ask({
    system: 'You are a strict judge.',
    jsonSchema: { name: 'lattice_judgment', schema },
    temperature: 0,
  });
  const sent = sim.anthropic.requests.at(-1)!;
  expect(sent.path).toBe('/v1/messages');
  expect([sent.headers['x-api-key'], sent.headers['anthropic-version'], sent.headers['content-type']]).toEqual([
    'sk-ant-test-key',
    '2023-06-01',
    'application/json',
  ]);
  expect(sent.body).toMatchObject({
    model: 'claude-sim',
    max_tokens: 512,
    temperature: 0,
    system: 'You are a strict judge.',
    tool_choice: { type: 'tool', name: 'lattice_judgment' },
  });
  expect(sent.body.tools).toEqual([expect.objectContaining({ name: 'lattice_judgment', input_schema: schema })]);
  expect(answer.stopReason).toBe('tool_use');
  expect(answerZod.parse(JSON.parse(answer.content!))).toEqual(JSON.parse(sent.content!));
  expect(answer.usage).toEqual({
    promptTokens: sent.usage!.prompt_tokens,
    completionTokens: sent.usage!.completion_tokens,
    cachedTokens: 0,
    cacheCreationTokens: 0,
  });
  expect(answer.usage.promptTokens).toBeGreaterThan(0);
  expect(answer.rateLimit).toMatchObject({
    limitRequests: 1000,
    remainingRequests: expect.any(Number),
    remainingTokens: expect.any(Number),
  });
  expect(answer.rateLimit!.remainingRequests).toBeLessThan(1000);
  // Resets are RFC 3339 times; mapped to milliseconds from now (the sim's window is a minute).
  expect(answer.rateLimit!.resetRequestsMs).toBeGreaterThan(0);
  expect(answer.rateLimit!.resetRequestsMs).toBeLessThanOrEqual(60_000);
  // Without a schema: no tools, the text answer.
  const text = await ask({ baseURL: sim.anthropic.url });
  expect(sim.anthropic.requests.at(-1)!.body.tools).toBeUndefined();
  expect([text.stopReason, text.content]).toEqual(['end_turn', sim.anthropic.requests.at(-1)!.content]);
  expect(text.content).toMatch(/ETH/);
});

test("CryptoAnalystBench's shared conversation after a refusal (an empty assistant turn) is sent valid: the sim rejects it raw, accepts it shaped", async () => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'Judge crypto answers.' },
    { role: 'user', content: 'Turn 1: score the answers.' },
    { role: 'assistant', content: '' }, // the judge refused; nothing was answered
    { role: 'user', content: 'Turn 2: rank the answers.' },
  ];
  const raw = await fetch(`${sim.anthropic.url}/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-sim',
      max_tokens: 100,
      system: 'Judge crypto answers.',
      messages: conversation.slice(1),
    }),
  });
  expect(raw.status).toBe(400);
  expect((await raw.json()).error).toEqual({
    type: 'invalid_request_error',
    message: 'messages.1: all messages must have non-empty content except for the optional final assistant message',
  });

  const answer = await ask({ messages: conversation, jsonSchema: { name: 'cab_ranking', schema } });
  expect(answerZod.safeParse(JSON.parse(answer.content!)).success).toBe(true);
  const sent = sim.anthropic.requests.at(-1)!.body;
  expect(sent.system).toBe('Judge crypto answers.');
  expect(sent.messages).toEqual([
    { role: 'user', content: 'Turn 1: score the answers.' },
    { role: 'assistant', content: EMPTY_TURN_PLACEHOLDER },
    { role: 'user', content: 'Turn 2: rank the answers.' },
  ]);
});

test('turns are shaped to the rules: system messages joined into system, consecutive turns merged, a leading assistant turn preceded by a user turn, an empty final assistant turn dropped', () => {
  expect(
    toAnthropicMessages('Base system.', [
      { role: 'system', content: 'Extra rule.' },
      { role: 'assistant', content: 'Earlier answer.' },
      { role: 'user', content: 'First part.' },
      { role: 'user', content: '' },
      { role: 'user', content: 'Second part.' },
      { role: 'system', content: 'Late rule.' },
      { role: 'assistant', content: '' },
    ]),
  ).toEqual({
    system: 'Base system.\n\nExtra rule.\n\nLate rule.',
    messages: [
      { role: 'user', content: EMPTY_TURN_PLACEHOLDER },
      { role: 'assistant', content: 'Earlier answer.' },
      { role: 'user', content: 'First part.\n\nSecond part.' },
    ],
  });
  expect(
    toAnthropicMessages(undefined, [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: 'Prefill ' },
    ]),
  ).toEqual({
    messages: [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: 'Prefill' },
    ],
  });
});

test('a merged conversation the sim accepts: two user turns in a row and a system message are fixed before sending', async () => {
  const answer = await ask({
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What about SOL?' },
      { role: 'user', content: 'And ETH?' },
    ],
  });
  expect(answer.stopReason).toBe('end_turn');
  expect(sim.anthropic.requests.at(-1)!.body.messages).toEqual([
    { role: 'user', content: 'What about SOL?\n\nAnd ETH?' },
  ]);
});

test("HTTP errors throw ProviderHttpError with Anthropic's body: 529 overloaded retries like a 5xx, 429 honours retry-after, out of credit (a 400) and other 400s are final, in Anthropic's words", async () => {
  const overloaded = await failure(ask({ model: 'fault-529:claude-sim' }));
  expect(overloaded).toBeInstanceOf(ProviderHttpError);
  const e529 = overloaded as ProviderHttpError;
  expect(e529.status).toBe(529);
  expect(JSON.parse(e529.body)).toMatchObject({
    type: 'error',
    error: { type: 'overloaded_error', message: 'Overloaded' },
  });
  expect(e529.message).toBe('HTTP 529 overloaded_error: Overloaded');
  const classified529 = toAdapterError(overloaded, 'judge');
  expect([classified529.kind, classified529.retryable, classified529.options.status]).toEqual(['http', true, 529]);
  expect(classified529.message).toMatch(/^judge answered HTTP 529: .*Overloaded/);

  const limited = toAdapterError(await failure(ask({ model: 'fault-429:claude-sim' })), 'judge');
  expect([limited.kind, limited.retryable, limited.options.retryAfterMs]).toEqual(['rate_limited', true, 1000]);
  expect(limited.message).toContain('Number of requests has exceeded your per-minute rate limit');

  const broke = toAdapterError(await failure(ask({ model: 'fault-credit:claude-sim' })), 'judge');
  expect(broke.retryable).toBe(false);
  // Classed quota, so the breaker pauses the run at the first one (not http_4xx, waiting for five).
  expect(broke.kind).toBe('quota');
  expect(broke.message).toContain('Your credit balance is too low to access the Anthropic API');

  const rejected = await failure(ask({ temperature: 1.5 }));
  expect((rejected as ProviderHttpError).status).toBe(400);
  const classified400 = toAdapterError(rejected, 'judge');
  expect([classified400.kind, classified400.retryable]).toEqual(['http', false]);
  expect(classified400.message).toContain('temperature: Input should be less than or equal to 1');
});

test('a refusal comes back as stop_reason refusal with no content; several text blocks are concatenated; a body that is not JSON is a retryable unreadable reply', async () => {
  const refused = await ask({ model: 'claude-sim-refusal', jsonSchema: { name: 'lattice_judgment', schema } });
  expect([refused.stopReason, refused.content]).toEqual(['refusal', null]);
  const blocks = [
    { type: 'text', text: 'Part one. ' },
    { type: 'text', text: 'Part two.' },
  ];
  const server = await startSimServer({
    handler: () => ({
      body: JSON.stringify({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: blocks,
        stop_reason: 'max_tokens',
        usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 5, cache_creation_input_tokens: 2 },
      }),
    }),
  });
  try {
    const answer = await ask({ baseURL: server.url });
    expect(answer).toMatchObject({
      content: 'Part one. Part two.',
      stopReason: 'max_tokens',
      id: 'msg_1',
      usage: { promptTokens: 14, completionTokens: 3, cachedTokens: 5, cacheCreationTokens: 2 },
    });
  } finally {
    await server.close();
  }
  // A 200 whose body is not JSON (a proxy's page) is an unreadable reply: another attempt may help.
  const proxy = await startSimServer({ handler: () => ({ body: '<html>502 Bad Gateway</html>' }) });
  try {
    const unreadable = await failure(ask({ baseURL: proxy.url }));
    expect(unreadable).toBeInstanceOf(ProviderReplyError);
    const classified = toAdapterError(unreadable, 'judge');
    expect([classified.kind, classified.retryable, classified.options.raw]).toEqual([
      'invalid_reply',
      true,
      '<html>502 Bad Gateway</html>',
    ]);
  } finally {
    await proxy.close();
  }
});

test('prompt caching: with cache_control the repeated system prompt is written once, then read; promptTokens counts all three input groups', async () => {
  const system = 'A long, stable rubric for judging crypto copilots, repeated on every call.';
  const first = await ask({ system, extraBody: { cache_control: { type: 'ephemeral' } } });
  const second = await ask({ system, extraBody: { cache_control: { type: 'ephemeral' } } });
  const words = system.split(/\s+/).length;
  expect([first.usage.cacheCreationTokens, first.usage.cachedTokens]).toEqual([words, 0]);
  expect([second.usage.cacheCreationTokens, second.usage.cachedTokens]).toEqual([0, words]);
  expect(second.usage.promptTokens).toBe(first.usage.promptTokens);
  expect(sim.anthropic.requests.at(-1)!.body.cache_control).toEqual({ type: 'ephemeral' });
});

test('the timeout covers the whole call: a slow endpoint fails within timeoutMs as a retryable timeout; the caller aborting stops it too', async () => {
  const started = Date.now();
  const slow = await failure(ask({ baseURL: sim.slow.url, timeoutMs: 300 }));
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(slow).toBeInstanceOf(ProviderTimeoutError);
  const classified = toAdapterError(slow, 'judge');
  expect([classified.kind, classified.retryable]).toEqual(['timeout', true]);
  // Headers at once, then a body that never ends (a stalled proxy): the timeout still ends the call.
  const stalled = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":"msg_stalled","content":['),
  );
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  try {
    const bodyStarted = Date.now();
    const midBody = await failure(
      ask({ baseURL: `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`, timeoutMs: 300 }),
    );
    expect(Date.now() - bodyStarted).toBeLessThan(5_000);
    expect(toAdapterError(midBody, 'judge').kind).toBe('timeout');
  } finally {
    stalled.closeAllConnections();
    stalled.close();
  }
  const caller = new AbortController();
  setTimeout(() => caller.abort(), 100);
  const aborted = await failure(ask({ baseURL: sim.slow.url, timeoutMs: 10_000, signal: caller.signal }));
  expect(aborted.name).toBe('AbortError');
});
