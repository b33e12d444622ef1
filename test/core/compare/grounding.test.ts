import { compareRuns, type CompareRun } from '../../../core/compare/compare';
import type { GroundingClaim, StoredGroundingCheck } from '../../../core/grounding/checks';
import type { Query, StoredJudgment } from '../../../core/model/types';
import { renderComparison } from '../../../core/compare/markdown';
import { buildCompareHtml } from '../../../core/compare/html';

const queries: Query[] = Array.from({ length: 12 }, (_, i) => ({
  id: `q${String(i).padStart(2, '0')}`,
  text: `query ${i}`,
}));
const judgment = (queryId: string, copilot: string): StoredJudgment => ({
  runId: 'r',
  queryId,
  copilot,
  rubricVersion: 'rv',
  status: 'ok',
  scores: { D1: 5 },
  rationales: null,
  total: 50,
  rank: null,
  position: null,
  error: null,
  judge: { model: 'j', baseURL: 'u', temperature: 0, rubricVersion: 'rv' },
  attempts: 1,
  createdAt: 'now',
});
/** `verified` of four claims verified, the rest fabricated. */
const check = (queryId: string, copilot: string, verified: number): StoredGroundingCheck => ({
  runId: 'r',
  queryId,
  copilot,
  groundingVersion: 'gv',
  judgeName: '',
  status: 'ok',
  label: null,
  error: null,
  judge: { model: 'j', baseURL: 'u' },
  attempts: 1,
  createdAt: 'now',
  claims: Array.from({ length: 4 }, (_, index): GroundingClaim => ({
    index,
    text: `c${index}`,
    status: index < verified ? 'exact' : 'fabricated',
    excerpt: null,
    entity: null,
    metric: null,
    value: null,
    unit: null,
    citation: null,
  })),
});
const run = (runId: string, grounding: StoredGroundingCheck[] | undefined): CompareRun => ({
  runId,
  protocol: 'lattice',
  snapshotId: 's',
  rubricVersion: 'rv',
  judge: { model: 'j', baseURL: 'u', temperature: 0 },
  copilots: ['A', 'B'],
  judgments: queries.flatMap((q) => [judgment(q.id, 'A'), judgment(q.id, 'B')]),
  grounding,
});
const protocol = { labelsOf: () => ({}), scoreKey: () => ({ kind: 'dimension' as const }) };

test('grounding deltas: per-query verification rates paired between the runs, tested and Holm-corrected like the scores', () => {
  // A improves from 2/4 to 4/4 on every query; B stays at 3/4.
  const a = run(
    'ra',
    queries.flatMap((q) => [check(q.id, 'A', 2), check(q.id, 'B', 3)]),
  );
  const b = run(
    'rb',
    queries.flatMap((q) => [check(q.id, 'A', 4), check(q.id, 'B', 3)]),
  );
  const c = compareRuns(a, b, queries, protocol);
  expect(c.grounding!.A).toMatchObject({
    rateA: 0.5,
    rateB: 1,
    verificationRate: { n: 12, a: 0.5, b: 1, delta: 0.5, significant: true },
  });
  expect(c.grounding!.B).toMatchObject({
    rateA: 0.75,
    rateB: 0.75,
    verificationRate: { n: 12, delta: 0, significant: false },
  });
  expect(c.grounding!.A.verificationRate.pAdjusted).toBeGreaterThanOrEqual(c.grounding!.A.verificationRate.pValue!);
  expect(c.runA).not.toHaveProperty('grounding');
  expect(renderComparison(c)).toContain('## Grounding: verification rate');
  expect(buildCompareHtml(c)).toContain('id="grounding-deltas"');
  // A run without grounding checks: no grounding block.
  expect(compareRuns(run('ra', undefined), b, queries, protocol).grounding).toBeUndefined();
});
