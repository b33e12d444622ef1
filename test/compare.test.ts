import { compareRuns, type CompareRun } from '../core/compare';
import { renderComparison } from '../core/compareMarkdown';
import type { Query, StoredJudgment } from '../core/types';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };

function judgment(runId: string, queryId: string, copilot: string, scores: Record<string, number> | null, extra: Partial<StoredJudgment> = {}): StoredJudgment {
  const total = scores ? Object.values(scores).reduce((a, b) => a + b, 0) : null;
  return {
    runId,
    queryId,
    copilot,
    rubricVersion: `rubric-${runId}`,
    status: scores ? 'ok' : 'failed',
    scores,
    rationales: scores ? Object.fromEntries(Object.keys(scores).map((d) => [d, `${runId} says ${d}=${scores[d]} for ${queryId}`])) : null,
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
  return { runId, protocol: 'lattice', snapshotId: 'snap-1', rubricVersion: `rubric-${runId}`, judge, copilots, judgments };
}

// 12 queries, two task labels, two categories; per-query scores that vary so the tests are not trivially constant.
const queries: Query[] = Array.from({ length: 12 }, (_, i) => ({ id: `q${String(i).padStart(2, '0')}`, text: `question ${i}`, task: i < 6 ? 'T1' : 'T2', category: i % 2 ? 'C1' : 'C2' }));
const base = (i: number, copilot: string) => ({ D1: (i * 3 + copilot.length) % 7, D2: (i * 5 + 1) % 8 });

test('a known +2 on every dimension for one copilot is significant; an unchanged copilot is not', () => {
  const a = run('A', queries.flatMap((q, i) => ['Ace', 'Bolt'].map((c) => judgment('A', q.id, c, base(i, c)))));
  const b = run(
    'B',
    queries.flatMap((q, i) =>
      ['Ace', 'Bolt'].map((c) => {
        const s = base(i, c);
        return judgment('B', q.id, c, c === 'Ace' ? { D1: s.D1 + 2, D2: s.D2 + 2 } : s);
      }),
    ),
  );
  const c = compareRuns(a, b, queries, { top: 5 });
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
  const a = run('A', queries.map((q, i) => judgment('A', q.id, 'Ace', base(i, 'Ace'))), ['Ace']);
  const b = run('B', queries.map((q, i) => judgment('B', q.id, 'Ace', { D1: base(i, 'Ace').D1 + (i % 2 ? 1 : -1), D2: base(i, 'Ace').D2 })), ['Ace']);
  const c = compareRuns(a, b, queries);
  expect(c.copilots.Ace.overall.delta).toBeCloseTo(0, 12);
  expect(c.copilots.Ace.overall.significant).toBe(false);
  expect(c.copilots.Ace.overall.pValue).toBeGreaterThan(0.5);
  expect(c.movers).toHaveLength(10); // default top 10 of 12 moved pairs

  // Four queries all +2: the best possible exact p is 2/16 = 0.125.
  const four = queries.slice(0, 4);
  const small = compareRuns(
    run('A', four.map((q, i) => judgment('A', q.id, 'Ace', base(i, 'Ace'))), ['Ace']),
    run('B', four.map((q, i) => judgment('B', q.id, 'Ace', { D1: base(i, 'Ace').D1 + 2, D2: base(i, 'Ace').D2 })), ['Ace']),
    four,
  );
  expect(small.copilots.Ace.overall.pValue).toBeCloseTo(0.125, 12);
  expect(small.copilots.Ace.overall.significant).toBe(false);
});

test('failed judgments are unpaired, rank changes and copilots in one run only are reported', () => {
  const a = run('A', [
    ...queries.map((q, i) => judgment('A', q.id, 'Ace', { D1: 5, D2: i % 3 })),
    ...queries.map((q, i) => judgment('A', q.id, 'Bolt', { D1: 6, D2: i % 3 })),
    ...queries.map((q) => judgment('A', q.id, 'Gone', { D1: 1, D2: 1 })),
  ], ['Ace', 'Bolt', 'Gone']);
  const b = run('B', [
    ...queries.map((q, i) => judgment('B', q.id, 'Ace', i === 3 ? null : { D1: 8, D2: i % 3 })),
    ...queries.map((q, i) => judgment('B', q.id, 'Bolt', { D1: 6, D2: i % 3 })),
    ...queries.map((q) => judgment('B', q.id, 'New', { D1: 1, D2: 1 })),
  ], ['Ace', 'Bolt', 'New']);
  const c = compareRuns(a, b, queries);
  expect(c.onlyInA).toEqual(['Gone']);
  expect(c.onlyInB).toEqual(['New']);
  expect(Object.keys(c.copilots)).toEqual(['Ace', 'Bolt']);
  expect(c.copilots.Ace).toMatchObject({ okOnlyInA: 1, okOnlyInB: 0, rankA: 2, rankB: 1, rankChange: 1 });
  expect(c.copilots.Ace.overall.n).toBe(11);
  expect(c.copilots.Ace.overall.delta).toBeCloseTo(3, 12);
  expect(c.copilots.Bolt).toMatchObject({ rankA: 1, rankB: 2, rankChange: -1 });
});

test('CryptoAnalystBench-shaped judgments: groups by tags and compares the mean rank', () => {
  const cabQueries: Query[] = Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, text: `cab ${i}`, tags: i === 0 ? 'defi\nrisk' : i < 4 ? 'defi' : 'macro' }));
  const dims = (x: number) => ({ relevance: x, depth: x, temporal: x, style: x });
  const side = (runId: string, flip: boolean) =>
    run(
      runId,
      cabQueries.flatMap((q, i) => [
        judgment(runId, q.id, 'Ace', dims(flip && i < 4 ? 9 : 6), { rank: flip && i < 4 ? 1 : 2, position: 1 }),
        judgment(runId, q.id, 'Bolt', dims(7), { rank: flip && i < 4 ? 2 : 1, position: 2 }),
      ]),
    );
  const c = compareRuns(side('A', false), side('B', true), cabQueries);
  expect(c.copilots.Ace.groups.tags.defi).toMatchObject({ n: 4, delta: 12 });
  expect(c.copilots.Ace.groups.tags.macro).toMatchObject({ n: 4, delta: 0 });
  expect(c.copilots.Ace.groups.tags.risk).toMatchObject({ n: 1, delta: 12 }); // several tags: the query counts in each
  expect(c.copilots.Ace.groups.task).toBeUndefined();
  expect(c.copilots.Ace.meanRank).toMatchObject({ n: 8, a: 2, b: 1.5, delta: -0.5 });
  expect(c.copilots.Bolt.meanRank).toMatchObject({ a: 1, b: 1.5, delta: 0.5 });
  expect(renderComparison(c)).toContain('## Mean rank within the query');
});
