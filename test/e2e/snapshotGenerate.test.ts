import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { normalizeText, similarity } from '../../core/snapshots/text';
import type { SimHandler } from '../../sim/server';
import { benchmarkRun, snapshotGenerate } from '../../workflows';
import type { GenerateInput } from '../../contract/snapshot';
import { cliInProcess } from '../support/cliInProcess';
import { runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { decodedHistory, hashInt, scriptedLatticeJudge } from '../support/judges';
import { simServersForFile } from '../support/sims';

const WORDS = (
  'staking bridge liquidity oracle rollup validator airdrop slippage perpetual funding collateral vault governance treasury emissions unlock ' +
  'custody wallet multisig approval phishing mempool sequencer blob restaking yield basis hedge option delta gamma arbitrage spread orderbook ' +
  'stablecoin peg redemption reserves audit exploit timelock vesting inflation burn buyback dominance rotation narrative catalyst halving miner ' +
  'hashrate fee gas layer settlement finality throughput tvl volume depth'
).split(' ');

/** Distinct, dissimilar queries: words drawn by a hash of the request and a running counter. */
let counter = 0;
function uniqueQuery(cell: string): string {
  const n = counter++;
  const picked = new Set<string>();
  for (let k = 0; picked.size < 7; k++) picked.add(WORDS[hashInt(`${cell}|${n}|${k}`) % WORDS.length]);
  return `${cell} ${[...picked].join(' ')} ${n}?`;
}

type Ask = { task: string; category: string; count: number; key: string; user: string };
function parseAsk(body: any): Ask | undefined {
  if (body.response_format?.json_schema?.name !== 'lattice_queries') return undefined;
  const user = String(body.messages.find((m: any) => m.role === 'user')?.content ?? '');
  return {
    task: user.match(/Task type: (T\d+)/)![1],
    category: user.match(/Query category: (C\d)/)![1],
    count: Number(user.match(/Write (\d+) distinct queries/)![1]),
    key: user.match(/Variation key[^:]*: (\S+)/)![1],
    user,
  };
}

const asked: Ask[] = [];
let failOnce = new Set<string>();
let duplicateRound0 = false;
const SAME = 'What is the price of Bitcoin today?';

const generator: SimHandler = (body) => {
  const ask = parseAsk(body);
  if (!ask) return undefined;
  asked.push(ask);
  const cell = `${ask.task}/${ask.category}`;
  if (failOnce.has(cell)) {
    failOnce.delete(cell);
    return { status: 500 }; // the cell's activity fails once and is retried alone
  }
  let queries = Array.from({ length: ask.count }, () => uniqueQuery(cell));
  // Round 0 of the duplicate scenario: the same question (and a shouted copy) in every cell.
  if (duplicateRound0 && ask.key.endsWith('round-0'))
    queries = [SAME, SAME.toUpperCase() + '!!', ...queries.slice(0, 1)];
  return JSON.stringify({ queries });
};

const sim = simServersForFile({ gen: { handler: generator }, judge: { handler: scriptedLatticeJudge }, copilots: {} });
beforeEach(() => {
  asked.length = 0;
  failOnce = new Set();
  duplicateRound0 = false;
});

function input(extra: Partial<GenerateInput> = {}): GenerateInput {
  return {
    protocol: 'lattice',
    perCell: 4,
    tasks: ['T1', 'T2'],
    categories: ['C1', 'C3'],
    seed: 'test',
    llm: {
      baseURL: sim.gen.url,
      model: 'gen-model',
      temperature: 0.9,
      timeoutMs: 10_000,
      concurrency: 4,
      maxAttempts: 3,
      responseFormat: 'json_schema',
    },
    maxRounds: 4,
    overAsk: 0.5,
    similarity: 0.8,
    ...extra,
  };
}

function expectDistinct(texts: string[]): void {
  expect(new Set(texts.map(normalizeText)).size).toBe(texts.length);
  for (let i = 0; i < texts.length; i++)
    for (let j = 0; j < i; j++) expect(similarity(texts[i], texts[j])).toBeLessThan(0.8);
}

test('generation fills every requested cell with distinct queries; a crashed cell is retried alone; only counts enter the history', async () => {
  failOnce = new Set(['T2/C3']);
  await withWorker('gen-fill', async ({ client, taskQueue, store }) => {
    const handle = await client.workflow.start(snapshotGenerate, {
      taskQueue,
      workflowId: `gen-fill-${Date.now()}`,
      args: [input()],
    });
    const result = await handle.result();
    expect(result).toMatchObject({ queries: 16, cells: 4, rounds: 1, shortCells: [], duplicatesRemoved: 0 });
    const queries = await store.snapshotQueries(result.snapshotId);
    const perCell: Record<string, string[]> = {};
    for (const q of queries) (perCell[`${q.task}/${q.category}`] ??= []).push(q.id);
    expect(perCell).toEqual({
      'T1/C1': ['t1-c1-01', 't1-c1-02', 't1-c1-03', 't1-c1-04'],
      'T1/C3': ['t1-c3-01', 't1-c3-02', 't1-c3-03', 't1-c3-04'],
      'T2/C1': ['t2-c1-01', 't2-c1-02', 't2-c1-03', 't2-c1-04'],
      'T2/C3': ['t2-c3-01', 't2-c3-02', 't2-c3-03', 't2-c3-04'],
    });
    for (const q of queries) expect(q.text.startsWith(`${q.task}/${q.category} `)).toBe(true); // each query came from its own cell's request
    expectDistinct(queries.map((q) => q.text));

    // One request per cell, plus the retry of the cell whose first request failed; it asked for more than needed.
    const requests = asked.map((a) => `${a.task}/${a.category}`).sort();
    expect(requests).toEqual(['T1/C1', 'T1/C3', 'T2/C1', 'T2/C3', 'T2/C3']);
    expect(asked.every((a) => a.count === 6)).toBe(true);
    expect(sim.gen.requests.at(-1)!.body.response_format.type).toBe('json_schema');

    const snap = (await store.getSnapshot(result.snapshotId))!;
    expect(snap.meta).toMatchObject({
      generator: 'lattice-generate',
      protocol: 'lattice',
      model: 'gen-model',
      baseURL: sim.gen.url,
      promptsVersion: result.promptsVersion,
      params: { perCell: 4, seed: 'test' },
    });
    expect(snap.meta.counts).toEqual({ category: { C1: 8, C3: 8 }, task: { T1: 8, T2: 8 } });
    const history = decodedHistory(await handle.fetchHistory());
    expect(history).not.toContain(queries[0].text);
  });
});

test('a generator that repeats itself triggers regeneration of the short cells (CLI), which avoids what exists', async () => {
  duplicateRound0 = true;
  await withWorker('gen-dup', async ({ taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const args = [
      'snapshot',
      'generate',
      '--protocol',
      'lattice',
      '--per-cell',
      '3',
      '--tasks',
      'T1,T2',
      '--categories',
      'C1,C3',
      '--base-url',
      sim.gen.url,
      '--model',
      'gen-model',
      '--seed',
      'dup',
      '--json',
    ];
    const { code, stdout, stderr } = await cliInProcess(args, env);
    expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    const result = JSON.parse(stdout);
    expect(result.rounds).toBeGreaterThanOrEqual(2);
    expect(result.duplicatesRemoved).toBeGreaterThanOrEqual(4 * 2 - 1); // SAME and its shouted copy in every cell, kept once
    expect(result.shortCells).toEqual([]);
    const queries = await store.snapshotQueries(result.snapshotId);
    expect(queries).toHaveLength(12);
    expectDistinct(queries.map((q) => q.text));
    expect(queries.filter((q) => normalizeText(q.text) === normalizeText(SAME))).toHaveLength(1);

    // Refill requests: only short cells, a later round, listing the cell's accepted queries to avoid.
    const refills = asked.filter((a) => !a.key.endsWith('round-0'));
    expect(refills.length).toBeGreaterThanOrEqual(3);
    for (const r of refills) expect(r.user).toContain('These queries already exist');
    // The cell that kept SAME still needs one (asks for 2); the others need two (ask for 3), asking for more than needed.
    const round1 = Object.fromEntries(
      refills.filter((r) => r.key.endsWith('round-1')).map((r) => [`${r.task}/${r.category}`, r]),
    );
    expect(Object.fromEntries(Object.entries(round1).map(([c, r]) => [c, r.count]))).toEqual({
      'T1/C1': 2,
      'T1/C3': 3,
      'T2/C1': 3,
      'T2/C3': 3,
    });
    expect(round1['T1/C1'].user).toContain(`- ${SAME}`);
  });
});

test('an exported snapshot is a valid run input and runs as the same snapshot; list, show and diff describe it', async () => {
  await withWorker('gen-export', async ({ client, taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const a = await client.workflow.execute(snapshotGenerate, {
      taskQueue,
      workflowId: `gen-a-${Date.now()}`,
      args: [input({ perCell: 2, categories: ['C2'] })],
    });
    const b = await client.workflow.execute(snapshotGenerate, {
      taskQueue,
      workflowId: `gen-b-${Date.now()}`,
      args: [input({ perCell: 2, categories: ['C2'], seed: 'other', parentId: a.snapshotId })],
    });

    const dir = tempDir();
    const file = path.join(dir, 'exported.jsonl');
    expect(
      (await cliInProcess(['snapshot', 'export', a.snapshotId.slice(0, 10), '--format', 'jsonl', '--out', file], env))
        .code,
    ).toBe(0);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(4);
    expect(Object.keys(lines[0])).toEqual(['id', 'text', 'task', 'category']);
    const csvOut = path.join(dir, 'exported.csv');
    expect(
      (await cliInProcess(['snapshot', 'export', a.snapshotId, '--format', 'csv', '--out', csvOut], env)).code,
    ).toBe(0);
    expect(fs.readFileSync(csvOut, 'utf8').split('\n')[0]).toBe('id,text,task,category');

    const config = runConfig(dir, {
      protocol: 'lattice',
      queries: file,
      judge: { baseURL: sim.judge.url, model: 'j' },
      copilots: simCopilots(sim.copilots.url, { Solo: 'sim-terse' }),
    });
    const run = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: `gen-run-${Date.now()}`,
      args: [runInput(config, `gen-run-${Date.now()}`)],
    });
    const report = JSON.parse(fs.readFileSync(run.reportPath, 'utf8'));
    expect(report.copilots.Solo.n).toBe(4);
    expect((await store.getRun(run.runId))!.snapshotId).toBe(a.snapshotId); // the export is exact: same content, same id

    const list = await cliInProcess(['snapshot', 'list'], env);
    expect(list.stdout).toContain(a.snapshotId);
    expect(list.stdout).toContain(b.snapshotId);
    const show = JSON.parse((await cliInProcess(['snapshot', 'show', b.snapshotId, '--json'], env)).stdout);
    expect(show).toMatchObject({
      parentId: a.snapshotId,
      queryCount: 4,
      counts: { category: { C2: 4 }, task: { T1: 2, T2: 2 } },
    });
    const diff = JSON.parse(
      (await cliInProcess(['snapshot', 'diff', a.snapshotId, b.snapshotId, '--json'], env)).stdout,
    );
    expect([diff.added.length, diff.removed.length, diff.unchanged]).toEqual([4, 4, 0]);
    const bad = await cliInProcess(['snapshot', 'export', a.snapshotId, '--format', 'xml'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format xml');
  });
});

test("the paper's pipeline: one seed per cell, then --extend to three per cell and to fifteen, each keeping its parent's queries", async () => {
  await withWorker('gen-extend', async ({ client, taskQueue, store, storeFile }) => {
    const run = async (extra: Partial<GenerateInput>) =>
      (
        await client.workflow.start(snapshotGenerate, {
          taskQueue,
          workflowId: `gen-ext-${Date.now()}-${extra.perCell}`,
          args: [input(extra)],
        })
      ).result();
    const seeds = await run({ perCell: 1 });
    expect(seeds).toMatchObject({ queries: 4, shortCells: [] });
    asked.length = 0;
    const expanded = await run({ perCell: 3, parentId: seeds.snapshotId, extend: true });
    expect(expanded).toMatchObject({ queries: 12, parentId: seeds.snapshotId, shortCells: [] });
    const seedQueries = await store.snapshotQueries(seeds.snapshotId);
    const expandedQueries = await store.snapshotQueries(expanded.snapshotId);
    // Every seed kept as it was (id, text, labels); two new ones per cell, numbered after it.
    for (const q of seedQueries) expect(expandedQueries).toContainEqual(q);
    expect(expandedQueries.filter((q) => q.task === 'T1' && q.category === 'C1').map((q) => q.id)).toEqual([
      't1-c1-01',
      't1-c1-02',
      't1-c1-03',
    ]);
    expectDistinct(expandedQueries.map((q) => q.text));
    // Round 0 of each cell lists the cell's seed as a query to write around.
    for (const a of asked)
      expect(a.user).toContain(seedQueries.find((q) => q.task === a.task && q.category === a.category)!.text);

    // Through the CLI, to fifteen per cell (the 1,200's 75 per task over all 80 cells).
    const args = [
      'snapshot',
      'generate',
      '--protocol',
      'lattice',
      '--per-cell',
      '15',
      '--tasks',
      'T1,T2',
      '--categories',
      'C1,C3',
      '--base-url',
      sim.gen.url,
      '--model',
      'gen-model',
      '--parent',
      expanded.snapshotId,
      '--extend',
      '--json',
    ];
    const cli = await cliInProcess(args, { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue });
    expect({ code: cli.code, stderr: cli.code ? cli.stderr : '' }).toEqual({ code: 0, stderr: '' });
    const full = await store.snapshotQueries(JSON.parse(cli.stdout).snapshotId);
    expect(full).toHaveLength(60);
    for (const q of expandedQueries) expect(full).toContainEqual(q);
    expect(new Set(full.map((q) => q.id)).size).toBe(60);

    const noParent = await cliInProcess(
      [
        'snapshot',
        'generate',
        '--protocol',
        'lattice',
        '--per-cell',
        '3',
        '--base-url',
        sim.gen.url,
        '--model',
        'gen-model',
        '--extend',
      ],
      { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue },
    );
    expect(noParent.code).toBe(2);
    expect(noParent.stderr).toContain('--extend keeps the queries of a parent snapshot: give it with --parent ID');
  });
});
