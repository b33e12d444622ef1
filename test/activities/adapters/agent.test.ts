import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { agentAdapter, type AgentCopilotConfig } from '../../../activities/adapters/agent';
import { adapterFor } from '../../../activities/adapters';
import { diffWorlds, listWorlds, worldIdOf, worldKey } from '../../../activities/adapters/agent/world';
import { CLAIM_LEASE_MS } from '../../../activities/adapters/agent/toolbox';
import { envNames } from '../../../activities/adapters/common';
import { SqliteStore } from '../../../stores/sqlite';
import { tempDir } from '../../support/harness';
import { adapterFailure } from '../../support/adapterError';
import { startToolModel, type ToolModel } from '../../support/agent/toolModel';
import { startMcpHttp, type McpHttpServer } from '../../support/agent/mcpHttp';

/**
 * The `agent` copilot against a real MCP server (the SDK's McpServer, over stdio as a child process and over Streamable
 * HTTP) and a tool-calling model speaking OpenAI's and Anthropic's wire formats over HTTP.
 */
const SERVER_JS = path.join(__dirname, '../../support/agent/priceServer.js');

let model: ToolModel;
let mcpHttp: McpHttpServer;
const dir = tempDir('jf-agent-');
const store = new SqliteStore(path.join(dir, 'results.db'));
const adapters: Array<{ close?(): Promise<void> }> = [];

beforeAll(async () => {
  model = await startToolModel();
  mcpHttp = await startMcpHttp();
});
afterAll(async () => {
  await Promise.all(adapters.map((a) => a.close?.()));
  await model.close();
  await mcpHttp.close();
  await store.close();
});

const env = { MODEL_KEY: 'sk-model-secret', ANTHROPIC_KEY: 'sk-ant-secret' };
function agent(over: Partial<Record<keyof AgentCopilotConfig, unknown>> = {}) {
  const config = agentAdapter.configSchema.parse({
    name: 'Agent',
    type: 'agent',
    baseURL: `${model.url}/v1`,
    model: 'tool-model',
    apiKeyEnv: 'MODEL_KEY',
    system: 'You are a crypto analyst with tools.',
    tools: { mcp: [{ name: 'prices', url: mcpHttp.url }] },
    ...over,
  });
  const adapter = agentAdapter.create(config, { env });
  adapters.push(adapter);
  return adapter;
}
const query = (text: string, id = 'q1') => ({ id, text });
let itemNo = 0;
const item = (runId: string, copilot = 'Agent') => ({ store, runId, queryId: `q${++itemNo}`, copilot });

test('config: registered as type agent; replay needs a world id, a world id needs replay', () => {
  expect(adapterFor('agent')).toBe(agentAdapter);
  const parsed = agentAdapter.configSchema.parse({
    name: 'A',
    type: 'agent',
    baseURL: 'http://127.0.0.1:1/v1',
    model: 'm',
  });
  expect(parsed.tools).toEqual({ mcp: [], http: [], mode: 'live', onMissing: 'fail' });
  expect(parsed.limits).toMatchObject({ maxSteps: 8, maxToolCalls: 16, maxToolErrors: 3 });
  const noWorld = agentAdapter.configSchema.safeParse({
    name: 'A',
    type: 'agent',
    baseURL: 'http://127.0.0.1:1/v1',
    model: 'm',
    tools: { mode: 'replay' },
  });
  expect(noWorld.error?.issues.map((i) => i.path.join('.'))).toEqual(['tools.world']);
  const stray = agentAdapter.configSchema.safeParse({
    name: 'A',
    type: 'agent',
    baseURL: 'http://127.0.0.1:1/v1',
    model: 'm',
    tools: { world: 'world-0123456789abcdef' },
  });
  expect(stray.error?.issues[0].message).toMatch(/applies to mode replay/);
});

test('OpenAI format over MCP Streamable HTTP: the tools are offered, parallel calls run, results go back as tool messages, the final message is the answer', async () => {
  const before = model.requests.length;
  const calledBefore = mcpHttp.calls.length;
  const answer = await agent().collect({
    query: query('Compare BTC and ETH today'),
    signal: AbortSignal.timeout(20_000),
    item: item('run-live'),
  });
  const sent = model.requests.slice(before);
  expect(sent).toHaveLength(2);
  expect(sent[0].headers.authorization).toBe('Bearer sk-model-secret');
  expect(sent[0].body.tools.map((t: any) => t.function.name)).toEqual(['get_price']);
  expect(sent[0].body.tools[0].function.parameters.properties.symbol).toBeDefined();
  expect(sent[0].body.messages[0]).toEqual({ role: 'system', content: 'You are a crypto analyst with tools.' });
  expect(sent[1].body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual([
    'call_0_BTC',
    'call_1_ETH',
  ]);
  expect(mcpHttp.calls.slice(calledBefore)).toEqual([{ symbol: 'BTC' }, { symbol: 'ETH' }]);
  expect(answer.text).toBe(
    'BTC trades at 97000.5 USD (source: https://prices.test/BTC).\nETH trades at 3400.25 USD (source: https://prices.test/ETH).',
  );
  expect(answer.context).toMatch(/get_price \{"symbol":"BTC"\}:\n.*97000\.5/);
  expect(answer.sources?.map((s) => s.url)).toEqual(['https://prices.test/BTC', 'https://prices.test/ETH']);
  expect(answer.usage).toEqual({ promptTokens: 102 + 105, completionTokens: 40, cachedTokens: 0 });
});

test('Anthropic format over MCP stdio: tool_use blocks are run and answered with tool_result blocks in one user turn', async () => {
  const log = path.join(dir, 'stdio.log');
  const before = model.requests.length;
  const answer = await agent({
    provider: 'anthropic',
    baseURL: model.url,
    apiKeyEnv: 'ANTHROPIC_KEY',
    tools: { mcp: [{ name: 'prices', command: process.execPath, args: [SERVER_JS], env: { PRICE_LOG: log } }] },
  }).collect({ query: query('What is SOL at, and BTC?'), signal: AbortSignal.timeout(20_000), item: item('run-live') });
  const sent = model.requests.slice(before);
  expect(sent.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
  expect(sent[0].headers['x-api-key']).toBe('sk-ant-secret');
  expect(sent[0].body).toMatchObject({
    system: 'You are a crypto analyst with tools.',
    tools: [{ name: 'get_price' }],
  });
  const last = sent[1].body.messages.at(-1);
  expect(last.role).toBe('user');
  expect(last.content.map((b: any) => [b.type, b.tool_use_id])).toEqual([
    ['tool_result', 'toolu_0_SOL'],
    ['tool_result', 'toolu_1_BTC'],
  ]);
  expect(
    fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).args.symbol),
  ).toEqual(['SOL', 'BTC']);
  expect(answer.text).toMatch(/SOL trades at 180\.1 USD.*\n.*BTC trades at 97000\.5/);
});

test('every model turn and tool call is stored; a retried attempt resumes from them and repeats nothing finished', async () => {
  const it = item('run-resume');
  const adapter = agent();
  const first = await adapter.collect({ query: query('BTC and SOL?'), signal: AbortSignal.timeout(20_000), item: it });
  const steps = await store.agentSteps(it.runId, it.queryId, it.copilot);
  expect(steps.map((s) => `${s.step.seq}:${s.step.kind}${s.step.kind === 'tool' ? `:${s.step.tool}` : ''}`)).toEqual([
    '0:model',
    '1:tool:get_price',
    '2:tool:get_price',
    '3:model',
  ]);
  const calls = await store.llmCalls(it.runId);
  expect(calls.map((c) => [c.role, c.name, c.model, c.ok])).toEqual([
    ['copilot', 'Agent', 'tool-model', true],
    ['copilot', 'Agent', 'tool-model', true],
  ]);
  // Another attempt at the same item (the worker died after the last step): answered from the stored steps, no request.
  const requests = model.requests.length;
  const toolCalls = mcpHttp.calls.length;
  const again = await agent().collect({ query: query('BTC and SOL?'), signal: AbortSignal.timeout(20_000), item: it });
  expect(again.text).toBe(first.text);
  expect([model.requests.length, mcpHttp.calls.length]).toEqual([requests, toolCalls]);
  // Died after the first tool call: only the second one and the final turn are asked.
  await store.putAgentStep({ runId: 'run-resume', queryId: 'qx', copilot: 'Agent', step: steps[0].step });
  await store.putAgentStep({ runId: 'run-resume', queryId: 'qx', copilot: 'Agent', step: steps[1].step });
  const resumed = await agent().collect({
    query: query('BTC and SOL?'),
    signal: AbortSignal.timeout(20_000),
    item: { store, runId: 'run-resume', queryId: 'qx', copilot: 'Agent' },
  });
  expect(mcpHttp.calls.slice(toolCalls)).toEqual([{ symbol: 'SOL' }]);
  expect(model.requests.length).toBe(requests + 1);
  expect(resumed.text).toBe(first.text);
});

test("record keeps each call in the run's world; replay answers from it and asks no tool service, not even for the tool list", async () => {
  const recorder = item('run-record');
  const recorded = await agent({ tools: { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'record' } }).collect({
    query: query('ETH and BTC please'),
    signal: AbortSignal.timeout(20_000),
    item: recorder,
  });
  const world = (await listWorlds(store)).find((w) => w.recording === 'run-record')!;
  expect(world.id).toMatch(/^world-[0-9a-f]{16}$/);
  expect(world.calls.map((c) => `${c.tool} ${c.arguments}`).sort()).toEqual([
    '(tools/list) {"server":"prices"}',
    'get_price {"symbol":"BTC"}',
    'get_price {"symbol":"ETH"}',
  ]);
  const toolCalls = mcpHttp.calls.length;
  // Another configuration (Anthropic format, other prompt) on the same world: the same tool results, no request to the server.
  const replayed = await agent({
    provider: 'anthropic',
    baseURL: model.url,
    apiKeyEnv: 'ANTHROPIC_KEY',
    system: 'Be brief.',
    tools: { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'replay', world: world.id },
  }).collect({ query: query('ETH and BTC please'), signal: AbortSignal.timeout(20_000), item: item('run-replay') });
  expect(mcpHttp.calls.length).toBe(toolCalls);
  expect(replayed.context).toBe(recorded.context);
  const replaySteps = (await store.runAgentSteps('run-replay')).map((s) => s.step);
  expect(replaySteps.filter((s) => s.kind === 'tool').map((s) => s.kind === 'tool' && s.origin)).toEqual([
    'world',
    'world',
  ]);
  // A call the world does not hold: the item fails with its reason, and still nothing is asked.
  const missing = await adapterFailure(
    agent({ tools: { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'replay', world: world.id } }).collect({
      query: query('and SOL?'),
      signal: AbortSignal.timeout(20_000),
      item: item('run-replay'),
    }),
  );
  expect([missing.kind, missing.retryable]).toEqual(['world_miss', false]);
  expect(missing.message).toMatch(new RegExp(`world ${world.id} holds no result for get_price \\{"symbol":"SOL"\\}`));
  expect(mcpHttp.calls.length).toBe(toolCalls);
  // onMissing live: asked live, and the run's recording is the replayed world plus the new call: a new world.
  await agent({
    tools: { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'replay', world: world.id, onMissing: 'live' },
  }).collect({ query: query('and SOL?'), signal: AbortSignal.timeout(20_000), item: item('run-grow') });
  expect(mcpHttp.calls.slice(toolCalls)).toEqual([{ symbol: 'SOL' }]);
  const grown = (await listWorlds(store)).find((w) => w.recording === 'run-grow')!;
  expect(grown.id).not.toBe(world.id);
  expect(grown.calls.length).toBe(world.calls.length + 1);
});

test('record: items making the same call at the same moment ask the tool server once, in one worker and across workers', async () => {
  const tools = { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'record' };
  mcpHttp.delayMs = 300;
  try {
    // One copilot's items in one worker share the call in flight.
    const one = agent({ tools });
    const before = mcpHttp.calls.length;
    const [a, b] = await Promise.all(
      ['q-a', 'q-b'].map((id) =>
        one.collect({
          query: query('Where is BTC now?', id),
          signal: AbortSignal.timeout(20_000),
          item: item('run-race'),
        }),
      ),
    );
    expect(mcpHttp.calls.slice(before)).toEqual([{ symbol: 'BTC' }]);
    expect(a.context).toBe(b.context);
    // Two workers (each its own adapter and store connection) claim the call in the store: one asks, one waits for it.
    const other = new SqliteStore(path.join(dir, 'results.db'));
    try {
      const mid = mcpHttp.calls.length;
      const [c, d] = await Promise.all(
        [store, other].map((s, i) =>
          agent({ tools }).collect({
            query: query('And ETH?', `q-w${i}`),
            signal: AbortSignal.timeout(20_000),
            item: { store: s, runId: 'run-race', queryId: `q-w${i}`, copilot: 'Agent' },
          }),
        ),
      );
      expect(mcpHttp.calls.slice(mid)).toEqual([{ symbol: 'ETH' }]);
      expect(c.context).toBe(d.context);
      const origins = (await store.runAgentSteps('run-race'))
        .filter((s) => s.queryId.startsWith('q-w') && s.step.kind === 'tool')
        .map((s) => (s.step.kind === 'tool' ? s.step.origin : null))
        .sort();
      expect(origins).toEqual(['live', 'world']);
    } finally {
      await other.close();
    }
    const world = (await listWorlds(store)).find((w) => w.recording === 'run-race')!;
    expect(world.calls.map((c) => c.arguments).sort()).toEqual([
      '{"server":"prices"}',
      '{"symbol":"BTC"}',
      '{"symbol":"ETH"}',
    ]);
  } finally {
    mcpHttp.delayMs = 0;
  }
});

test('record across workers: a claim held by a live worker is waited for, a released or expired one is taken over', async () => {
  const tools = { mcp: [{ name: 'prices', url: mcpHttp.url }], mode: 'record' };
  const key = worldKey('get_price', { symbol: 'SOL' });
  const solStep = async (runId: string) =>
    (await store.runAgentSteps(runId)).map((s) => s.step).find((s) => s.kind === 'tool')!;
  // Another worker claimed the call a moment ago and records its result 300 ms later: this item asks nothing.
  await store.putWork('world-claims:run-claim-held', `${key}#1`, { token: 'other-worker/1', at: Date.now() });
  const before = mcpHttp.calls.length;
  const theirs = { key, tool: 'get_price', arguments: '{"symbol":"SOL"}', result: '{"symbol":"SOL","price":1}' };
  setTimeout(
    () =>
      void store.putWorldCalls('run-claim-held', [{ ...theirs, isError: false, recordedAt: new Date().toISOString() }]),
    300,
  );
  await agent({ tools }).collect({
    query: query('SOL?'),
    signal: AbortSignal.timeout(20_000),
    item: item('run-claim-held'),
  });
  expect(mcpHttp.calls.length).toBe(before);
  expect(await solStep('run-claim-held')).toMatchObject({ result: theirs.result, origin: 'world' });
  // A claim its asker released (its call failed at the transport), and one older than the lease (its worker died):
  // the next round is this item's, which asks the server itself.
  await store.putWork('world-claims:run-claim-released', `${key}#1`, { token: 'other-worker/2', at: Date.now() });
  await store.putWork('world-claims:run-claim-released', `${key}#1:released`, { at: Date.now() });
  await store.putWork('world-claims:run-claim-stale', `${key}#1`, {
    token: 'dead-worker/1',
    at: Date.now() - CLAIM_LEASE_MS - 1_000,
  });
  for (const runId of ['run-claim-released', 'run-claim-stale']) {
    const mid = mcpHttp.calls.length;
    await agent({ tools }).collect({ query: query('SOL?'), signal: AbortSignal.timeout(20_000), item: item(runId) });
    expect(mcpHttp.calls.slice(mid)).toEqual([{ symbol: 'SOL' }]);
    expect(await solStep(runId)).toMatchObject({ origin: 'live' });
    expect(await store.getWork(`world-claims:${runId}`, `${key}#2`)).toMatchObject({ token: expect.any(String) });
  }
});

test('tool errors go back to the model as results; a tool that keeps failing fails the item (kind tool) for the breaker', async () => {
  const it = item('run-errors');
  const answer = await agent().collect({
    query: query('What about DOGE?'),
    signal: AbortSignal.timeout(20_000),
    item: it,
  });
  const tool = (await store.agentSteps(it.runId, it.queryId, it.copilot))
    .map((s) => s.step)
    .find((s) => s.kind === 'tool')!;
  expect(tool).toMatchObject({ tool: 'get_price', isError: true, result: 'unknown symbol DOGE' });
  expect(answer.text).toMatch(/unknown symbol DOGE/);
  const failing = await adapterFailure(
    agent({ limits: { maxToolErrors: 2 } }).collect({
      query: query('DOGE, PEPE and WIF?'),
      signal: AbortSignal.timeout(20_000),
      item: item('run-errors'),
    }),
  );
  expect([failing.kind, failing.retryable]).toEqual(['tool', false]);
  expect(failing.message).toMatch(
    /tool get_price keeps failing \(2 error results in a row, limits\.maxToolErrors\): unknown symbol/,
  );
});

test('limits: calls past maxToolCalls are not run and the next turn must answer; the last allowed step is asked with tool_choice none', async () => {
  const before = model.requests.length;
  const toolCalls = mcpHttp.calls.length;
  const it = item('run-limits');
  const answer = await agent({ limits: { maxToolCalls: 1 } }).collect({
    query: query('BTC, ETH and SOL'),
    signal: AbortSignal.timeout(20_000),
    item: it,
  });
  expect(mcpHttp.calls.slice(toolCalls)).toEqual([{ symbol: 'BTC' }]);
  const steps = (await store.agentSteps(it.runId, it.queryId, it.copilot)).map((s) => s.step);
  expect(steps.filter((s) => s.kind === 'tool').map((s) => s.kind === 'tool' && s.origin)).toEqual([
    'live',
    'limit',
    'limit',
  ]);
  expect(model.requests.slice(before).map((r) => r.body.tool_choice)).toEqual(['auto', 'none']);
  expect(answer.context).not.toMatch(/not run/);
  const one = model.requests.length;
  await agent({ limits: { maxSteps: 1 } }).collect({
    query: query('BTC'),
    signal: AbortSignal.timeout(20_000),
    item: item('run-limits'),
  });
  expect(model.requests.slice(one).map((r) => r.body.tool_choice)).toEqual(['none']);
});

test('HTTP tools declared in the config: URL filled from the arguments, the result read at answerPath', async () => {
  const hits: string[] = [];
  const api = http.createServer((req, res) => {
    hits.push(req.url!);
    const symbol = new URL(req.url!, 'http://x').searchParams.get('symbol');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: { symbol, price: 42, source: `https://api.test/${symbol}` } }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/price?symbol={symbol}`;
    const answer = await agent({
      tools: {
        http: [
          {
            name: 'get_price',
            description: 'spot price',
            parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
            url,
            answerPath: 'data',
          },
        ],
      },
    }).collect({ query: query('BTC now?'), signal: AbortSignal.timeout(20_000), item: item('run-http') });
    expect(hits).toEqual(['/price?symbol=BTC']);
    expect(answer.text).toBe('BTC trades at 42 USD (source: https://api.test/BTC).');
    expect(answer.context).toBe(
      'get_price {"symbol":"BTC"}:\n{"symbol":"BTC","price":42,"source":"https://api.test/BTC"}',
    );
  } finally {
    await new Promise((resolve) => (api.closeAllConnections(), api.close(resolve)));
  }
});

test("wallSeconds counts from the answer's first stored step, across attempts: an item resumed too late fails (agent_limit) without asking", async () => {
  const it = item('run-wall');
  const old = new Date(Date.now() - 60_000).toISOString();
  await store.putAgentStep({
    ...it,
    step: {
      kind: 'model',
      seq: 0,
      turn: 1,
      text: null,
      toolCalls: [{ id: 'c0', name: 'get_price', arguments: { symbol: 'BTC' } }],
      usage: { promptTokens: 1, completionTokens: 1, cachedTokens: null },
      latencyMs: 5,
      startedAt: old,
      finishedAt: old,
    },
  });
  await store.putAgentStep({
    ...it,
    step: {
      kind: 'tool',
      seq: 1,
      turn: 1,
      callId: 'c0',
      tool: 'get_price',
      arguments: { symbol: 'BTC' },
      result: '{}',
      isError: false,
      origin: 'live',
      latencyMs: 5,
      startedAt: old,
      finishedAt: old,
    },
  });
  const before = model.requests.length;
  const late = await adapterFailure(
    agent({ limits: { wallSeconds: 30 } }).collect({
      query: query('BTC?'),
      signal: AbortSignal.timeout(20_000),
      item: it,
    }),
  );
  expect([late.kind, late.retryable]).toEqual(['agent_limit', false]);
  expect(late.message).toMatch(
    /no final answer within limits\.wallSeconds \(30 s, from its first step\) after 1 model turns and 1 tool calls/,
  );
  expect(model.requests.length).toBe(before);
});

test('world ids: the hash of the content, whatever the order; keys ignore argument order; diff names what changed', () => {
  expect(worldKey('get_price', { symbol: 'BTC', venue: 'x' })).toBe(
    worldKey('get_price', { venue: 'x', symbol: 'BTC' }),
  );
  expect(worldKey('get_price', { symbol: 'BTC' })).not.toBe(worldKey('get_tvl', { symbol: 'BTC' }));
  const call = (key: string, result: string) => ({
    key,
    tool: 'get_price',
    arguments: `{"symbol":"${key}"}`,
    result,
    isError: false,
    recordedAt: 'now',
  });
  const a = [call('BTC', '1'), call('ETH', '2')];
  expect(worldIdOf(a)).toBe(worldIdOf([...a].reverse()));
  expect(worldIdOf(a)).not.toBe(worldIdOf([call('BTC', '1'), call('ETH', '3')]));
  const diff = diffWorlds(a, [call('ETH', '3'), call('SOL', '4')]);
  expect([
    diff.same,
    diff.changed.map((c) => c.a.key),
    diff.onlyA.map((c) => c.key),
    diff.onlyB.map((c) => c.key),
  ]).toEqual([0, ['ETH'], ['BTC'], ['SOL']]);
});

test('the environment variables an agent names (model key, ${VAR} in MCP env, MCP headersFromEnv) are the ones kept out of messages', () => {
  const config = agentAdapter.configSchema.parse({
    name: 'A',
    type: 'agent',
    baseURL: 'http://127.0.0.1:1/v1',
    model: 'm',
    apiKeyEnv: 'MODEL_KEY',
    tools: {
      mcp: [
        { name: 's', command: 'x', env: { TOKEN: '${STDIO_TOKEN}' } },
        { name: 'h', url: 'http://127.0.0.1:1/mcp', headersFromEnv: { Authorization: 'MCP_TOKEN' } },
      ],
    },
  });
  expect(envNames(config).sort()).toEqual(['MCP_TOKEN', 'MODEL_KEY', 'STDIO_TOKEN']);
});
