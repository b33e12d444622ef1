import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { curateActivities } from '../../activities/curate';
import { CAB_CATEGORIES } from '../../rubrics/cab/curation';
import { normalizeText } from '../../core/snapshots/text';
import { protocolFor } from '../../rubrics';
import { startSimServer, type SimHandler, type SimServer } from '../../sim/server';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir, withWorker } from '../support/harness';
import { cabDatasetRows } from '../support/cabDataset';

// The CryptoAnalystBench queries with their labels (published ones when ../shared has them, else a CAB-shaped
// fixture): the tagger "knows" the right category of each.
const dataset = cabDatasetRows();
const truth = new Map<string, string>(dataset.map((r) => [normalizeText(r.query), r.tags]));
const WHATS_UP = ["What's up with POL", "What's up with BELDEX", "what's up with $SOL"];
for (const q of WHATS_UP) truth.set(normalizeText(q), 'Market Data & Price Discovery');

let taggerRequests = 0;
const tagger: SimHandler = (body) => {
  if (body.response_format?.json_schema?.name !== 'query_categories') return undefined;
  taggerRequests++;
  const user = String(body.messages.find((m: any) => m.role === 'user').content);
  const labels = Object.fromEntries(
    [...user.matchAll(/^\[(q\d+)\] (.*)$/gm)].map(([, id, text]) => [
      id,
      truth.get(normalizeText(text)) ?? 'Default / General Analysis',
    ]),
  );
  return JSON.stringify({ labels });
};

let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({ handler: tagger });
});
afterAll(async () => {
  await sim.close();
});

/** Traffic: the 198 dataset queries, re-asked copies, a template family, junk that is too short or too long, and malformed lines. */
function writeTraffic(dir: string): { file: string; valid: string[]; badLines: number[]; copies: string[] } {
  const lines: string[] = [];
  const valid: string[] = [];
  const badLines: number[] = [];
  const add = (query: string, i: number) => {
    lines.push(
      JSON.stringify({
        query,
        timestamp: new Date(Date.UTC(2025, 4, 1, 0, i)).toISOString(),
        user_id: `u${i % 17}`,
        session_id: `s${i % 40}`,
      }),
    );
    valid.push(query);
  };
  const bad = (line: string) => {
    lines.push(line);
    badLines.push(lines.length);
  };
  dataset.forEach((r, i) => add(r.query, i));
  const copies = dataset.slice(40, 45).map((r) => r.query.toUpperCase() + '??');
  copies.forEach((q, i) => add(q, 300 + i));
  WHATS_UP.forEach((q, i) => add(q, 400 + i));
  ['gm', 'hi there', 'btc?', 'wen moon ser'].forEach((q, i) => add(q, 500 + i));
  add('Here is my whole portfolio export, tell me what to do: ' + 'ETH 2.5 at 3100, SOL 40 at 150, '.repeat(20), 600);
  add('x'.repeat(501), 601);
  lines.splice(10, 0, '{"query": "unterminated');
  badLines.push(11);
  bad('{"prompt":"no query field here"}');
  bad('{"query": 12345}');
  const file = path.join(dir, 'traffic.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return { file, valid, badLines: badLines.sort((a, b) => a - b), copies };
}

test('bad traffic lines: a clear error with line numbers and exit 2, nothing stored; --skip-bad curates in five counted stages with matching proportions', async () => {
  await withWorker('curate', async ({ taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const dir = tempDir();
    const { file, valid, badLines, copies } = writeTraffic(dir);
    const base = [
      'snapshot',
      'curate',
      '--from',
      file,
      '--target',
      '60',
      '--base-url',
      sim.url,
      '--model',
      'tagger',
      '--batch-size',
      '25',
      '--seed',
      's1',
      '--json',
    ];

    const refused = await cliInProcess(base, env);
    expect(refused.code).toBe(2);
    for (const line of badLines) expect(refused.stderr).toContain(`${file}:${line}:`);
    expect(refused.stderr).toContain('--skip-bad');
    expect(await store.listSnapshots()).toHaveLength(0);
    expect(taggerRequests).toBe(0);

    const { code, stdout, stderr } = await cliInProcess([...base, '--skip-bad'], env);
    expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    const result = JSON.parse(stdout);
    const [filter, categorise, distil, prune, curate] = result.stages;

    // Filter: counts recomputed here from the file as written.
    const len = (s: string) => [...s].length;
    const survivors = valid.filter((q) => len(q) >= 15 && len(q) <= 500);
    expect(filter).toMatchObject({
      stage: 'filter',
      in: valid.length + 3,
      malformed: 3,
      tooShort: valid.filter((q) => len(q) < 15).length,
      tooLong: 2,
      out: survivors.length,
    });
    expect(filter.tooShort).toBeGreaterThanOrEqual(4);
    expect(filter.badLines).toBe(badLines.join(','));

    // Categorise: every query labelled, in batches of 25, into the 11 default categories.
    const expectedByCategory = Object.fromEntries(
      CAB_CATEGORIES.map((c) => [
        c,
        survivors.filter((q) => (truth.get(normalizeText(q)) ?? 'Default / General Analysis') === c).length,
      ]),
    );
    expect(categorise).toMatchObject({
      stage: 'categorise',
      in: survivors.length,
      out: survivors.length,
      untagged: 0,
      requests: Math.ceil(survivors.length / 25),
      byCategory: expectedByCategory,
    });
    expect(taggerRequests).toBe(categorise.requests);
    const schema = sim.requests[0].body.response_format.json_schema.schema; // a full batch of 25
    expect(schema.properties.labels.required).toEqual(Array.from({ length: 25 }, (_, k) => `q${k + 1}`));
    expect(schema.properties.labels.properties.q1.enum).toEqual([...CAB_CATEGORIES]);
    // One activity per batch, each batch's labels stored: a retried or replayed batch asks the tagger nothing again.
    expect(await store.getWork(result.jobId, 'batches')).toBe(categorise.requests);
    const llm = {
      baseURL: sim.url,
      model: 'tagger',
      temperature: 0,
      timeoutMs: 10_000,
      concurrency: 1,
      maxAttempts: 1,
      responseFormat: 'json_schema' as const,
    };
    await new MockActivityEnvironment().run(() =>
      curateActivities({ store, env: {} }).categoriseBatch({
        jobId: result.jobId,
        batch: 0,
        categories: [...CAB_CATEGORIES],
        llm,
      }),
    );
    expect(taggerRequests).toBe(categorise.requests);

    // Distil: re-asked copies and the "What's up with X" family collapse to one each.
    const distilled = (await store.getWork<Array<{ query: string }>>(result.jobId, 'items/distil'))!;
    const texts = distilled.map((d) => normalizeText(d.query));
    expect(distil).toMatchObject({ stage: 'distil', in: survivors.length, out: distilled.length });
    expect(distil.collapsed).toBeGreaterThanOrEqual(copies.length + WHATS_UP.length - 1);
    expect(WHATS_UP.filter((q) => texts.includes(normalizeText(q)))).toHaveLength(1);
    for (const copy of copies) expect(texts.filter((t) => t === normalizeText(copy))).toHaveLength(1);
    expect(new Set(texts).size).toBe(texts.length);

    expect(prune).toEqual({ stage: 'prune', in: distilled.length, out: distilled.length, skipped: true });

    // Curate: 60 queries whose category counts are within one query of 60 × the traffic's share.
    expect(curate).toMatchObject({ stage: 'curate', in: distilled.length, out: 60, target: 60 });
    const snapshot = (await store.getSnapshot(result.snapshotId))!;
    const total = Object.values(expectedByCategory).reduce((a, b) => a + b, 0);
    const tagCounts = (snapshot.meta.counts as Record<string, Record<string, number>>).tags;
    for (const c of CAB_CATEGORIES)
      expect(Math.abs((tagCounts[c] ?? 0) - (60 * expectedByCategory[c]) / total)).toBeLessThanOrEqual(1);
    expect(result.allocation).toEqual(Object.fromEntries(CAB_CATEGORIES.map((c) => [c, tagCounts[c] ?? 0])));
    expect(snapshot.meta).toMatchObject({
      generator: 'cab-curate',
      protocol: 'cab',
      source: file,
      model: 'tagger',
      stages: result.stages,
    });

    // The snapshot exports to a valid CryptoAnalystBench run input.
    const out = path.join(dir, 'curated.jsonl');
    expect(
      (await cliInProcess(['snapshot', 'export', result.snapshotId, '--format', 'jsonl', '--out', out], env)).code,
    ).toBe(0);
    const parsed = protocolFor('cab').parseQueries(out);
    expect(parsed).toHaveLength(60);
    expect(Object.keys(JSON.parse(fs.readFileSync(out, 'utf8').split('\n')[0]))).toEqual(['id', 'text', 'tags']);

    // Same traffic, same seed: the same snapshot (no new tagging of stored batches is needed for that, but it is a new job).
    const again = JSON.parse((await cliInProcess([...base, '--skip-bad'], env)).stdout);
    expect(again.snapshotId).toBe(result.snapshotId);

    // Prune against an earlier run: queries every system scored above 8 on are dropped.
    const chosen = await store.snapshotQueries(result.snapshotId);
    const runQueries = chosen.slice(0, 4).map((q, i) => ({ id: `r${i}`, text: q.text, tags: q.tags }));
    await store.putSnapshot(
      {
        snapshotId: 'snap-earlier',
        createdAt: new Date().toISOString(),
        parentId: null,
        meta: { generator: 'import' },
      },
      runQueries,
    );
    await store.createRun({
      runId: 'earlier-run',
      protocol: 'cab',
      snapshotId: 'snap-earlier',
      rubricVersion: 'rv1',
      judge: { model: 'j', baseURL: 'http://x', temperature: 0 },
      copilots: ['A', 'B'],
      startedAt: new Date().toISOString(),
      sourceRunId: null,
      config: {},
    });
    const judgment = (queryId: string, copilot: string, score: number) =>
      store.putJudgment({
        runId: 'earlier-run',
        queryId,
        copilot,
        rubricVersion: 'rv1',
        status: 'ok',
        scores: { d1: score, d2: score, d3: score, d4: score },
        rationales: null,
        total: score * 4,
        rank: null,
        position: null,
        error: null,
        judge: { model: 'j', baseURL: 'http://x', temperature: 0, rubricVersion: 'rv1' },
        attempts: 1,
        createdAt: new Date().toISOString(),
      });
    for (const id of ['r0', 'r1', 'r2']) for (const s of ['A', 'B']) await judgment(id, s, 9);
    await judgment('r3', 'A', 9);
    await judgment('r3', 'B', 5);
    const pruned = await cliInProcess(
      [...base, '--skip-bad', '--prune-run', 'earlier-run', '--prune-threshold', '8'],
      env,
    );
    expect(pruned.code).toBe(0);
    const p = JSON.parse(pruned.stdout);
    expect(p.stages[3]).toMatchObject({
      stage: 'prune',
      in: distilled.length,
      out: distilled.length - 3,
      pruned: 3,
      easyInRun: 3,
      run: 'earlier-run',
    });
    const prunedTexts = (await store.snapshotQueries(p.snapshotId)).map((q) => q.text);
    for (const q of runQueries.slice(0, 3)) expect(prunedTexts).not.toContain(q.text);
    expect((await store.getSnapshot(p.snapshotId))!.meta.params).toMatchObject({
      pruneRunId: 'earlier-run',
      pruneThreshold: 8,
    });

    const unknownRun = await cliInProcess([...base, '--skip-bad', '--prune-run', 'no-such-run'], env);
    expect(unknownRun.code).toBe(2);
    expect(unknownRun.stderr).toContain('no-such-run');
  });
});

test('traffic that already carries a known category keeps it: only untagged lines reach the tagger', async () => {
  await withWorker('curate-pretagged', async ({ taskQueue, storeFile }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const dir = tempDir();
    // Every dataset query with its published label, except ten without one (and one with a label outside the list).
    const rows = dataset.map((r, i) =>
      i < 10
        ? { query: r.query }
        : i === 10
          ? { query: r.query, category: 'Not A Category' }
          : { query: r.query, tags: r.tags },
    );
    const file = path.join(dir, 'tagged.jsonl');
    fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const before = taggerRequests;
    const { code, stdout, stderr } = await cliInProcess(
      [
        'snapshot',
        'curate',
        '--from',
        file,
        '--target',
        '50',
        '--base-url',
        sim.url,
        '--model',
        'tagger',
        '--batch-size',
        '25',
        '--json',
      ],
      env,
    );
    expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    const [filter, categorise] = JSON.parse(stdout).stages;
    expect(categorise).toMatchObject({ in: filter.out, out: filter.out, untagged: 0, requests: 1 });
    expect(categorise.pretagged).toBe(filter.out - 11);
    expect(taggerRequests - before).toBe(1);
    const expected = Object.fromEntries(
      CAB_CATEGORIES.map((c) => [c, dataset.filter((r) => r.tags === c && [...r.query].length >= 15).length]),
    );
    expect(categorise.byCategory).toEqual(expected);
  });
});
