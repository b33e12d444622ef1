import { anthropicAdapter } from '../../../activities/adapters/anthropic';
import { adapterFor, copilotConfigSchema } from '../../../activities/adapters';
import { adapterFailure } from '../../support/adapterError';
import { startSimServer } from '../../../sim/server';
import { simServersForFile } from '../../support/sims';

/** The `anthropic` copilot against the simulator's Messages API. */
const sim = simServersForFile({ anthropic: {} });
const env = { MY_ANTHROPIC_KEY: 'sk-ant-secret-value' };
const copilot = (over: Record<string, unknown> = {}) =>
  anthropicAdapter.create(
    anthropicAdapter.configSchema.parse({
      name: 'Claude',
      type: 'anthropic',
      model: 'claude-sim',
      baseURL: sim.anthropic.url,
      apiKeyEnv: 'MY_ANTHROPIC_KEY',
      ...over,
    }),
    { env },
  );
const query = {
  id: 'q1',
  text: 'And what about the unlock next week?',
  history: [
    { role: 'user' as const, content: 'Is ARB a good buy?' },
    { role: 'assistant' as const, content: 'It depends on the unlock schedule.' },
  ],
};
const collect = (adapter: ReturnType<typeof copilot>) =>
  adapter.collect({ query, signal: AbortSignal.timeout(10_000) });

test('config: registered as type anthropic, with defaults for apiKeyEnv, maxTokens and baseURL; a temperature above 1 is refused where it is written', () => {
  expect(adapterFor('anthropic')).toBe(anthropicAdapter);
  const parsed = copilotConfigSchema.parse({ name: 'C', type: 'anthropic', model: 'claude-sonnet-4-5' }) as Record<
    string,
    unknown
  >;
  expect(parsed).toMatchObject({
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    maxTokens: 1024,
    baseURL: 'https://api.anthropic.com',
    concurrency: 4,
  });
  const bad = anthropicAdapter.configSchema.safeParse({ name: 'C', type: 'anthropic', model: 'm', temperature: 1.5 });
  expect(bad.success).toBe(false);
  expect(bad.error!.issues[0].path).toEqual(['temperature']);
  expect(
    anthropicAdapter.configSchema.safeParse({ name: 'C', type: 'anthropic', model: 'm', apiKey: 'sk-inline' }).success,
  ).toBe(false);
});

test('history turns and the question are sent as alternating messages, the system prompt apart; the answer is the text, with usage, id and rate limits', async () => {
  const answer = await collect(
    copilot({
      system: 'You are a careful crypto analyst.',
      maxTokens: 300,
      temperature: 0.2,
      extraBody: { metadata: { user_id: 'bench' } },
    }),
  );
  const sent = sim.anthropic.requests.at(-1)!;
  expect(sent.headers['x-api-key']).toBe('sk-ant-secret-value');
  expect(sent.body).toMatchObject({
    model: 'claude-sim',
    max_tokens: 300,
    temperature: 0.2,
    system: 'You are a careful crypto analyst.',
    metadata: { user_id: 'bench' },
  });
  expect(sent.body.messages).toEqual([...query.history, { role: 'user', content: query.text }]);
  expect(answer.text).toBe(sent.content);
  expect(answer.text).toMatch(/unlock/);
  expect(answer.conversationId).toMatch(/^msg_sim_/);
  expect(answer.usage).toEqual({
    promptTokens: sent.usage!.prompt_tokens,
    completionTokens: sent.usage!.completion_tokens,
    cachedTokens: 0,
  });
  expect(answer.rateLimit).toMatchObject({ limitRequests: 1000 });
  expect(JSON.parse(answer.raw!).stop_reason).toBe('end_turn');
});

test('a refusal and an empty answer are failures with their reason, never an ok empty answer', async () => {
  const refused = await adapterFailure(collect(copilot({ model: 'claude-sim-refusal' })));
  expect([refused.kind, refused.retryable]).toEqual(['invalid_reply', false]);
  expect(refused.message).toBe('copilot Claude refused to answer (stop_reason: refusal)');
  const empty = await adapterFailure(collect(copilot({ model: 'claude-sim-empty' })));
  expect([empty.kind, empty.message]).toEqual([
    'invalid_reply',
    'copilot Claude returned an empty answer (stop_reason: end_turn)',
  ]);
  expect(JSON.parse(empty.options.raw!).content).toEqual([]);
});

test("HTTP errors in Anthropic's words: 529 overloaded is retried, a 400 is not; an unset key is a config error naming the variable", async () => {
  const overloaded = await adapterFailure(collect(copilot({ model: 'fault-529:claude-sim' })));
  expect([overloaded.kind, overloaded.retryable, overloaded.options.status]).toEqual(['http', true, 529]);
  expect(overloaded.message).toMatch(/HTTP 529: .*Overloaded/);
  const invalid = await adapterFailure(collect(copilot({ extraBody: { temperature: 3 } })));
  expect([invalid.kind, invalid.retryable]).toEqual(['http', false]);
  expect(invalid.message).toContain('temperature: Input should be less than or equal to 1');
  const noKey = await adapterFailure(
    copilot({ apiKeyEnv: 'UNSET_ANTHROPIC_KEY' }).collect({ query, signal: AbortSignal.timeout(5000) }),
  );
  expect([noKey.kind, noKey.message]).toEqual([
    'config',
    "copilot Claude: the environment variable UNSET_ANTHROPIC_KEY (apiKeyEnv) is not set in the worker's environment",
  ]);
  expect(JSON.stringify([overloaded, invalid, noKey].map((e) => [e.message, e.options.raw]))).not.toContain(
    'sk-ant-secret-value',
  );
});

test('an answer cut off at max_tokens, a paused turn and a tool call are failures named by their stop_reason, with the text kept in raw', async () => {
  const reply = (stop_reason: string, content: unknown[]) =>
    JSON.stringify({
      id: 'msg_x',
      type: 'message',
      role: 'assistant',
      content,
      stop_reason,
      usage: { input_tokens: 5, output_tokens: 5 },
    });
  const replies: Record<string, string> = {
    'claude-cut': reply('max_tokens', [{ type: 'text', text: 'ETH looks strong because' }]),
    'claude-paused': reply('pause_turn', [{ type: 'text', text: 'Searching the web for' }]),
    'claude-tool': reply('tool_use', [
      { type: 'tool_use', id: 'toolu_1', name: 'get_price', input: { symbol: 'ETH' } },
    ]),
  };
  const server = await startSimServer({ handler: (body) => ({ body: replies[body.model] }) });
  try {
    const fail = (model: string) =>
      adapterFailure(copilot({ baseURL: server.url, model }).collect({ query, signal: AbortSignal.timeout(5000) }));
    const cut = await fail('claude-cut');
    expect([cut.kind, cut.message]).toEqual([
      'invalid_reply',
      'copilot Claude: the answer was cut off (stop_reason: max_tokens); raise maxTokens',
    ]);
    expect(cut.options.raw).toContain('ETH looks strong because');
    expect((await fail('claude-paused')).message).toContain('stop_reason: pause_turn');
    expect((await fail('claude-tool')).message).toBe(
      'copilot Claude: the model answered with a tool call (get_price) instead of text; judgeflow does not run tools for an anthropic copilot',
    );
  } finally {
    await server.close();
  }
});
