import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { saveStorageState } from '../../client/commands/browserLogin';
import { loadRunConfig, parseRunConfig } from '../../client/config';
import { chromiumPath } from '../../activities/adapters/chromiumPath';
import { csvRecords, toCsv } from '../../core/io/csv';
import { parseTraffic } from '../../core/snapshots/traffic';
import { latticeProtocol } from '../../rubrics/lattice';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, tempDir, writeQueries } from '../support/harness';
import { copyRubric } from '../support/rubricCopy';

/** Bad or hostile input found by adversarial testing, at the unit level (the CLI corpus is in badInput.cli.test.ts). */

function benchConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const file = path.join(dir, 'bench.yaml');
  const config = {
    protocol: 'lattice',
    queries: 'queries.jsonl',
    judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'j' },
    copilots: [{ name: 'Alpha', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
    ...extra,
  };
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

test('a query above maxQueryChars loads with a warning naming it; the limit is configurable and bounded by the hard one', () => {
  const dir = tempDir();
  writeQueries(dir, [...latticeGrid(1, 2), { id: 'long', text: 'Why? '.repeat(5_000), task: 'T1', category: 'C3' }]);
  const warnings: string[] = [];
  expect(loadRunConfig(benchConfig(dir), (m) => warnings.push(m)).maxQueryChars).toBe(20_000);
  expect(warnings).toEqual([
    expect.stringMatching(
      /queries\.jsonl: 1 query is longer than maxQueryChars \(20,000 characters\) .*: long \(25,000 characters\)\. Raise maxQueryChars/,
    ),
  ]);
  warnings.length = 0;
  loadRunConfig(benchConfig(dir, { maxQueryChars: 30_000 }), (m) => warnings.push(m));
  expect(warnings).toEqual([]);
  expect(() => loadRunConfig(benchConfig(dir, { maxQueryChars: 300_000 }), () => undefined)).toThrow(
    /maxQueryChars: .*200000/,
  );
});

test('a config that still sets chunkSize is refused, saying it was removed and where to delete it (exit 2, nothing started)', async () => {
  const dir = tempDir();
  writeQueries(dir, latticeGrid(1, 2));
  const file = benchConfig(dir, { chunkSize: 20 });
  expect(() => loadRunConfig(file, () => undefined)).toThrow(
    `${file}: chunkSize was removed: runs judge while they collect; delete the key from ${file}`,
  );
  expect(() => parseRunConfig({ protocol: 'lattice', chunkSize: 5 }, 'stored.yaml', dir)).toThrow(
    'stored.yaml: chunkSize was removed: runs judge while they collect; delete the key from stored.yaml',
  );
  const { code, stderr } = await cliInProcess(['run', '--config', file, '--dry-run'], {});
  expect(code).toBe(2);
  expect(stderr).toContain(`chunkSize was removed: runs judge while they collect; delete the key from ${file}`);
  expect(loadRunConfig(benchConfig(dir), () => undefined)).not.toHaveProperty('chunkSize');
});

test('CSV written by judgeflow neutralises formula cells (= + - @ tab CR) and keeps numbers as numbers', () => {
  const text = toCsv([
    ['id', 'tags', 'score'],
    ['=cmd|"/c calc"!A1', '+SUM(1,2)', -3.5],
    ['-2+3', '@evil', 7],
    ['\tTAB', '\rCR', 0],
    ['plain', 'a=b', 1],
  ]);
  expect(csvRecords(text, 'out.csv').map((r) => r.cells)).toEqual([
    ['id', 'tags', 'score'],
    [`'=cmd|"/c calc"!A1`, `'+SUM(1,2)`, '-3.5'],
    [`'-2+3`, `'@evil`, '7'],
    [`'\tTAB`, `'\rCR`, '0'],
    ['plain', 'a=b', '1'],
  ]);
});

test('a traffic CSV with an unterminated quote is an error naming the line where the record starts', () => {
  const file = path.join(tempDir(), 'traffic.csv');
  fs.writeFileSync(
    file,
    'query,timestamp\nfirst question here,2025-01-01\n"second question, never closed,2025-01-02\nthird question,2025-01-03\n',
  );
  expect(() => parseTraffic(file)).toThrow(
    `${file}:3: malformed CSV: the record starting on line 3 opens a quoted field that is never closed`,
  );
});

test('a LATTICE JSON Lines file saved with a byte-order mark loads', () => {
  const dir = tempDir();
  const file = path.join(dir, 'q.jsonl');
  fs.writeFileSync(
    file,
    '\uFEFF' +
      latticeGrid(1, 2)
        .map((q) => JSON.stringify(q))
        .join('\r\n') +
      '\r\n',
  );
  expect(latticeProtocol.parseQueries(file).map((q) => q.id)).toEqual(['t1-c1', 't1-c2']);
});

test('rubric show --rubric DIR with broken YAML shows the YAML error and its line', async () => {
  const dir = copyRubric('lattice');
  const lines = fs.readFileSync(path.join(dir, 'rubric.yaml'), 'utf8').split('\n').length;
  fs.appendFileSync(path.join(dir, 'rubric.yaml'), '\nweights: [unclosed\n');
  const { code, stderr } = await cliInProcess(['rubric', 'show', '--rubric', dir], {});
  expect(code).toBe(2);
  expect(stderr).toContain(`${path.join(dir, 'rubric.yaml')}: not valid YAML:`);
  expect(stderr).toMatch(new RegExp(`line (${lines}|${lines + 1}|${lines + 2})`));
  expect(stderr).not.toContain('cannot tell which protocol');
  const empty = tempDir();
  expect((await cliInProcess(['rubric', 'show', '--rubric', empty], {})).stderr).toContain(
    `${empty} belongs to: it holds no rubric.yaml`,
  );
});

test('browser-login saves the session owner-only: the file 0600, a directory it creates 0700', async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true });
  try {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'session', value: 'secret-cookie', domain: '127.0.0.1', path: '/' }]);
    const out = path.join(tempDir(), 'state', 'nested', 'copilot.json');
    const umask = process.umask(0o022); // the usual default, under which a plain write is world-readable
    try {
      await saveStorageState(context, out);
    } finally {
      process.umask(umask);
    }
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(out)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.dirname(path.dirname(out))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).cookies).toEqual([
      expect.objectContaining({ name: 'session', value: 'secret-cookie' }),
    ]);
    // Saving again over an existing, wider file leaves it owner-only too.
    fs.chmodSync(out, 0o644);
    await saveStorageState(context, out);
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(out))).toEqual(['copilot.json']);
  } finally {
    await browser.close();
  }
});

describe('judge panels in the run config', () => {
  const base = {
    protocol: 'lattice',
    queries: 'q.jsonl',
    copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
  };
  const member = (name: string) => ({ name, baseURL: 'http://127.0.0.1:9/v1', model: 'm' });
  const parse = (extra: Record<string, unknown>) => () => parseRunConfig({ ...base, ...extra }, 'cfg.yaml', '/tmp');
  test('judge xor judges; unique names; panel options only with a panel — each a clear input error naming the key', () => {
    expect(parse({})).toThrow(/cfg\.yaml: judge: missing: give judge: \(one judge\) or judges:/);
    expect(parse({ judge: member('x'), judges: [member('a'), member('b')] })).toThrow(
      /judges: give either judge: \(one judge\) or judges: \(a panel\), not both/,
    );
    expect(parse({ judges: [member('a'), member('A')] })).toThrow(/judges\.1\.name: duplicate judge name "A"/);
    expect(parse({ judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'm' }, panel: { aggregate: 'median' } })).toThrow(
      /panel: panel: options apply to judges:/,
    );
    expect(parse({ judges: [member('a'), { ...member('b'), apiKey: 'sk-1' }] })).toThrow(/judges\.1/);
    const ok = parseRunConfig(
      {
        ...base,
        judges: [member('a'), { ...member('b'), family: 'acme' }],
        panel: { aggregate: 'median', samples: 2 },
      },
      'cfg.yaml',
      '/tmp',
    );
    expect(ok.panel).toEqual({ aggregate: 'median', samples: 2 });
    expect(ok.judges![1]).toMatchObject({ name: 'b', family: 'acme', concurrency: 4 });
  });
});

describe('grounding: in the run config', () => {
  test('defaults: both checks, the run’s judge, 200,000 characters of context kept; paths resolved against the config', () => {
    const dir = tempDir();
    writeQueries(dir, latticeGrid(1, 2));
    const config = loadRunConfig(benchConfig(dir, { grounding: {} }));
    expect(config.grounding).toEqual({
      checks: ['hallucination', 'citations'],
      maxContextChars: 200_000,
      reuseAnswers: true,
    });
    const rubric = copyRubric('grounding');
    const own = loadRunConfig(
      benchConfig(dir, {
        grounding: {
          checks: ['hallucination'],
          rubric: path.relative(dir, rubric),
          judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'g' },
        },
      }),
    );
    expect(own.grounding).toMatchObject({
      checks: ['hallucination'],
      rubric,
      judge: { model: 'g', timeoutMs: 120_000 },
    });
    expect(own.grounding!.judge).not.toHaveProperty('samples');
  });

  test('bad grounding settings fail naming the key; a csv copilot’s traces.dir is resolved and must exist', () => {
    const dir = tempDir();
    writeQueries(dir, latticeGrid(1, 2));
    expect(() => loadRunConfig(benchConfig(dir, { grounding: { checks: ['vibes'] } }))).toThrow(
      /grounding\.checks\[0\]: Invalid option/,
    );
    expect(() => loadRunConfig(benchConfig(dir, { grounding: { checks: ['citations', 'citations'] } }))).toThrow(
      /grounding\.checks: each check may be named once/,
    );
    expect(() => loadRunConfig(benchConfig(dir, { grounding: { judges: [] } }))).toThrow(/grounding: .*judges/);
    expect(() => loadRunConfig(benchConfig(dir, { grounding: { rubric: 'nowhere' } }))).toThrow(
      /grounding rubric directory .*nowhere has no rubric\.yaml/,
    );
    fs.writeFileSync(
      path.join(dir, 'answers.csv'),
      toCsv([
        ['query', 'Agent_chat_id'],
        ['q', 'c1'],
      ]),
    );
    fs.mkdirSync(path.join(dir, 'out', 'Agent', 'traces'), { recursive: true });
    const csvCopilot = (traces: Record<string, unknown>) => ({
      copilots: [{ name: 'Agent', type: 'csv', path: 'answers.csv', traces }],
    });
    expect(loadRunConfig(benchConfig(dir, csvCopilot({ dir: 'out' }))).copilots[0]).toMatchObject({
      traces: { dir: path.join(dir, 'out'), spanName: 'Cyrpto Final Response' },
    });
    expect(() => loadRunConfig(benchConfig(dir, csvCopilot({ dir: 'missing' })))).toThrow(
      /copilots\[0\] \(Agent\): traces\.dir .*missing does not exist/,
    );
  });
});

test('run --dry-run counts the grounding calls: one or two per answer and judge, on the grounding judge when it has one', async () => {
  const { dryRunPlan } = await import('../../client/dryRun');
  const dir = tempDir();
  writeQueries(dir, latticeGrid(1, 3)); // 3 queries, 1 copilot
  const calls = (extra: Record<string, unknown>) =>
    Object.fromEntries(
      dryRunPlan(loadRunConfig(benchConfig(dir, extra))).endpoints.map((e) => [`${e.role} ${e.name}`, e.calls]),
    );
  expect(calls({})).toEqual({ 'copilot Alpha': 3, 'judge j': 3 });
  expect(calls({ grounding: {} })).toEqual({ 'copilot Alpha': 3, 'judge j': 3, 'judge j (grounding)': 6 });
  expect(
    calls({ grounding: { checks: ['hallucination'], judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'g' } } }),
  ).toEqual({ 'copilot Alpha': 3, 'judge j': 3, 'judge grounding (grounding)': 3 });
});
