import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HALLUCINATED_FIGURE } from '../../sim/agentModel';
import type { SimServer } from '../../sim/server';
import { simServerPerTest, simServersForFile } from '../support/sims';

/**
 * The tool-calling copilot models sim-agent and sim-agent-hallucinating, driven as an agent runtime drives them: over
 * the chat and messages endpoints, each tool call made through the SDK's MCP client against the same sim's /mcp.
 */
const sim = simServersForFile({ plain: {} });
const startSim = simServerPerTest();
const base = (server: SimServer) => server.url.replace(/\/v1$/, '');
const ANTHROPIC_HEADERS = {
  'x-api-key': 'sk-ant-test',
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
};

const clients: Client[] = [];
afterAll(() => Promise.all(clients.map((c) => c.close())));
async function mcp(server: SimServer): Promise<Client> {
  const client = new Client({ name: 'agentModel-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base(server)}/mcp`)));
  clients.push(client);
  return client;
}
async function openaiTools(client: Client) {
  return (await client.listTools()).tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
}
async function anthropicTools(client: Client) {
  return (await client.listTools()).tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema,
  }));
}

async function post(
  server: SimServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

interface ToolRun {
  name: string;
  args: Record<string, unknown>;
  text: string;
  isError: boolean;
}

/** A chat-completions agent loop: ask, run every tool call over MCP, send the results back, until an answer (or 6 turns). */
async function chatLoop(
  server: SimServer,
  model: string,
  question: string,
  extra: Record<string, unknown> = {},
  client?: Client,
) {
  const mcpClient = client ?? (await mcp(server));
  const tools = extra.tools ?? (await openaiTools(mcpClient));
  const messages: any[] = [
    { role: 'system', content: 'You are a crypto analyst with data tools.' },
    { role: 'user', content: question },
  ];
  const turns: any[] = [];
  const runs: ToolRun[][] = [];
  for (let i = 0; i < 6; i++) {
    const { status, body } = await post(server, '/chat/completions', { model, messages, tools, ...extra });
    expect(status).toBe(200);
    turns.push(body.choices[0]);
    const message = body.choices[0].message;
    messages.push(message);
    if (!message.tool_calls) break;
    const round: ToolRun[] = [];
    for (const call of message.tool_calls) {
      const args = JSON.parse(call.function.arguments);
      const result: any = await mcpClient.callTool({ name: call.function.name, arguments: args });
      round.push({ name: call.function.name, args, text: result.content[0].text, isError: result.isError === true });
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.content[0].text });
    }
    runs.push(round);
  }
  return { turns, runs, answer: turns.at(-1).message.content as string };
}

/** The same loop on the Anthropic Messages API: tool_use blocks in, tool_result blocks (with is_error) back. */
async function messagesLoop(server: SimServer, model: string, question: string, extra: Record<string, unknown> = {}) {
  const client = await mcp(server);
  const tools = await anthropicTools(client);
  const messages: any[] = [{ role: 'user', content: question }];
  const turns: any[] = [];
  const runs: ToolRun[][] = [];
  for (let i = 0; i < 6; i++) {
    const { status, body } = await post(
      server,
      '/messages',
      { model, max_tokens: 1024, system: 'You are a crypto analyst with data tools.', messages, tools, ...extra },
      ANTHROPIC_HEADERS,
    );
    expect(status).toBe(200);
    turns.push(body);
    messages.push({ role: 'assistant', content: body.content });
    const uses = body.content.filter((b: any) => b.type === 'tool_use');
    if (body.stop_reason !== 'tool_use') break;
    const round: ToolRun[] = [];
    const results: any[] = [];
    for (const use of uses) {
      const result: any = await client.callTool({ name: use.name, arguments: use.input });
      round.push({ name: use.name, args: use.input, text: result.content[0].text, isError: result.isError === true });
      results.push({
        type: 'tool_result',
        tool_use_id: use.id,
        content: result.content,
        ...(result.isError ? { is_error: true } : {}),
      });
    }
    runs.push(round);
    messages.push({ role: 'user', content: results });
  }
  const answer = turns
    .at(-1)
    .content.map((b: any) => b.text ?? '')
    .join('');
  return { turns, runs, answer };
}

const callsOf = (round: ToolRun[]) => round.map((r) => [r.name, r.args]);
const NUMBER = /\d[\d,]*(?:\.\d+)?%?/g;

/** The answer quotes every figure of every successful result and cites its source; it states no number the results lack. */
function expectGrounded(answer: string, runs: ToolRun[][], invented: string[] = []) {
  const results = runs.flat();
  const context = results.map((r) => r.text).join('\n');
  const stray = (answer.match(NUMBER) ?? []).filter((n) => !context.includes(n));
  expect(stray).toEqual(invented);
  for (const run of results.filter((r) => !r.isError)) {
    const fact = JSON.parse(run.text);
    expect(answer).toContain(`(source: ${fact.source})`);
    for (const value of Object.values(fact))
      if (typeof value === 'number') expect(answer).toContain(String(Math.abs(value)));
  }
}

const SOL_QUESTION = 'Is SOL overbought here, and how concentrated are its holders?';

test('chat completions: parallel calls for what the question names, one follow-up, then an answer quoting the tool results with their sources', async () => {
  const server = await startSim();
  const { turns, runs, answer } = await chatLoop(server, 'sim-agent', SOL_QUESTION);
  expect(turns.map((t) => t.finish_reason)).toEqual(['tool_calls', 'tool_calls', 'stop']);
  expect(turns[0].message.content).toBeNull();
  expect(callsOf(runs[0])).toEqual([
    ['get_price', { symbol: 'SOL' }],
    ['get_holder_concentration', { token: 'SOL' }],
  ]);
  expect(callsOf(runs[1])).toEqual([['get_funding_rate', { symbol: 'SOL' }]]);
  const ids = turns.slice(0, 2).flatMap((t) => t.message.tool_calls.map((c: any) => c.id));
  expect(new Set(ids).size).toBe(3);
  expect(ids.every((id: string) => /^call_[0-9a-f]{24}$/.test(id))).toBe(true);
  expectGrounded(answer, runs);
  expect(answer).toContain('SOL trades at 142.87 USD, up 4.12 percent over the last day');
  expect(server.toolCalls.map((c) => [c.tool, c.transport])).toEqual([
    ['get_price', 'mcp-http'],
    ['get_holder_concentration', 'mcp-http'],
    ['get_funding_rate', 'mcp-http'],
  ]);
  // Deterministic: the same conversation, the same turns.
  const again = await chatLoop(server, 'sim-agent', SOL_QUESTION);
  expect(again.turns.map((t) => t.message)).toEqual(turns.map((t) => t.message));
});

test('at most four calls in the first turn, in the order the question names things; a protocol gets its TVL, its token priced next', async () => {
  const { runs } = await chatLoop(
    sim.plain,
    'sim-agent',
    'How do Aave TVL, the BTC and ETH price and Uniswap deposits compare, and what about LINK?',
  );
  expect(callsOf(runs[0])).toEqual([
    ['get_tvl', { protocol: 'Aave' }],
    ['get_price', { symbol: 'BTC' }],
    ['get_price', { symbol: 'ETH' }],
    ['get_tvl', { protocol: 'Uniswap' }],
  ]);
  expect(callsOf(runs[1])).toEqual([['get_price', { symbol: 'AAVE' }]]);
  expect(runs).toHaveLength(2);
});

test('sim-agent-hallucinating makes the same calls and states one figure no tool returned, which the sim grounding judge marks fabricated', async () => {
  const plain = await chatLoop(sim.plain, 'sim-agent', SOL_QUESTION);
  const lying = await chatLoop(sim.plain, 'sim-agent-hallucinating', SOL_QUESTION);
  expect(lying.runs.map(callsOf)).toEqual(plain.runs.map(callsOf));
  expectGrounded(lying.answer, lying.runs, [HALLUCINATED_FIGURE]);
  expect(lying.answer.split('\n').filter((line) => !plain.answer.includes(line))).toEqual([
    `- SOL also saw a ${HALLUCINATED_FIGURE} week-on-week rise in active addresses.`,
  ]);
  const judge = async (answer: string, runs: ToolRun[][]) => {
    const prompt = `<context>\n${runs
      .flat()
      .map((r) => r.text)
      .join('\n')}\n</context>\n<response>\n${answer}\n</response>`;
    const { body } = await post(sim.plain, '/chat/completions', {
      model: 'sim-judge',
      messages: [{ role: 'user', content: prompt }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'grounding_hallucination', schema: { type: 'object' } },
      },
    });
    return JSON.parse(body.choices[0].message.content);
  };
  expect((await judge(plain.answer, plain.runs)).label).toBe('factual');
  const verdict = await judge(lying.answer, lying.runs);
  expect(verdict.label).not.toBe('factual');
  expect(verdict.claims.filter((c: any) => c.status === 'fabricated').map((c: any) => c.text)).toEqual([
    `SOL also saw a ${HALLUCINATED_FIGURE} week-on-week rise in active addresses.`,
  ]);
});

test('no entity the tools cover, or no fitting tool: an answer at once, without tool calls or figures', async () => {
  const none = await chatLoop(sim.plain, 'sim-agent', 'What is a good way to think about market cycles?');
  expect(none.turns).toHaveLength(1);
  expect(none.turns[0].finish_reason).toBe('stop');
  expect(none.answer).not.toMatch(/\d/);
  const client = await mcp(sim.plain);
  const onlyTvl = (await openaiTools(client)).filter((t) => t.function.name === 'get_tvl');
  const unfit = await chatLoop(sim.plain, 'sim-agent', 'What is the BTC price?', { tools: onlyTvl }, client);
  expect(unfit.turns.map((t) => t.finish_reason)).toEqual(['stop']);
  expect(unfit.answer).toContain('I have no tool for the figures this question asks about BTC');
});

test('a failing tool: its result is shown to the model, and the answer names the call without a figure', async () => {
  const server = await startSim({ failTools: { get_price: 'always' } });
  const { runs, answer } = await chatLoop(server, 'sim-agent', SOL_QUESTION);
  expect(runs[0].map((r) => [r.name, r.isError])).toEqual([
    ['get_price', true],
    ['get_holder_concentration', false],
  ]);
  // The failed price asks for no follow-up; the holder result asks for the unlocks.
  expect(callsOf(runs[1])).toEqual([['get_token_unlocks', { token: 'SOL' }]]);
  expect(answer).toContain(
    '- get_price for SOL gave no data (the tool reported an error), so I state no figure for it.',
  );
  expect(answer).not.toContain('142.87');
  expectGrounded(answer, runs);
});

test('parallel_tool_calls false: one call per turn; tool_choice none: the answer now, from the results so far', async () => {
  const serial = await chatLoop(sim.plain, 'sim-agent', SOL_QUESTION, { parallel_tool_calls: false });
  expect(serial.runs.map(callsOf)).toEqual([
    [['get_price', { symbol: 'SOL' }]],
    [['get_holder_concentration', { token: 'SOL' }]],
    [['get_funding_rate', { symbol: 'SOL' }]],
  ]);
  const client = await mcp(sim.plain);
  const tools = await openaiTools(client);
  const { body } = await post(sim.plain, '/chat/completions', {
    model: 'sim-agent',
    messages: [{ role: 'user', content: SOL_QUESTION }],
    tools,
    tool_choice: 'none',
  });
  expect(body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: expect.any(String) } });
  expect(body.choices[0].message.tool_calls).toBeUndefined();
});

test('tools under other names (an MCP server prefix, a config-declared HTTP tool) are called by what they are, with their own argument names', async () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'world__get_holder_concentration',
        description: 'holders',
        parameters: { type: 'object', properties: { token: { type: 'string' } } },
      },
    },
    {
      type: 'function',
      function: {
        name: 'spot',
        description: 'Spot price of an asset in USD',
        parameters: { type: 'object', properties: { asset: { type: 'string' } }, required: ['asset'] },
      },
    },
  ];
  const messages: any[] = [{ role: 'user', content: 'Price and whales of OP?' }];
  const first = (await post(sim.plain, '/chat/completions', { model: 'sim-agent', messages, tools })).body.choices[0]
    .message;
  expect(first.tool_calls.map((c: any) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
    ['spot', { asset: 'OP' }],
    ['world__get_holder_concentration', { token: 'OP' }],
  ]);
  // The HTTP tool's answer comes from the sim's plain endpoint, {data: …} as it is.
  const price = await (await fetch(`${base(sim.plain)}/tools/price?symbol=OP`)).text();
  const holders = await (await fetch(`${base(sim.plain)}/tools/holder-concentration?token=OP`)).text();
  messages.push(
    first,
    { role: 'tool', tool_call_id: first.tool_calls[0].id, content: price },
    { role: 'tool', tool_call_id: first.tool_calls[1].id, content: holders },
  );
  let reply = (await post(sim.plain, '/chat/completions', { model: 'sim-agent', messages, tools })).body.choices[0];
  // No funding or unlock tool offered: no follow-up, the answer.
  expect(reply.finish_reason).toBe('stop');
  expect(reply.message.content).toContain('OP trades at 1.362 USD');
  expect(reply.message.content).toContain("OP's ten largest holders own 67.19 percent of supply");
  reply = (await post(sim.plain, '/chat/completions', { model: 'sim-terse', messages: messages.slice(0, 1), tools }))
    .body.choices[0];
  expect(reply.finish_reason).toBe('stop');
  expect(reply.message.tool_calls).toBeUndefined(); // other sim copilots answer as before, tools or not
});

test("the chat endpoint keeps OpenAI's rule for tool turns: each call answered by a tool message, each tool message answering a call", async () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'get_price', arguments: '{"symbol":"BTC"}' } };
  const unanswered = await post(sim.plain, '/chat/completions', {
    model: 'sim-agent',
    messages: [
      { role: 'user', content: 'BTC?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'user', content: 'and?' },
    ],
  });
  expect(unanswered).toEqual({
    status: 400,
    body: {
      error: {
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
        type: 'invalid_request_error',
        param: 'messages.[1].role',
        code: null,
      },
    },
  });
  const stray = await post(sim.plain, '/chat/completions', {
    model: 'sim-copilot',
    messages: [
      { role: 'user', content: 'BTC?' },
      { role: 'tool', tool_call_id: 'call_9', content: '{}' },
    ],
  });
  expect(stray.status).toBe(400);
  expect(stray.body.error.message).toBe(
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
  );
});

test('streamed, a tool-call turn arrives as OpenAI streams one: id and name first, then the arguments, finish_reason tool_calls', async () => {
  const client = await mcp(sim.plain);
  const body = {
    model: 'sim-agent',
    messages: [{ role: 'user', content: SOL_QUESTION }],
    tools: await openaiTools(client),
  };
  const whole = (await post(sim.plain, '/chat/completions', body)).body.choices[0].message.tool_calls;
  const sse = await (
    await fetch(`${sim.plain.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    })
  ).text();
  const chunks = sse
    .split('\n\n')
    .filter((e) => e.startsWith('data: ') && !e.includes('[DONE]'))
    .map((e) => JSON.parse(e.slice(6)));
  const assembled: any[] = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0].delta.tool_calls ?? []) {
      const slot = (assembled[delta.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (delta.id) slot.id = delta.id;
      if (delta.function?.name) slot.function.name = delta.function.name;
      slot.function.arguments += delta.function?.arguments ?? '';
    }
  }
  expect(assembled).toEqual(whole);
  expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  expect(sse.trimEnd().endsWith('data: [DONE]')).toBe(true);
});

test('messages API: text then tool_use blocks (stop_reason tool_use), tool_result back, then an end_turn answer quoting the results', async () => {
  const server = await startSim({ failTools: { get_holder_concentration: 'always' } });
  const { turns, runs, answer } = await messagesLoop(server, 'sim-agent', SOL_QUESTION);
  expect(turns.map((t) => t.stop_reason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
  expect(turns[0].content.map((b: any) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
  expect(turns[0].content[1]).toEqual({
    type: 'tool_use',
    id: expect.stringMatching(/^toolu_sim_[0-9a-f]{24}$/),
    name: 'get_price',
    input: { symbol: 'SOL' },
  });
  expect(callsOf(runs[0])).toEqual([
    ['get_price', { symbol: 'SOL' }],
    ['get_holder_concentration', { token: 'SOL' }],
  ]);
  expect(callsOf(runs[1])).toEqual([['get_funding_rate', { symbol: 'SOL' }]]);
  expect(answer).toContain('- get_holder_concentration for SOL gave no data (the tool reported an error)');
  expectGrounded(answer, runs);
  expect(turns.every((t) => t.usage.output_tokens > 0)).toBe(true);
});

test('messages API: sim-agent-hallucinating adds its figure; disable_parallel_tool_use gives one tool_use per turn', async () => {
  const lying = await messagesLoop(sim.plain, 'sim-agent-hallucinating', SOL_QUESTION);
  expectGrounded(lying.answer, lying.runs, [HALLUCINATED_FIGURE]);
  const serial = await messagesLoop(sim.plain, 'sim-agent', SOL_QUESTION, {
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  });
  expect(serial.runs.map((r) => r.length)).toEqual([1, 1, 1]);
});

test("the messages endpoint keeps Anthropic's rule: each tool_use answered by a tool_result in the next turn, each tool_result answering one", async () => {
  const use = { type: 'tool_use', id: 'toolu_1', name: 'get_price', input: { symbol: 'BTC' } };
  const tools = [
    {
      name: 'get_price',
      description: 'p',
      input_schema: { type: 'object', properties: { symbol: { type: 'string' } } },
    },
  ];
  const ask = (messages: unknown[]) =>
    post(sim.plain, '/messages', { model: 'sim-agent', max_tokens: 100, tools, messages }, ANTHROPIC_HEADERS);
  const unanswered = await ask([
    { role: 'user', content: 'BTC?' },
    { role: 'assistant', content: [use] },
    { role: 'user', content: 'and?' },
  ]);
  expect(unanswered.status).toBe(400);
  expect(unanswered.body.error).toEqual({
    type: 'invalid_request_error',
    message:
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  });
  const stray = await ask([
    { role: 'user', content: 'BTC?' },
    { role: 'assistant', content: 'Let me check.' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: '{}' }] },
  ]);
  expect(stray.body.error.message).toBe(
    'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  );
});

test('a tool-call turn bills its calls as completion tokens (the request log holds what each reply reported)', async () => {
  const server = await startSim();
  const { turns } = await chatLoop(server, 'sim-agent', SOL_QUESTION);
  const billed = server.requests
    .filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.usage!.completion_tokens);
  expect(billed.slice(0, 2).every((n) => n > 0)).toBe(true);
  expect(billed).toHaveLength(turns.length);
});
