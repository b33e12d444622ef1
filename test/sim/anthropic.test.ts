import { startSimServer } from '../../sim/server';
import { simServersForFile } from '../support/sims';

/** The simulator's /v1/messages keeps the Messages API's rules strictly, in Anthropic's words and error shape. */
const sim = simServersForFile({ plain: {} });
const headers = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const valid = { model: 'claude-sim', max_tokens: 100, messages: [{ role: 'user', content: 'Is SOL overbought?' }] };
async function post(body: unknown, sendHeaders: Record<string, string> = headers) {
  const res = await fetch(`${sim.plain.url}/messages`, {
    method: 'POST',
    headers: sendHeaders,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

test.each([
  ['missing max_tokens', { model: 'claude-sim', messages: valid.messages }, 'max_tokens: Field required'],
  [
    'a system role inside messages',
    { ...valid, messages: [{ role: 'system', content: 'Be brief.' }, ...valid.messages] },
    'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
  ],
  [
    'two user turns in a row',
    { ...valid, messages: [...valid.messages, { role: 'user', content: 'And ETH?' }] },
    'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
  ],
  [
    'an empty assistant turn before the last',
    {
      ...valid,
      messages: [...valid.messages, { role: 'assistant', content: '' }, { role: 'user', content: 'Again?' }],
    },
    'messages.1: all messages must have non-empty content except for the optional final assistant message',
  ],
  [
    'a whitespace-only user turn',
    { ...valid, messages: [{ role: 'user', content: '  ' }] },
    'messages.0: all messages must have non-empty content except for the optional final assistant message',
  ],
  [
    'an empty text block',
    { ...valid, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
    'messages: text content blocks must be non-empty',
  ],
  [
    'a prefill ending in whitespace',
    { ...valid, messages: [...valid.messages, { role: 'assistant', content: 'Well ' }] },
    'messages: final assistant content cannot end with trailing whitespace',
  ],
  ['temperature above 1', { ...valid, temperature: 1.2 }, 'temperature: Input should be less than or equal to 1'],
  [
    'tool_choice naming no tool',
    { ...valid, tool_choice: { type: 'tool', name: 'score' } },
    "tool_choice: Tool 'score' not found in 'tools'",
  ],
])('400 invalid_request_error for %s', async (_what, body, message) => {
  const res = await post(body);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    type: 'error',
    error: { type: 'invalid_request_error', message },
    request_id: expect.any(String),
  });
});

test('both headers are required: no x-api-key is a 401 authentication_error, no anthropic-version a 400', async () => {
  const { 'x-api-key': _key, ...noKey } = headers;
  expect(await post(valid, noKey)).toMatchObject({ status: 401, body: { error: { type: 'authentication_error' } } });
  const { 'anthropic-version': _version, ...noVersion } = headers;
  expect(await post(valid, noVersion)).toMatchObject({
    status: 400,
    body: { error: { message: 'anthropic-version: header is required' } },
  });
});

test('an empty final assistant turn is allowed; a copilot gets text, a forced tool call a tool_use block fitting its input_schema', async () => {
  const text = await post({ ...valid, messages: [...valid.messages, { role: 'assistant', content: '' }] });
  expect(text.status).toBe(200);
  expect(text.body).toMatchObject({
    type: 'message',
    role: 'assistant',
    stop_reason: 'end_turn',
    content: [{ type: 'text', text: expect.stringContaining('SOL') }],
  });
  const schema = {
    type: 'object',
    properties: {
      score: { type: 'integer', minimum: 1, maximum: 5 },
      verdict: { type: 'string', enum: ['pass', 'fail'] },
    },
    required: ['score', 'verdict'],
  };
  const tool = await post({
    ...valid,
    tools: [{ name: 'verdict', description: 'd', input_schema: schema }],
    tool_choice: { type: 'tool', name: 'verdict' },
  });
  expect(tool.body.stop_reason).toBe('tool_use');
  expect(tool.body.content).toEqual([
    {
      type: 'tool_use',
      id: expect.stringMatching(/^toolu_/),
      name: 'verdict',
      input: { score: expect.any(Number), verdict: expect.stringMatching(/^(pass|fail)$/) },
    },
  ]);
  expect(tool.body.content[0].input.score).toBeGreaterThanOrEqual(1);
  expect(tool.body.content[0].input.score).toBeLessThanOrEqual(5);
  expect(Object.keys(tool.body.usage).sort()).toEqual([
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
    'input_tokens',
    'output_tokens',
  ]);
  expect(tool.headers.get('anthropic-ratelimit-requests-limit')).toBe('1000');
  expect(Date.parse(tool.headers.get('anthropic-ratelimit-requests-reset')!)).toBeGreaterThan(Date.now() - 1000);
});

test('faults by model name: 529 overloaded_error, 429 rate_limit_error with retry-after, 500 api_error; refusal and empty answers', async () => {
  expect(await post({ ...valid, model: 'fault-529:claude-sim' })).toMatchObject({
    status: 529,
    body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  });
  const limited = await post({ ...valid, model: 'fault-429:claude-sim' });
  expect([
    limited.status,
    limited.body.error.type,
    limited.headers.get('retry-after'),
    limited.headers.get('anthropic-ratelimit-requests-remaining'),
  ]).toEqual([429, 'rate_limit_error', '1', '0']);
  expect(await post({ ...valid, model: 'fault-500:claude-sim' })).toMatchObject({
    status: 500,
    body: { error: { type: 'api_error' } },
  });
  expect((await post({ ...valid, model: 'claude-sim-refusal' })).body).toMatchObject({
    stop_reason: 'refusal',
    content: [],
  });
  expect((await post({ ...valid, model: 'claude-sim-empty' })).body).toMatchObject({
    stop_reason: 'end_turn',
    content: [],
  });
});

test('the plain chat endpoint is unchanged beside it', async () => {
  const server = await startSimServer();
  try {
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-terse',
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'Is SOL overbought?' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].message.content).toMatch(/SOL/);
  } finally {
    await server.close();
  }
});
