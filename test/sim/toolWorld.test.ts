import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FUNDING, HOLDERS, PRICES, TVL, UNLOCKS } from '../../sim/world/fixtures';
import { callWorldTool, parseFailTools, WORLD_TOOL_NAMES } from '../../sim/world/tools';
import { HALLUCINATED_FIGURE } from '../../sim/agentModel';
import type { SimServer } from '../../sim/server';
import { simServerPerTest, simServersForFile } from '../support/sims';

/** The simulated tool world: its facts, and the MCP (Streamable HTTP) and plain HTTP tools that serve them. */
const sim = simServersForFile({ world: {} });
const startSim = simServerPerTest();
const base = (server: SimServer) => server.url.replace(/\/v1$/, '');
const ALL_FACTS = [...PRICES, ...TVL, ...FUNDING, ...UNLOCKS, ...HOLDERS];

async function mcpClient(server: SimServer): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'toolWorld-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base(server)}/mcp`));
  await client.connect(transport);
  return { client, transport };
}
const textOf = (result: any): string => result.content[0].text;

test('every fact names a source under the reserved sim.judgeflow.invalid domain and an ISO time, and no fixture holds the invented figure', () => {
  for (const fact of ALL_FACTS) {
    expect(fact.source).toMatch(/^https:\/\/sim\.judgeflow\.invalid\/[a-z-]+\/[a-z]+$/);
    expect(new Date(fact.asOf).toISOString().replace('.000Z', 'Z')).toBe(fact.asOf);
  }
  expect(new Set(ALL_FACTS.map((f) => f.source)).size).toBe(ALL_FACTS.length);
  expect(JSON.stringify(ALL_FACTS)).not.toContain(HALLUCINATED_FIGURE.replace('%', ''));
  expect(PRICES.map((f) => f.symbol)).toEqual(['BTC', 'ETH', 'SOL', 'AAVE', 'UNI', 'ARB', 'OP', 'LINK']);
  expect(TVL.map((f) => f.protocol)).toEqual(['Aave', 'Uniswap', 'Lido', 'MakerDAO', 'Curve', 'EigenLayer']);
});

test('a world tool answers by ticker, name or alias, and says what it knows when asked for something else', () => {
  expect(callWorldTool('get_price', { symbol: '$eth' })).toEqual({ ok: true, result: PRICES[1] });
  expect(callWorldTool('get_price', { symbol: 'Bitcoin' })).toEqual({ ok: true, result: PRICES[0] });
  expect(callWorldTool('get_tvl', { protocol: 'maker' })).toEqual({ ok: true, result: TVL[3] });
  expect(callWorldTool('get_tvl', { protocol: 'Aave V3' })).toEqual({ ok: true, result: TVL[0] });
  expect(callWorldTool('get_token_unlocks', { token: 'EIGEN' })).toMatchObject({
    ok: true,
    result: { token: 'EIGEN', unlocks: [expect.objectContaining({ amount: 36820000 })] },
  });
  expect(callWorldTool('get_price', { symbol: 'DOGE' })).toEqual({
    ok: false,
    error: expect.stringMatching(/unknown symbol "DOGE".*BTC, ETH/),
  });
  expect(callWorldTool('get_price', {})).toEqual({
    ok: false,
    error: expect.stringContaining('needs a string argument "symbol"'),
  });
  expect(callWorldTool('get_news', { q: 'x' })).toEqual({
    ok: false,
    error: expect.stringContaining('unknown tool "get_news"'),
  });
});

test('failTools from text: a tool name and "always" or a count, or an error saying what is wrong', () => {
  expect(parseFailTools('{"get_price":"always","get_tvl":2}', 'ENV')).toEqual({ get_price: 'always', get_tvl: 2 });
  expect(() => parseFailTools('{get_price}', 'ENV')).toThrow('ENV: not JSON');
  expect(() => parseFailTools('{"get_prices":1}', 'ENV')).toThrow('ENV: unknown tool "get_prices"');
  expect(() => parseFailTools('{"get_price":"sometimes"}', 'ENV')).toThrow(
    'ENV: get_price must be "always" or a whole number',
  );
});

test('MCP over Streamable HTTP (the SDK client): five tools with JSON Schema arguments, facts as JSON text, errors as isError results', async () => {
  const { client } = await mcpClient(sim.world);
  try {
    expect(client.getServerVersion()).toMatchObject({ name: 'judgeflow-sim-world' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...WORLD_TOOL_NAMES]);
    expect(tools.find((t) => t.name === 'get_tvl')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { protocol: { type: 'string' } },
      required: ['protocol'],
    });
    const price = await client.callTool({ name: 'get_price', arguments: { symbol: 'SOL' } });
    expect(price.isError).toBeFalsy();
    expect(JSON.parse(textOf(price))).toEqual(PRICES[2]);
    const unknown = await client.callTool({ name: 'get_funding_rate', arguments: { symbol: 'PEPE' } });
    expect(unknown).toMatchObject({ isError: true });
    expect(textOf(unknown)).toContain('unknown symbol "PEPE"');
  } finally {
    await client.close();
  }
});

test('failTools: a count fails the first calls then answers; "always" never answers; every call is in /_sim/tool-calls', async () => {
  const server = await startSim({ failTools: { get_tvl: 1, get_holder_concentration: 'always' } });
  const { client } = await mcpClient(server);
  try {
    const first = await client.callTool({ name: 'get_tvl', arguments: { protocol: 'Lido' } });
    expect(first.isError).toBe(true);
    expect(textOf(first)).toBe('get_tvl is unavailable (simulated failure, failTools)');
    expect(JSON.parse(textOf(await client.callTool({ name: 'get_tvl', arguments: { protocol: 'Lido' } })))).toEqual(
      TVL[2],
    );
    for (let i = 0; i < 3; i++)
      expect((await client.callTool({ name: 'get_holder_concentration', arguments: { token: 'OP' } })).isError).toBe(
        true,
      );
    const log = await (await fetch(`${base(server)}/_sim/tool-calls`)).json();
    expect(log.map((c: any) => [c.tool, c.args, c.transport, c.ok])).toEqual([
      ['get_tvl', { protocol: 'Lido' }, 'mcp-http', false],
      ['get_tvl', { protocol: 'Lido' }, 'mcp-http', true],
      ...Array(3).fill(['get_holder_concentration', { token: 'OP' }, 'mcp-http', false]),
    ]);
    expect(log).toEqual(server.toolCalls);
    expect(log.every((c: any) => typeof c.at === 'number' && c.at <= Date.now())).toBe(true);
  } finally {
    await client.close();
  }
});

test('MCP sessions as the SDK transport keeps them: no session is a 400, an unknown one a 404, DELETE ends one', async () => {
  const url = `${base(sim.world)}/mcp`;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  expect((await fetch(url, { method: 'POST', headers, body: list })).status).toBe(400);
  expect(
    (await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'no-such-session' }, body: list }))
      .status,
  ).toBe(404);
  expect((await fetch(url, { method: 'POST', headers, body: '{not json' })).status).toBe(400);
  const { client, transport } = await mcpClient(sim.world);
  const session = transport.sessionId!;
  expect(session).toMatch(/^[0-9a-f-]{36}$/);
  await transport.terminateSession();
  expect(
    (
      await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body: list,
      })
    ).status,
  ).toBe(404);
  await client.close();
});

test('plain HTTP tools: GET or POST /tools/<tool> → {data: fact}; 400 without the argument, 404 for an unknown one, 503 under failTools; logged as "http"', async () => {
  const server = await startSim({ failTools: { get_funding_rate: 'always' } });
  const get = (path: string) =>
    fetch(`${base(server)}${path}`).then(async (r) => ({ status: r.status, body: await r.json() }));
  expect(await get('/tools/price?symbol=BTC')).toEqual({ status: 200, body: { data: PRICES[0] } });
  expect(await get('/tools/tvl?protocol=EigenLayer')).toEqual({ status: 200, body: { data: TVL[5] } });
  expect(await get('/tools/holder-concentration?token=ARB')).toEqual({ status: 200, body: { data: HOLDERS[5] } });
  const posted = await fetch(`${base(server)}/tools/token-unlocks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: 'ARB' }),
  });
  expect(await posted.json()).toEqual({ data: UNLOCKS[5] });
  expect(await get('/tools/price')).toEqual({
    status: 400,
    body: { error: { message: expect.stringContaining('/tools/price?symbol=BTC') } },
  });
  expect(await get('/tools/price?symbol=XRP')).toEqual({
    status: 404,
    body: { error: { message: expect.stringContaining('unknown symbol "XRP"') } },
  });
  expect(await get('/tools/funding-rate?symbol=BTC')).toEqual({
    status: 503,
    body: { error: { message: expect.stringContaining('simulated failure') } },
  });
  expect((await fetch(`${base(server)}/tools/news`)).status).toBe(404);
  expect(server.toolCalls.map((c) => [c.tool, c.transport, c.ok])).toEqual([
    ['get_price', 'http', true],
    ['get_tvl', 'http', true],
    ['get_holder_concentration', 'http', true],
    ['get_token_unlocks', 'http', true],
    ['get_price', 'http', false],
    ['get_funding_rate', 'http', false],
  ]);
});

test('toolHeaders: tool requests without the header (or with another value) are a 401; with it, MCP and HTTP tools answer', async () => {
  const server = await startSim({ toolHeaders: { Authorization: 'Bearer sim-tools' } });
  const url = new URL(`${base(server)}/mcp`);
  const refused = new Client({ name: 'toolWorld-test', version: '1.0.0' });
  await expect(
    refused.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer wrong' } } }),
    ),
  ).rejects.toThrow(/missing or wrong Authorization header/);
  const client = new Client({ name: 'toolWorld-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer sim-tools' } } }),
  );
  try {
    expect(JSON.parse(textOf(await client.callTool({ name: 'get_price', arguments: { symbol: 'UNI' } })))).toEqual(
      PRICES[4],
    );
  } finally {
    await client.close();
  }
  const plain = await fetch(`${base(server)}/tools/price?symbol=UNI`);
  expect([plain.status, (await plain.json()).error.message]).toEqual([
    401,
    "missing or wrong Authorization header (the simulator's tools require it)",
  ]);
  expect(
    (await fetch(`${base(server)}/tools/price?symbol=UNI`, { headers: { Authorization: 'Bearer sim-tools' } })).status,
  ).toBe(200);
  expect(server.toolCalls.map((c) => c.transport)).toEqual(['mcp-http', 'http']);
  // The chat endpoints are not tools: they answer without it.
  expect((await fetch(`${server.url}/models`)).status).toBe(200);
});
