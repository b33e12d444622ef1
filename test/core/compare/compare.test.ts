import path from 'node:path';
import { compareStoredRuns } from '../../../client/compareRuns';
import { compareRuns, type CompareRun } from '../../../core/compare/compare';
import { renderComparison } from '../../../core/compare/markdown';
import { saveSnapshot } from '../../../core/snapshots/snapshots';
import { SqliteStore } from '../../../stores/sqlite';
import type { Query, StoredJudgment } from '../../../core/model/types';
import { cabProtocol } from '../../../rubrics/cab';
import { latticeProtocol } from '../../../rubrics/lattice';
import { tempDir } from '../../support/harness';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };

function judgment(
  runId: string,
  queryId: string,
  copilot: string,
  scores: Record<string, number> | null,
  extra: Partial<StoredJudgment> = {},
): StoredJudgment {
  const total = scores ? Object.values(scores).reduce((a, b) => a + b, 0) : null;
  return {
    runId,
    queryId,
    copilot,
    rubricVersion: `rubric-${runId}`,
    status: scores ? 'ok' : 'failed',
    scores,
    rationales: scores
      ? Object.fromEntries(Object.keys(scores).map((d) => [d, `${runId} says ${d}=${scores[d]} for ${queryId}`]))
      : null,
    total,
    rank: null,
    position: null,
    error: scores ? null : 'invalid judge answer',
    judge: { ...judge, rubricVersion: `rubric-${runId}` },
    attempts: 1,
    createdAt: '2025-01-01T00:00:00Z',
    ...extra,
  };
}

function run(runId: string, judgments: StoredJudgment[], copilots = ['Ace', 'Bolt']): CompareRun {
  return {
    runId,
    protocol: 'lattice',
    snapshotId: 'snap-1',
    rubricVersion: `rubric-${runId}`,
    judge,
    copilots,
    judgments,
  };
}

// 12 queries, two task labels, two categories; per-query scores that vary so the tests are not trivially constant.
const queries: Query[] = Array.from({ length: 12 }, (_, i) => ({
  id: `q${String(i).padStart(2, '0')}`,
  text: `question ${i}`,
  task: i < 6 ? 'T1' : 'T2',
  category: i % 2 ? 'C1' : 'C2',
}));
const base = (i: number, copilot: string) => ({ D1: (i * 3 + copilot.length) % 7, D2: (i * 5 + 1) % 8 });

test('a known +2 on every dimension for one copilot is significant; an unchanged copilot is not', () => {
  const a = run(
    'A',
    queries.flatMap((q, i) => ['Ace', 'Bolt'].map((c) => judgment('A', q.id, c, base(i, c)))),
  );
  const b = run(
    'B',
    queries.flatMap((q, i) =>
      ['Ace', 'Bolt'].map((c) => {
        const s = base(i, c);
        return judgment('B', q.id, c, c === 'Ace' ? { D1: s.D1 + 2, D2: s.D2 + 2 } : s);
      }),
    ),
  );
  const c = compareRuns(a, b, queries, latticeProtocol, { top: 5 });
  const ace = c.copilots.Ace;
  expect(ace.overall.n).toBe(12);
  expect(ace.overall.delta).toBeCloseTo(4, 12);
  // Exact sign-flip test: only the all-plus and all-minus patterns are as extreme: 2 / 2^12.
  expect(ace.overall.pValue).toBeCloseTo(2 / 4096, 12);
  expect(ace.overall.significant).toBe(true);
  expect(ace.dimensions.D1).toMatchObject({ n: 12, significant: true });
  expect(ace.dimensions.D1.delta).toBeCloseTo(2, 12);
  expect(ace.dimensions.D2.delta).toBeCloseTo(2, 12);
  expect(ace.groups.task.T1).toMatchObject({ n: 6, delta: 4 });
  expect(ace.groups.category.C2.delta).toBeCloseTo(4, 12);

  const bolt = c.copilots.Bolt;
  expect(bolt.overall).toMatchObject({ n: 12, delta: 0, pValue: 1, significant: false });
  expect(bolt.dimensions.D1.significant).toBe(false);

  // Movers: only Ace moved, all by 4; ties broken by query id; capped at top; both rationales side by side.
  expect(c.movers).toHaveLength(5);
  expect(c.movers.every((m) => m.copilot === 'Ace' && m.delta === 4)).toBe(true);
  expect(c.movers.map((m) => m.queryId)).toEqual(['q00', 'q01', 'q02', 'q03', 'q04']);
  expect(c.movers[0].a.rationales!.D1).toMatch(/^A says/);
  expect(c.movers[0].b.rationales!.D1).toMatch(/^B says/);
  expect(c.movers[0].labels).toEqual({ task: 'T1', category: 'C2' });
  expect(c.rubricChanged).toBe(true);
  expect(c.judgeChanged).toBe(false);

  const md = renderComparison(c);
  expect(md).toContain('| Ace |');
  expect(md).toMatch(/\| Ace \|[^\n]*\*\*\+4\.00\*\*[^\n]*\| yes \|/);
  expect(md).toMatch(/\| Bolt \|[^\n]*\| no \|/);
  expect(md).toContain('A says D1=');
});

test('differences that cancel out are not significant, and a tiny sample cannot be', () => {
  const a = run(
    'A',
    queries.map((q, i) => judgment('A', q.id, 'Ace', base(i, 'Ace'))),
    ['Ace'],
  );
  const b = run(
    'B',
    queries.map((q, i) =>
      judgment('B', q.id, 'Ace', { D1: base(i, 'Ace').D1 + (i % 2 ? 1 : -1), D2: base(i, 'Ace').D2 }),
    ),
    ['Ace'],
  );
  const c = compareRuns(a, b, queries, latticeProtocol);
  expect(c.copilots.Ace.overall.delta).toBeCloseTo(0, 12);
  expect(c.copilots.Ace.overall.significant).toBe(false);
  expect(c.copilots.Ace.overall.pValue).toBeGreaterThan(0.5);
  expect(c.movers).toHaveLength(10); // default top 10 of 12 moved pairs

  // Four queries all +2: the best possible exact p is 2/16 = 0.125.
  const four = queries.slice(0, 4);
  const small = compareRuns(
    run(
      'A',
      four.map((q, i) => judgment('A', q.id, 'Ace', base(i, 'Ace'))),
      ['Ace'],
    ),
    run(
      'B',
      four.map((q, i) => judgment('B', q.id, 'Ace', { D1: base(i, 'Ace').D1 + 2, D2: base(i, 'Ace').D2 })),
      ['Ace'],
    ),
    four,
    latticeProtocol,
  );
  expect(small.copilots.Ace.overall.pValue).toBeCloseTo(0.125, 12);
  expect(small.copilots.Ace.overall.significant).toBe(false);
});

test('significance is Holm-corrected across copilots: five queries all +2 pass alone at α = 0.1 but not among three copilots', () => {
  // Exact sign-flip p for five equal shifts is 2/32 = 0.0625 (< 0.1); Holm over three copilots makes it 3 × 0.0625.
  const five = queries.slice(0, 5);
  const names = ['Ace', 'Bolt', 'Cog'];
  const a = run(
    'A',
    five.flatMap((q, i) => names.map((c) => judgment('A', q.id, c, base(i, c)))),
    names,
  );
  const b = run(
    'B',
    five.flatMap((q, i) =>
      names.map((c) => judgment('B', q.id, c, c === 'Ace' ? { D1: base(i, c).D1 + 2, D2: base(i, c).D2 } : base(i, c))),
    ),
    names,
  );
  const c = compareRuns(a, b, five, latticeProtocol, { alpha: 0.1 });
  expect(c.copilots.Ace.overall.pValue).toBeCloseTo(0.0625, 12);
  expect(c.copilots.Ace.overall.pAdjusted).toBeCloseTo(3 * 0.0625, 12);
  expect(c.copilots.Ace.overall.significant).toBe(false);
  expect(c.copilots.Bolt.overall.pAdjusted).toBe(1);
  expect(c.test).toContain('Holm');
  const alone = compareRuns(
    run(
      'A',
      a.judgments.filter((j) => j.copilot === 'Ace'),
      ['Ace'],
    ),
    run(
      'B',
      b.judgments.filter((j) => j.copilot === 'Ace'),
      ['Ace'],
    ),
    five,
    latticeProtocol,
    { alpha: 0.1 },
  );
  expect(alone.copilots.Ace.overall.significant).toBe(true);
  expect(renderComparison(c)).toContain('Holm');
});

test('failed judgments are unpaired, rank changes and copilots in one run only are reported', () => {
  const a = run(
    'A',
    [
      ...queries.map((q, i) => judgment('A', q.id, 'Ace', { D1: 5, D2: i % 3 })),
      ...queries.map((q, i) => judgment('A', q.id, 'Bolt', { D1: 6, D2: i % 3 })),
      ...queries.map((q) => judgment('A', q.id, 'Gone', { D1: 1, D2: 1 })),
    ],
    ['Ace', 'Bolt', 'Gone'],
  );
  const b = run(
    'B',
    [
      ...queries.map((q, i) => judgment('B', q.id, 'Ace', i === 3 ? null : { D1: 8, D2: i % 3 })),
      ...queries.map((q, i) => judgment('B', q.id, 'Bolt', { D1: 6, D2: i % 3 })),
      ...queries.map((q) => judgment('B', q.id, 'New', { D1: 1, D2: 1 })),
    ],
    ['Ace', 'Bolt', 'New'],
  );
  const c = compareRuns(a, b, queries, latticeProtocol);
  expect(c.onlyInA).toEqual(['Gone']);
  expect(c.onlyInB).toEqual(['New']);
  expect(Object.keys(c.copilots)).toEqual(['Ace', 'Bolt']);
  expect(c.copilots.Ace).toMatchObject({ okOnlyInA: 1, okOnlyInB: 0, rankA: 2, rankB: 1, rankChange: 1 });
  expect(c.copilots.Ace.overall.n).toBe(11);
  expect(c.copilots.Ace.overall.delta).toBeCloseTo(3, 12);
  expect(c.copilots.Bolt).toMatchObject({ rankA: 1, rankB: 2, rankChange: -1 });
});

test('CryptoAnalystBench-shaped judgments: groups by tags and compares the mean rank', () => {
  const cabQueries: Query[] = Array.from({ length: 8 }, (_, i) => ({
    id: `c${i}`,
    text: `cab ${i}`,
    tags: i === 0 ? 'defi\nrisk' : i < 4 ? 'defi' : 'macro',
  }));
  const dims = (x: number) => ({ relevance: x, depth: x, temporal: x, style: x });
  const side = (runId: string, flip: boolean) =>
    run(
      runId,
      cabQueries.flatMap((q, i) => [
        judgment(runId, q.id, 'Ace', dims(flip && i < 4 ? 9 : 6), { rank: flip && i < 4 ? 1 : 2, position: 1 }),
        judgment(runId, q.id, 'Bolt', dims(7), { rank: flip && i < 4 ? 2 : 1, position: 2 }),
      ]),
    );
  const c = compareRuns(side('A', false), side('B', true), cabQueries, cabProtocol);
  // CryptoAnalystBench compares each response's score, the mean of its four dimensions (9 vs 6: +3).
  expect(c.copilots.Ace.groups.tags.defi).toMatchObject({ n: 4, delta: 3 });
  expect(c.copilots.Ace.groups.tags.macro).toMatchObject({ n: 4, delta: 0 });
  expect(c.copilots.Ace.groups.tags.risk).toMatchObject({ n: 1, delta: 3 }); // several tags: the query counts in each
  expect(c.copilots.Ace.groups.task).toBeUndefined();
  expect(c.copilots.Ace.meanRank).toMatchObject({ n: 8, a: 2, b: 1.5, delta: -0.5 });
  expect(c.copilots.Bolt.meanRank).toMatchObject({ a: 1, b: 1.5, delta: 0.5 });
  expect(renderComparison(c)).toContain('## Mean rank within the query');
});

test('across two snapshots, positional ids pair only when the normalised texts match too; counts are reported', () => {
  // Snapshot A and B both number their queries q00..q05, but B replaced q02..q05 with unrelated questions.
  const qa: Query[] = Array.from({ length: 6 }, (_, i) => ({
    id: `q0${i}`,
    text: `Question number ${i}?`,
    task: 'T1',
  }));
  const qb: Query[] = qa.map((q, i) =>
    i < 2 ? { ...q, text: `  QUESTION number ${i}` } : { ...q, text: `An unrelated question ${i}` },
  );
  qb.push({ id: 'q06', text: 'Only in B', task: 'T1' });
  const a = {
    ...run(
      'A',
      qa.map((q, i) => judgment('A', q.id, 'Ace', { D1: i, D2: 1 })),
      ['Ace'],
    ),
    snapshotId: 'snap-a',
  };
  const b = {
    ...run(
      'B',
      qb.map((q, i) => judgment('B', q.id, 'Ace', { D1: i + 5, D2: 1 })),
      ['Ace'],
    ),
    snapshotId: 'snap-b',
  };
  const c = compareRuns(a, b, { a: qa, b: qb }, latticeProtocol);
  expect(c.sameSnapshot).toBe(false);
  expect(c.pairing).toEqual({ by: 'id+text', paired: 2, unpairedA: 4, unpairedB: 5, textMismatch: 4 });
  expect(c.copilots.Ace.overall.n).toBe(2);
  expect(c.copilots.Ace.overall.delta).toBeCloseTo(5, 12);
  expect(c.copilots.Ace).toMatchObject({ okOnlyInA: 4, okOnlyInB: 5 });
  expect(c.movers.map((m) => m.queryId)).toEqual(['q00', 'q01']);
  const md = renderComparison(c);
  expect(md).toContain('only queries with the same id and the same normalised text are paired');
  expect(md).toContain('queries paired: 2; unpaired: 4 in A, 5 in B (4 share an id but not the text)');

  // One snapshot: ids alone pair (texts come from one list), and the counts say so.
  const same = compareRuns(
    run(
      'A',
      qa.map((q) => judgment('A', q.id, 'Ace', { D1: 1, D2: 1 })),
      ['Ace'],
    ),
    run(
      'B',
      qa.map((q) => judgment('B', q.id, 'Ace', { D1: 2, D2: 1 })),
      ['Ace'],
    ),
    qa,
    latticeProtocol,
  );
  expect(same.pairing).toEqual({ by: 'id', paired: 6, unpairedA: 0, unpairedB: 0, textMismatch: 0 });
  expect(renderComparison(same)).toContain('queries paired: 6; unpaired: 0 in A, 0 in B\n');
});

test("compareStoredRuns pairs on id and text with each run's own snapshot", async () => {
  const store = new SqliteStore(path.join(tempDir(), 'results.db'));
  try {
    const qa: Query[] = [
      { id: 'q001', text: 'What is restaking?' },
      { id: 'q002', text: 'Is SOL cheap?' },
    ];
    const qb: Query[] = [
      { id: 'q001', text: 'what is restaking' },
      { id: 'q002', text: 'Who runs Ethena?' },
    ];
    const snapA = (
      await saveSnapshot(store, cabProtocol.labelsOf, { queries: qa, parentId: null, meta: { generator: 'test' } })
    ).snapshotId;
    const snapB = (
      await saveSnapshot(store, cabProtocol.labelsOf, { queries: qb, parentId: null, meta: { generator: 'test' } })
    ).snapshotId;
    for (const [runId, snapshotId, score] of [
      ['A', snapA, 3],
      ['B', snapB, 7],
    ] as const) {
      await store.createRun({
        runId,
        protocol: 'cab',
        snapshotId,
        rubricVersion: `rubric-${runId}`,
        judge,
        copilots: ['Ace'],
        startedAt: '2025-01-01T00:00:00Z',
        sourceRunId: null,
        config: {},
      });
      for (const q of [qa, qb][runId === 'A' ? 0 : 1])
        await store.putJudgment(judgment(runId, q.id, 'Ace', { relevance: score, depth: score }));
    }
    const { comparison } = await compareStoredRuns(store, 'A', 'B');
    expect(comparison.pairing).toMatchObject({ by: 'id+text', paired: 1, unpairedA: 1, unpairedB: 1, textMismatch: 1 });
    expect(comparison.copilots.Ace.overall.n).toBe(1);
  } finally {
    await store.close();
  }
});

test('CryptoAnalystBench error-taxonomy flags are not dimensions: compared as rates on their own', () => {
  const flags = (i: number, on: boolean) => ({ 'taxonomy.hallucination': on ? 1 : 0, 'taxonomy.stale_data': i % 2 });
  const a = run(
    'A',
    queries.map((q, i) =>
      judgment(
        'A',
        q.id,
        'Ace',
        { relevance: 5, depth: 6 },
        { scores: { relevance: 5, depth: 6, ...flags(i, i < 3) }, total: 11 },
      ),
    ),
    ['Ace'],
  );
  const b = run(
    'B',
    queries.map((q, i) =>
      judgment(
        'B',
        q.id,
        'Ace',
        { relevance: 7, depth: 6 },
        { scores: { relevance: 7, depth: 6, ...flags(i, i < 9) }, total: 13 },
      ),
    ),
    ['Ace'],
  );
  const c = compareRuns(a, b, queries, cabProtocol);
  expect(Object.keys(c.copilots.Ace.dimensions)).toEqual(['depth', 'relevance']);
  expect(c.copilots.Ace.taxonomy.hallucination).toMatchObject({ n: 12, a: 0.25, b: 0.75 });
  expect(c.copilots.Ace.taxonomy.hallucination.delta).toBeCloseTo(0.5, 12);
  expect(c.copilots.Ace.taxonomy.stale_data).toMatchObject({ n: 12, a: 0.5, b: 0.5, delta: 0 });
  const md = renderComparison(c);
  expect(md).toContain('## Error-taxonomy rates');
  expect(md).toContain('25% → 75% (+50)');
  expect(md).not.toMatch(/\| copilot \|[^\n]*taxonomy\./);
  expect(md).not.toMatch(/^\| taxonomy\./m);
});

test('compare.md shows HTML from rationales, queries and labels as text, never as markup', () => {
  const payload = '<script>alert(document.cookie)</script>';
  const hostile: Query[] = queries.map((q, i) => ({
    ...q,
    text: i === 0 ? `<img src=x onerror=alert(1)> ${q.text}` : q.text,
    task: i === 0 ? '<b>T1</b>' : q.task,
  }));
  const withRationale = (runId: string, s: Record<string, number>, q: Query) =>
    judgment(runId, q.id, 'Ace', s, { rationales: { D1: `${payload} ${runId}`, D2: 'fine' } });
  const a = run(
    'A',
    hostile.map((q, i) => withRationale('A', base(i, 'Ace'), q)),
    ['Ace'],
  );
  const b = run(
    'B',
    hostile.map((q, i) => withRationale('B', { D1: base(i, 'Ace').D1 + 3, D2: base(i, 'Ace').D2 }, q)),
    ['Ace'],
  );
  const md = renderComparison(compareRuns(a, b, hostile, latticeProtocol, { top: 3 }));
  expect(md).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt; A');
  expect(md).toContain('&lt;img src=x onerror=alert(1)&gt;');
  expect(md).toContain('&lt;b&gt;T1&lt;/b&gt;');
  expect(md).not.toMatch(/<script|<img|<b>/);
});
