import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PRICES, UNLOCKS } from '../../sim/world/fixtures';
import { WORLD_TOOL_NAMES } from '../../sim/world/tools';
import { parseSimArgs } from '../../sim/main';
import { REPO, tempDir } from '../support/harness';

/**
 * The tool world's MCP server over stdio, started as an agent config starts one (`node dist/sim/mcp/stdio.js`) and
 * spoken to with the SDK's stdio client; its JSON-lines log counts the calls.
 */
const build = require('../../scripts/build.js') as {
  ensureBuilt(root: string, log?: (line: string) => void): Promise<boolean>;
};
const ENTRY = path.join(REPO, 'dist', 'sim', 'mcp', 'stdio.js');
const scratch = tempDir('jf-mcp-stdio-');

beforeAll(async () => {
  expect(await build.ensureBuilt(REPO, () => undefined)).toBe(true);
}, 180_000);

async function connect(env: Record<string, string>, args = [ENTRY]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'mcpStdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

test('node dist/sim/mcp/stdio.js: the world tools over stdio, one log line per call, failTools from the environment', async () => {
  const log = path.join(scratch, 'calls.jsonl');
  const { client, stderr } = await connect({
    JUDGEFLOW_SIM_TOOL_LOG: log,
    JUDGEFLOW_SIM_FAIL_TOOLS: '{"get_tvl":"always"}',
  });
  try {
    expect(client.getServerVersion()).toMatchObject({ name: 'judgeflow-sim-world' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...WORLD_TOOL_NAMES]);
    const [price, unlocks, tvl, unknown] = (await Promise.all([
      client.callTool({ name: 'get_price', arguments: { symbol: 'LINK' } }),
      client.callTool({ name: 'get_token_unlocks', arguments: { token: 'OP' } }),
      client.callTool({ name: 'get_tvl', arguments: { protocol: 'Curve' } }),
      client.callTool({ name: 'get_holder_concentration', arguments: { token: 'DOGE' } }),
    ])) as any[];
    expect(JSON.parse(price.content[0].text)).toEqual(PRICES[7]);
    expect(JSON.parse(unlocks.content[0].text)).toEqual(UNLOCKS[6]);
    expect(tvl).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'get_tvl is unavailable (simulated failure, failTools)' }],
    });
    expect(unknown).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('unknown token "DOGE"') }],
    });
    const lines = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.tool, l.transport, l.ok]).sort()).toEqual([
      ['get_holder_concentration', 'stdio', false],
      ['get_price', 'stdio', true],
      ['get_token_unlocks', 'stdio', true],
      ['get_tvl', 'stdio', false],
    ]);
    expect(lines.find((l) => l.tool === 'get_price')).toEqual({
      tool: 'get_price',
      args: { symbol: 'LINK' },
      at: expect.any(Number),
      transport: 'stdio',
      ok: true,
    });
    expect(stderr()).toBe('');
  } finally {
    await client.close();
  }
});

test('a bad JUDGEFLOW_SIM_FAIL_TOOLS stops the server at start, saying what is wrong on stderr', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(process.execPath, [ENTRY], {
    env: { PATH: process.env.PATH ?? '', JUDGEFLOW_SIM_FAIL_TOOLS: '{"get_prices": 1}' },
    input: '',
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).toContain('JUDGEFLOW_SIM_FAIL_TOOLS: unknown tool "get_prices"');
});

test('judgeflow sim --mcp-stdio serves the same tools over stdio, with --fail-tool', async () => {
  expect(parseSimArgs(['--fail-tool', 'get_price=always', '--fail-tool=get_tvl=2']).options.failTools).toEqual({
    get_price: 'always',
    get_tvl: 2,
  });
  expect(() => parseSimArgs(['--fail-tool', 'get_tvl'])).toThrow(
    '--fail-tool: get_tvl must be "always" or a whole number',
  );
  expect(() => parseSimArgs(['--fail-tool', 'get_news=1'])).toThrow('--fail-tool: unknown tool "get_news"');
  const log = path.join(scratch, 'cli-calls.jsonl');
  const { client, stderr } = await connect({ JUDGEFLOW_SIM_TOOL_LOG: log }, [
    path.join(REPO, 'bin', 'judgeflow.js'),
    'sim',
    '--mcp-stdio',
    '--fail-tool',
    'get_funding_rate=1',
  ]);
  try {
    const first: any = await client.callTool({ name: 'get_funding_rate', arguments: { symbol: 'ETH' } });
    const second: any = await client.callTool({ name: 'get_funding_rate', arguments: { symbol: 'ETH' } });
    expect([first.isError, second.isError ?? false]).toEqual([true, false]);
    expect(JSON.parse(second.content[0].text)).toMatchObject({ symbol: 'ETH', fundingRate8hPct: 0.0085 });
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(stderr()).toBe('');
  } finally {
    await client.close();
  }
});
