import fs from 'node:fs';
import path from 'node:path';
import { CAB_CATEGORIES } from '../../../rubrics/cab/curation';
import {
  allocate,
  distil,
  easyQueryTexts,
  filterByLength,
  sampleByProportions,
} from '../../../core/snapshots/curation';
import {
  diffSnapshots,
  exportCsv,
  exportJsonl,
  labelCounts,
  saveSnapshot,
  resolveSnapshotId,
} from '../../../core/snapshots/snapshots';
import { SqliteStore } from '../../../stores/sqlite';
import { loadTraffic, parseTraffic } from '../../../core/snapshots/traffic';
import { InputError } from '../../../core/model/inputError';
import { parseCsv } from '../../../core/io/csv';
import { cabDatasetRows, testWithRealCabDataset } from '../../support/cabDataset';
import { cabProtocol } from '../../../rubrics/cab';
import { latticeProtocol } from '../../../rubrics/lattice';
import { latticeCells } from '../../../rubrics/lattice/generate';
import { parseEvery } from '../../../client/commands/schedule';
import { loadThenRunConfig } from '../../../client/snapshotOptions';
import { newestTrafficFile } from '../../../activities/snapshotRefresh';
import { tempDir } from '../../support/harness';

describe('traffic files', () => {
  test('JSON Lines: malformed lines are reported with their line numbers; skipBad skips them', () => {
    const file = path.join(tempDir(), 'traffic.jsonl');
    fs.writeFileSync(
      file,
      [
        '{"query":"How do I bridge USDC to Base?","timestamp":"2025-05-01T10:00:00Z","user_id":"u1","session":"s1"}',
        '',
        '{not json',
        '{"text":"no query field"}',
        '{"query": 42}',
        '["an array"]',
        '{"query":"  What is restaking and is it safe?  "}',
      ].join('\n'),
    );
    const parsed = parseTraffic(file);
    expect(parsed.items).toEqual([
      { line: 1, query: 'How do I bridge USDC to Base?', timestamp: '2025-05-01T10:00:00Z', user: 'u1', session: 's1' },
      { line: 7, query: 'What is restaking and is it safe?' },
    ]);
    expect(parsed.bad.map((b) => b.line)).toEqual([3, 4, 5, 6]);
    expect(() => loadTraffic(file, false)).toThrow(InputError);
    try {
      loadTraffic(file, false);
    } catch (error) {
      const message = (error as Error).message;
      for (const line of [3, 4, 5, 6]) expect(message).toContain(`${file}:${line}:`);
      expect(message).toContain('--skip-bad');
    }
    expect(loadTraffic(file, true).items).toHaveLength(2);
  });

  test('CSV: quoted fields spanning lines keep the right line numbers; a row with the wrong width is malformed', () => {
    const file = path.join(tempDir(), 'traffic.csv');
    fs.writeFileSync(
      file,
      'query,timestamp,user\n"multi\nline, with comma",2025-01-01,u1\nshort row\n"",2025-01-02,u2\nplain question about ETH,2025-01-03,u3\n',
    );
    const parsed = parseTraffic(file);
    expect(parsed.format).toBe('csv');
    expect(parsed.items).toEqual([
      { line: 2, query: 'multi\nline, with comma', timestamp: '2025-01-01', user: 'u1' },
      { line: 6, query: 'plain question about ETH', timestamp: '2025-01-03', user: 'u3' },
    ]);
    expect(parsed.bad).toEqual([
      { line: 4, reason: expect.stringContaining('1 fields') },
      { line: 5, reason: '"query" is empty' },
    ]);
    fs.writeFileSync(file, 'question,tags\nfoo,bar\n');
    expect(() => parseTraffic(file)).toThrow(/missing column "query"/);
  });

  test('the newest traffic file of a directory or glob is picked', () => {
    const dir = tempDir();
    const old = path.join(dir, 'traffic-2025-01.jsonl');
    const fresh = path.join(dir, 'traffic-2025-02.jsonl');
    fs.writeFileSync(old, '{"query":"a"}\n');
    fs.writeFileSync(fresh, '{"query":"b"}\n');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    fs.utimesSync(old, new Date('2025-01-01'), new Date('2025-01-01'));
    fs.utimesSync(fresh, new Date('2025-02-01'), new Date('2025-02-01'));
    expect(newestTrafficFile(dir)).toBe(fresh);
    expect(newestTrafficFile(path.join(dir, 'traffic-2025-01*'))).toBe(old);
    expect(() => newestTrafficFile(path.join(dir, '*.csv'))).toThrow(/no traffic file/);
  });
});

describe('curation stages', () => {
  test('filter counts too-short and too-long queries by characters', () => {
    const items = ['gm', 'ok what is up', 'what is the TVL of Aave today?', 'x'.repeat(501), '🚀'.repeat(15)].map(
      (query) => ({ query }),
    );
    const { kept, tooShort, tooLong } = filterByLength(items, 15, 500);
    expect([tooShort, tooLong]).toEqual([2, 1]);
    expect(kept.map((k) => k.query)).toEqual(['what is the TVL of Aave today?', '🚀'.repeat(15)]);
  });

  test('distil collapses "What\'s up with POL" / "What\'s up with BELDEX" into one representative', () => {
    const items = [
      { query: "What's up with POL", tag: 'Market Data & Price Discovery' },
      { query: 'Explain how restaking works on EigenLayer', tag: 'Crypto Concepts & How-To' },
      { query: "What's up with BELDEX", tag: 'Market Data & Price Discovery' },
      { query: 'explain how restaking works on eigenlayer?', tag: 'Crypto Concepts & How-To' },
    ];
    const { kept, groups } = distil(items, 0.8);
    expect(groups).toBe(2);
    expect(kept.map((k) => [k.query, k.groupSize])).toEqual([
      ["What's up with POL", 2],
      ['Explain how restaking works on EigenLayer', 2],
    ]);
  });

  test('largest-remainder allocation: every category within one of its exact share, capacity respected', () => {
    const weights = { A: 36, B: 34, C: 33, D: 23, E: 19, F: 16, G: 14, H: 10, I: 10, J: 2, K: 1 };
    const total = Object.values(weights).reduce((a, b) => a + b, 0);
    for (const target of [1, 7, 50, 100, 150]) {
      const alloc = allocate(target, weights, Object.fromEntries(Object.keys(weights).map((k) => [k, 1000])));
      expect(Object.values(alloc).reduce((a, b) => a + b, 0)).toBe(target);
      for (const [k, w] of Object.entries(weights)) expect(Math.abs(alloc[k] - (target * w) / total)).toBeLessThan(1);
    }
    // A category with too few queries gives everything it has; the others share its seats.
    const capped = allocate(10, { A: 5, B: 5 }, { A: 2, B: 100 });
    expect(capped).toEqual({ A: 2, B: 8 });
    // Asking for more than exists takes everything.
    expect(allocate(10, { A: 1, B: 1 }, { A: 3, B: 4 })).toEqual({ A: 3, B: 4 });
  });

  test('sampling is deterministic by seed and keeps traffic order', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ line: i + 1, tag: i % 4 === 0 ? 'X' : 'Y', query: `q${i}` }));
    const a = sampleByProportions(items, 10, { X: 10, Y: 30 }, 's1');
    const b = sampleByProportions(items, 10, { X: 10, Y: 30 }, 's1');
    const c = sampleByProportions(items, 10, { X: 10, Y: 30 }, 's2');
    expect(a.allocation).toEqual({ X: 3, Y: 7 }); // 2.5 / 7.5: the tie goes to the category listed first
    expect(a.chosen).toEqual(b.chosen);
    expect(a.chosen.map((x) => x.line)).not.toEqual(c.chosen.map((x) => x.line));
    expect([...a.chosen].sort((p, q) => p.line - q.line)).toEqual(a.chosen);
  });

  test('prune: easy only when every system scored above the threshold', () => {
    const q = (id: string, text: string) => ({ id, text });
    const j = (queryId: string, copilot: string, score: number, status: 'ok' | 'failed' = 'ok') =>
      ({ queryId, copilot, status, scores: { a: score, b: score }, total: score * 4 }) as never;
    const easy = easyQueryTexts({
      queries: [q('1', 'Easy one?'), q('2', 'Split one'), q('3', 'Missing system')],
      judgments: [
        j('1', 'A', 9),
        j('1', 'B', 8.5),
        j('2', 'A', 9),
        j('2', 'B', 8),
        j('3', 'A', 10),
        j('3', 'B', 10, 'failed'),
      ],
      copilots: ['A', 'B'],
      threshold: 8,
      metric: 'mean',
      isDimension: () => true,
    });
    expect([...easy]).toEqual(['easy one']);
  });

  test('prune: CryptoAnalystBench error-taxonomy flags (taxonomy.* 0/1 scores) are not averaged with the dimensions', () => {
    const q = (id: string, text: string) => ({ id, text });
    // Dimension mean 9 (above 8), but with seven 0/1 flags averaged in it would drop to (4 × 9 + 0) / 11 ≈ 3.3.
    const flags = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((f) => [`taxonomy.${f}`, 0]));
    const j = (queryId: string, copilot: string) =>
      ({
        queryId,
        copilot,
        status: 'ok',
        scores: { relevance: 9, depth: 9, temporal_relevance: 9, data_consistency: 9, ...flags },
        total: 36,
      }) as never;
    const easy = easyQueryTexts({
      queries: [q('1', 'Easy one?')],
      judgments: [j('1', 'A'), j('1', 'B')],
      copilots: ['A', 'B'],
      threshold: 8,
      metric: 'mean',
      isDimension: (k) => cabProtocol.scoreKey(k).kind === 'dimension',
    });
    expect([...easy]).toEqual(['easy one']);
  });

  testWithRealCabDataset(
    'the default category list is the 11 CryptoAnalystBench categories of the published dataset',
    () => {
      expect(new Set(cabDatasetRows().map((r) => r.tags))).toEqual(new Set(CAB_CATEGORIES));
    },
  );
});

describe('snapshots', () => {
  test('ids are content hashes; meta carries counts; export round-trips through the LATTICE query parser', async () => {
    const store = new SqliteStore(path.join(tempDir(), 'results.db'));
    const queries = [
      { id: 't1-c1-01', text: 'What is ETH doing today?', task: 'T1', category: 'C1' },
      {
        id: 't2-c1-01',
        text: 'Who is behind "Ethena", and what, exactly, does it do?',
        task: 'T2',
        category: 'C1',
        history: [{ role: 'user' as const, content: 'hi' }],
      },
    ];
    const first = await saveSnapshot(store, latticeProtocol.labelsOf, {
      queries,
      parentId: null,
      meta: { generator: 'test' },
    });
    const again = await saveSnapshot(store, latticeProtocol.labelsOf, {
      queries,
      parentId: 'snap-other',
      meta: { generator: 'test' },
    });
    expect(again).toEqual({ snapshotId: first.snapshotId, created: false });
    const stored = (await store.getSnapshot(first.snapshotId))!;
    expect(stored.parentId).toBeNull();
    expect(stored.meta.counts).toEqual({ category: { C1: 2 }, task: { T1: 1, T2: 1 } });
    expect((await resolveSnapshotId(store, first.snapshotId.slice(0, 9))).snapshotId).toBe(first.snapshotId);
    await expect(resolveSnapshotId(store, 'snap-nope')).rejects.toThrow(/no snapshot/);

    const file = path.join(tempDir(), 'export.jsonl');
    fs.writeFileSync(file, exportJsonl(await store.snapshotQueries(first.snapshotId), latticeProtocol.queryFields));
    expect(latticeProtocol.parseQueries(file)).toEqual(queries);
    const [header, ...rows] = parseCsv(exportCsv(queries, latticeProtocol.queryFields), 'export.csv');
    expect(header).toEqual(['id', 'text', 'task', 'category', 'history']);
    expect(rows[1]).toEqual(['t2-c1-01', queries[1].text, 'T2', 'C1', JSON.stringify(queries[1].history)]);
    await store.close();
  });

  test('diff compares by normalised text and counts per label', () => {
    const a = [
      { id: '1', text: 'What is ETH?', tags: 'X' },
      { id: '2', text: 'Is SOL cheap?', tags: 'Y' },
    ];
    const b = [
      { id: '9', text: 'what is eth', tags: 'X' },
      { id: '3', text: 'New question', tags: 'X' },
    ];
    const d = diffSnapshots({ id: 'A', queries: a }, { id: 'B', queries: b }, cabProtocol.labelsOf);
    expect(d.added.map((q) => q.text)).toEqual(['New question']);
    expect(d.removed.map((q) => q.text)).toEqual(['Is SOL cheap?']);
    expect(d.unchanged).toBe(1);
    expect(d.counts.tags).toEqual({ X: { a: 1, b: 2 }, Y: { a: 1, b: 0 } });
    expect(labelCounts(b, cabProtocol.labelsOf)).toEqual({ tags: { X: 2 } });
  });
});

describe('options', () => {
  test('cells and schedule intervals are validated', () => {
    expect(latticeCells(['T1', 'T16'], ['C5'])).toEqual(['T1/C5', 'T16/C5']);
    expect(latticeCells()).toHaveLength(80);
    expect(() => latticeCells(['T17'])).toThrow(/unknown LATTICE task/);
    expect(parseEvery('7d')).toBe(7 * 86_400_000);
    expect(parseEvery('30m')).toBe(1_800_000);
    expect(() => parseEvery('7 days')).toThrow(/--every/);
  });

  test("a --then-run config gets the same per-copilot up-front checks as judgeflow run (a CSV copilot's missing column)", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'answers.csv'), 'query,tags,Other_response\nq,t,a\n');
    const config = (name: string) =>
      `protocol: cab\njudge: { baseURL: http://127.0.0.1:9/v1, model: j }\ncopilots:\n  - { name: ${name}, type: csv, path: answers.csv }\n`;
    fs.writeFileSync(path.join(dir, 'bad.yaml'), config('Sheet'));
    fs.writeFileSync(path.join(dir, 'good.yaml'), config('Other'));
    expect(() => loadThenRunConfig(path.join(dir, 'bad.yaml'), 'curate')).toThrow(InputError);
    expect(() => loadThenRunConfig(path.join(dir, 'bad.yaml'), 'curate')).toThrow(
      /bad\.yaml: copilots\[0\] \(Sheet\):.*no column "Sheet_response"/,
    );
    expect(loadThenRunConfig(path.join(dir, 'good.yaml'), 'curate').copilots[0].name).toBe('Other');
  });
});
