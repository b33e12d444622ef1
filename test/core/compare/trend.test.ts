import { renderTrend } from '../../../client/commands/trend';
import { trend, type TrendRunInput } from '../../../core/compare/trend';
import type { Query, StoredJudgment } from '../../../core/model/types';
import { latticeProtocol } from '../../../rubrics/lattice';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };
const j = (runId: string, queryId: string, copilot: string, score: number): StoredJudgment => ({
  runId,
  queryId,
  copilot,
  rubricVersion: 'v1',
  status: 'ok',
  scores: { D1: score, D2: score },
  rationales: null,
  total: 2 * score,
  rank: null,
  position: null,
  error: null,
  judge: { ...judge, rubricVersion: 'v1' },
  attempts: 1,
  createdAt: '2025-01-01T00:00:00Z',
});
const qs = (prefix: string, n: number, from = 0): Query[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `q${String(i + from).padStart(2, '0')}`,
    text: `${prefix} question ${i + from}`,
    task: 'T1',
    category: 'C1',
  }));
const base = (i: number, c: string) => 2 + ((i * 5 + c.length) % 6);

function runOf(
  runId: string,
  startedAt: string,
  snapshotId: string,
  queries: Query[],
  shift: Record<string, number>,
): TrendRunInput {
  const copilots = ['Ace', 'Bolt'];
  return {
    runId,
    startedAt,
    status: 'completed',
    snapshotId,
    protocol: 'lattice',
    rubricVersion: 'v1',
    judge,
    copilots,
    queries,
    judgments: queries.flatMap((q) =>
      copilots.map((c) => j(runId, q.id, c, base(Number(q.id.slice(1)), c) + (shift[c] ?? 0))),
    ),
  };
}

test('runs in time order with scores and intervals; the paired test against the previous run, on shared queries across snapshots', () => {
  const s1 = qs('same', 16);
  // The third run's snapshot keeps q08..q15 and adds q16..q23 (a refreshed set): 8 queries shared.
  const s2 = [...qs('same', 8, 8), ...qs('same', 8, 16)];
  const t = trend(
    [
      runOf('r3', '2025-01-03T00:00:00Z', 'snap-2', s2, { Bolt: -2 }),
      runOf('r1', '2025-01-01T00:00:00Z', 'snap-1', s1, {}),
      runOf('r2', '2025-01-02T00:00:00Z', 'snap-1', s1, {}),
    ],
    latticeProtocol,
  );
  expect(t.runs.map((r) => r.runId)).toEqual(['r1', 'r2', 'r3']);
  const [r1, r2, r3] = t.runs;
  expect(r1.vsPrevious).toBeNull();
  expect(r1.copilots.Ace.n).toBe(16);
  expect(r1.copilots.Ace.ci95!.low).toBeLessThan(r1.copilots.Ace.score!);
  expect(r1.copilots.Ace.ci95!.high).toBeGreaterThan(r1.copilots.Ace.score!);
  expect(r2.vsPrevious).toMatchObject({
    runId: 'r1',
    overlap: { by: 'id', paired: 16 },
    regressions: [],
    improvements: [],
  });
  expect(r2.vsPrevious!.copilots.Ace).toMatchObject({ n: 16, delta: 0, significant: false });
  expect(r3.vsPrevious!.overlap).toEqual({ by: 'id+text', paired: 8, unpairedA: 8, unpairedB: 8, textMismatch: 0 });
  expect(r3.vsPrevious!.copilots.Bolt).toMatchObject({ n: 8, delta: -4, significant: true });
  expect(r3.vsPrevious!.regressions).toEqual(['Bolt']);
  expect(r3.vsPrevious!.copilots.Ace.delta).toBe(0);

  const text = renderTrend(t);
  expect(text).toContain('vs r2: another snapshot, compared on 8 shared queries (8 new, 8 gone)');
  expect(text).toMatch(/Bolt: [^\n]*Δ -4\.00 over 8[^\n]*REGRESSION/);
  expect(text).not.toMatch(/Ace: [^\n]*REGRESSION/);
});
