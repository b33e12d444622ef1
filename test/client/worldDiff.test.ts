import path from 'node:path';
import { worldIdOf, worldKey } from '../../activities/adapters/agent/world';
import type { WorldCall } from '../../core/model/agentSteps';
import { SqliteStore } from '../../stores/sqlite';
import { runCli } from '../support/cli';
import { tempDir } from '../support/harness';

jest.setTimeout(120_000);

/** `judgeflow world diff` as a user runs it (the real CLI, a child process) on a store holding two world snapshots. */
const call = (tool: string, args: Record<string, unknown>, result: string, isError = false): WorldCall => ({
  key: worldKey(tool, args),
  tool,
  arguments: JSON.stringify(args),
  result,
  isError,
  recordedAt: '2026-12-01T10:00:00.000Z',
});
const price = (symbol: string, value: number) => JSON.stringify({ symbol, price: value });
const listing = call('(tools/list)', { server: 'prices' }, '[{"name":"get_price"}]');
const monday = [
  listing,
  call('get_price', { symbol: 'BTC' }, price('BTC', 97000.5)),
  call('get_price', { symbol: 'ETH' }, price('ETH', 3400.25)),
  call('get_price', { symbol: 'DOGE' }, 'unknown symbol DOGE', true),
];
const tuesday = [
  listing,
  call('get_price', { symbol: 'BTC' }, price('BTC', 98100)),
  call('get_price', { symbol: 'ETH' }, price('ETH', 3400.25)),
  call('get_price', { symbol: 'SOL' }, price('SOL', 180.1)),
];
const A = worldIdOf(monday);
const B = worldIdOf(tuesday);
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const home = path.join(tempDir('jf-world-diff-'), 'home');
  const store = new SqliteStore(path.join(home, 'results.db'));
  await store.putWorldCalls('run-monday', monday);
  await store.putWorldCalls('run-tuesday', tuesday);
  await store.close();
  env = { JUDGEFLOW_HOME: home, JUDGEFLOW_STORE: '' };
});

test('world diff names the calls that changed and those only one world holds, exit 0', async () => {
  expect(A).not.toBe(B);
  const out = await runCli(['world', 'diff', A, B], env);
  expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = out.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe(`${A} vs ${B}: 2 the same, 1 changed, 1 only in ${A}, 1 only in ${B}`);
  expect(lines.slice(1)).toEqual([
    '  changed get_price {"symbol":"BTC"}',
    `    ${A}: ${price('BTC', 97000.5)}`,
    `    ${B}: ${price('BTC', 98100)}`,
    `  only in ${A}: get_price {"symbol":"DOGE"}`,
    `  only in ${B}: get_price {"symbol":"SOL"}`,
  ]);

  const json = await runCli(['world', 'diff', B, A, '--json'], env);
  expect(json.code).toBe(0);
  const diff = JSON.parse(json.stdout);
  expect({ a: diff.a, b: diff.b, same: diff.same }).toEqual({ a: B, b: A, same: 2 });
  expect(diff.changed.map((c: any) => [c.a.result, c.b.result])).toEqual([
    [price('BTC', 98100), price('BTC', 97000.5)],
  ]);
  expect(diff.onlyA.map((c: WorldCall) => c.arguments)).toEqual(['{"symbol":"SOL"}']);
  expect(diff.onlyB.map((c: WorldCall) => c.arguments)).toEqual(['{"symbol":"DOGE"}']);

  const same = await runCli(['world', 'diff', A, A], env);
  expect(same.stdout.trim()).toBe(`${A} vs ${A}: 4 the same, 0 changed, 0 only in ${A}, 0 only in ${A}`);
});

test('a world id the store does not hold, or a missing one, is a clear error with a non-zero exit and no output', async () => {
  const unknown = 'world-0000000000000000';
  const bad = await runCli(['world', 'diff', A, unknown], env);
  expect(bad.code).toBe(2);
  expect(bad.stdout).toBe('');
  expect(bad.stderr).toContain(`judgeflow world: no world snapshot ${unknown} in this results store`);
  expect(bad.stderr).toContain(`there are: ${A}, ${B}`);

  const missing = await runCli(['world', 'diff', A], env);
  expect(missing.code).toBe(2);
  expect(missing.stdout).toBe('');
  expect(missing.stderr).toContain('world diff: missing WORLD_ID');
  expect(missing.stderr).toContain('Usage: judgeflow world list');

  const empty = await runCli(['world', 'diff', A, B], {
    JUDGEFLOW_HOME: tempDir('jf-world-none-'),
    JUDGEFLOW_STORE: '',
  });
  expect(empty.code).toBe(2);
  expect(empty.stderr).toContain(`no world snapshot ${A} in this results store (it holds none)`);
});
