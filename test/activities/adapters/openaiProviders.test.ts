import { openaiAdapter } from '../../../activities/adapters/openai';
import { httpAdapter } from '../../../activities/adapters/http';
import { startSimServer, type SimServer } from '../../../sim/server';
import { adapterFailure } from '../../support/adapterError';

/** The `openai` and `http` copilot adapters against the simulator's provider profiles (sim/profiles), over real HTTP. */
let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer();
});
afterAll(() => sim.close());

const query = { id: 'q1', text: 'Should I stake ETH on Lido?' };
const signal = () => AbortSignal.timeout(10_000);
const copilot = (model: string, extra: Record<string, unknown> = {}) =>
  openaiAdapter.create(
    openaiAdapter.configSchema.parse({ name: 'C', type: 'openai', baseURL: sim.url, model, ...extra }),
    { env: {}, seed: 7 },
  );
const sseCopilot = (model: string) =>
  httpAdapter.create(
    httpAdapter.configSchema.parse({
      name: 'S',
      type: 'http',
      url: `${sim.url}/chat/completions`,
      body: { model, stream: true, messages: [{ role: 'user', content: '{{query}}' }] },
      stream: 'sse',
      chunkPath: 'choices[0].delta.content',
    }),
    { env: {} },
  );

test('a <think> block is not the answer: stripped from the text, kept in raw', async () => {
  const answer = await copilot('sim-think').collect({ query, signal: signal() });
  expect(answer.text).not.toMatch(/think|draft/);
  expect(answer.text.length).toBeGreaterThan(20);
  expect(answer.raw).toContain('<think>');
});

test('search citations, search_results and url_citation annotations come with the answer as sources', async () => {
  const answer = await copilot('sim-search').collect({ query, signal: signal() });
  expect(answer.sources).toEqual([
    { url: 'https://example.org/one', title: 'Source one' },
    { id: '2', url: 'https://example.org/two' },
    { url: 'https://example.org/annotated', title: 'Annotated source' },
  ]);
});

test('a copilot endpoint refusing a parameter: learnt from its 400, left out, asked again at once', async () => {
  const before = sim.requests.length;
  const answer = await copilot('sim-gemini-copilot').collect({ query, signal: signal() }); // unknown host: seed sent, refused
  expect(answer.text.length).toBeGreaterThan(20);
  expect(sim.requests.slice(before).map((r) => 'seed' in r.body)).toEqual([true, false]);
  await copilot('sim-gemini-copilot').collect({ query, signal: signal() });
  expect(sim.requests.slice(before).map((r) => 'seed' in r.body)).toEqual([true, false, false]);
});

test('extraBody fields reach the provider as they are', async () => {
  const before = sim.requests.length;
  await copilot('sim-copilot', {
    extraBody: { reasoning_effort: 'low', web_search_options: { search_context_size: 'high' } },
  }).collect({ query, signal: signal() });
  expect(sim.requests[before].body).toMatchObject({
    reasoning_effort: 'low',
    web_search_options: { search_context_size: 'high' },
  });
});

test('a tool call, a cut-off and an empty answer are failures named as what they are', async () => {
  const tool = await adapterFailure(copilot('sim-toolcall').collect({ query, signal: signal() }));
  expect([tool.kind, tool.message]).toEqual(['tool_call', expect.stringContaining('tool call (get_price)')]);
  const cut = await adapterFailure(copilot('sim-truncate').collect({ query, signal: signal() }));
  expect([cut.kind, cut.message]).toEqual(['incomplete', expect.stringContaining('finish_reason "length"')]);
  const empty = await adapterFailure(copilot('sim-empty').collect({ query, signal: signal() }));
  expect([empty.kind, empty.message]).toEqual(['invalid_reply', 'copilot C returned an empty answer']);
});

test("out of quota: kind quota, not retryable, the provider's words; the endpoint is not asked again", async () => {
  const quota = copilot('sim-quota');
  const before = sim.requests.length;
  for (let i = 0; i < 3; i++) {
    const failure = await adapterFailure(quota.collect({ query, signal: signal() }));
    expect([failure.kind, failure.retryable]).toEqual(['quota', false]);
    expect(failure.message).toContain('You exceeded your current quota');
  }
  expect(sim.requests.length - before).toBe(1);
});

test('a reply that sends headers and then stalls fails at the timeout, body included', async () => {
  const started = Date.now();
  const failure = await adapterFailure(copilot('sim-stall').collect({ query, signal: AbortSignal.timeout(800) }));
  expect(failure.kind).toBe('timeout');
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('a JSON copilot answering HTTP 200 with {"error": …} fails as that error, retryable', async () => {
  const json = httpAdapter.create(
    httpAdapter.configSchema.parse({
      name: 'J',
      type: 'http',
      url: `${sim.url}/chat/completions`,
      body: { model: 'sim-openrouter-200error-json', messages: [{ role: 'user', content: '{{query}}' }] },
      answerPath: 'choices[0].message.content',
    }),
    { env: {} },
  );
  const failure = await adapterFailure(json.collect({ query, signal: signal() }));
  expect([failure.kind, failure.retryable, failure.message]).toEqual([
    'http',
    true,
    'copilot J answered HTTP 200 with an error: Provider returned error: upstream model overloaded',
  ]);
  expect((await json.collect({ query, signal: signal() })).text.length).toBeGreaterThan(20);
});

describe('SSE streams that are not complete answers fail with the reason', () => {
  test('cut off: no finish_reason, no [DONE]', async () => {
    const failure = await adapterFailure(sseCopilot('sim-stream-cut').collect({ query, signal: signal() }));
    expect([failure.kind, failure.retryable]).toEqual(['incomplete', true]);
    expect(failure.message).toMatch(/ended before the answer was complete/);
  });
  test('finish_reason length', async () => {
    const failure = await adapterFailure(sseCopilot('sim-stream-length').collect({ query, signal: signal() }));
    expect(failure.message).toMatch(/cut off at the token limit/);
  });
  test('an event: error, and OpenRouter\'s data: {"error"} event', async () => {
    const error = await adapterFailure(sseCopilot('sim-stream-error').collect({ query, signal: signal() }));
    expect(error.message).toMatch(/stream reported an error.*stream interrupted: upstream reset/);
    const openrouter = await adapterFailure(
      sseCopilot('sim-openrouter-200error-sse').collect({ query, signal: signal() }),
    );
    expect([openrouter.kind, openrouter.retryable]).toEqual(['incomplete', true]);
    expect(openrouter.message).toContain('Provider returned error: upstream model overloaded');
  });
  test('a complete stream is still an answer', async () => {
    const answer = await sseCopilot('sim-copilot').collect({ query, signal: signal() });
    expect(answer.text.length).toBeGreaterThan(20);
  });
});
