import { compareRuns, type CompareRun } from '../../../core/compare/compare';
import { assertGateable, gate, gateJunit } from '../../../core/compare/gate';
import { InputError } from '../../../core/model/inputError';
import { seededRandom } from '../../../core/stats/random';
import type { Query, StoredJudgment } from '../../../core/model/types';
import { latticeProtocol } from '../../../rubrics/lattice';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };
const DIMS = ['D1', 'D2', 'D3'];

function judgment(runId: string, queryId: string, copilot: string, scores: Record<string, number>): StoredJudgment {
  return {
    runId,
    queryId,
    copilot,
    rubricVersion: 'v1',
    status: 'ok',
    scores,
    rationales: null,
    total: Object.values(scores).reduce((a, b) => a + b, 0),
    rank: null,
    position: null,
    error: null,
    judge: { ...judge, rubricVersion: 'v1' },
    attempts: 1,
    createdAt: '2025-01-01T00:00:00Z',
  };
}

const run = (runId: string, judgments: StoredJudgment[], copilots: string[]): CompareRun => ({
  runId,
  protocol: 'lattice',
  snapshotId: 'snap-1',
  rubricVersion: 'v1',
  judge,
  copilots,
  judgments,
});
const queries = (n: number): Query[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `q${String(i).padStart(3, '0')}`,
    text: `question ${i}`,
    task: i % 2 ? 'T1' : 'T2',
    category: `C${1 + (i % 3)}`,
  }));
/** A response's true quality per dimension, 2..8 so that a point either way stays on the 0..10 scale. */
const truth = (q: number, copilot: string, d: string) => 2 + ((q * 7 + copilot.length * 3 + d.charCodeAt(1) * 5) % 7);

test('a copilot a point worse on every dimension regresses (named with its dimensions); the unchanged copilot is not named', () => {
  const qs = queries(20);
  const copilots = ['Ace', 'Bolt'];
  const side = (runId: string, worse: string | null) =>
    run(
      runId,
      qs.flatMap((q, i) =>
        copilots.map((c) =>
          judgment(runId, q.id, c, Object.fromEntries(DIMS.map((d) => [d, truth(i, c, d) - (c === worse ? 1 : 0)]))),
        ),
      ),
      copilots,
    );
  const comparison = compareRuns(side('A', null), side('B', 'Bolt'), qs, latticeProtocol);
  const result = gate(comparison);
  expect(result.baseline).toBe('A');
  expect(result.candidate).toBe('B');
  expect(result.improvements).toEqual([]);
  expect(result.regressions.map((r) => r.copilot)).toEqual(['Bolt']);
  const [bolt] = result.regressions;
  expect(Object.keys(bolt).sort()).toEqual(['ci95', 'copilot', 'delta', 'dimensions', 'dropTest', 'p', 'pHolm']);
  expect(bolt.delta).toBeCloseTo(-3, 12);
  expect(bolt.ci95!.high).toBeLessThan(0);
  expect(bolt.pHolm).toBeLessThan(0.05);
  expect(bolt.dimensions.map((d) => [d.dimension, d.delta, d.significant])).toEqual(DIMS.map((d) => [d, -1, true]));
  // The allowed drop: a 3-point fall passes a gate that tolerates 3 points, fails one that tolerates 2.9.
  expect(gate(comparison, { maxDrop: 3 }).regressions).toEqual([]);
  expect(gate(comparison, { maxDrop: 2.9 }).regressions.map((r) => r.copilot)).toEqual(['Bolt']);
  // The other way round it is an improvement, and nothing regressed.
  const reverse = gate(compareRuns(side('B', 'Bolt'), side('A', null), qs, latticeProtocol));
  expect(reverse.regressions).toEqual([]);
  expect(reverse.improvements.map((r) => r.copilot)).toEqual(['Bolt']);
});

/**
 * Judge noise alone must not fail the gate at α. The same responses (fixed true scores) are judged twice by a judge
 * whose every score carries independent Gaussian noise (sd 1 point, rounded, clamped to 0..10), for three copilots over
 * 30 queries, 400 times. The test is two-sided and Holm-corrected across copilots, so the chance that any copilot is
 * flagged as a *drop* is at most α/2 per gate (plus the small anti-conservatism of 1000 permutation draws).
 * Observed: 5 false failures in 400 gates = 1.3% (Wilson 95% interval 0.5%–2.9%) at α = 0.05 — below α/2, as expected.
 */
test('the same responses judged again by a noisy judge pass the gate at α: false-failure rate over 400 repetitions', () => {
  const qs = queries(30);
  const copilots = ['Ace', 'Bolt', 'Cog'];
  const alpha = 0.05;
  const reps = 400;
  let failures = 0;
  for (let r = 0; r < reps; r++) {
    const rng = seededRandom(`noise:${r}`);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    const noisy = (x: number) => Math.min(10, Math.max(0, Math.round(x + normal())));
    const side = (runId: string) =>
      run(
        runId,
        qs.flatMap((q, i) =>
          copilots.map((c) =>
            judgment(runId, q.id, c, Object.fromEntries(DIMS.map((d) => [d, noisy(truth(i, c, d))]))),
          ),
        ),
        copilots,
      );
    const result = gate(compareRuns(side('A'), side('B'), qs, latticeProtocol, { alpha, iterations: 1000 }));
    if (result.regressions.length) failures++;
  }
  const rate = failures / reps;
  const wilson = wilsonInterval(failures, reps);
  // Not above α: the observed rate is at most α and its interval reaches below α.
  expect(rate).toBeLessThanOrEqual(alpha);
  expect(wilson.low).toBeLessThan(alpha);
});

function wilsonInterval(k: number, n: number): { low: number; high: number } {
  const z = 1.96;
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return { low: centre - half, high: centre + half };
}

test('runs on different snapshots are refused with the reason', () => {
  expect(() => assertGateable({ runId: 'A', snapshotId: 's1' }, { runId: 'B', snapshotId: 's2' })).toThrow(InputError);
  expect(() => assertGateable({ runId: 'A', snapshotId: 's1' }, { runId: 'B', snapshotId: 's2' })).toThrow(
    /snapshot s1.*snapshot s2/,
  );
  expect(() => assertGateable({ runId: 'A', snapshotId: 's1' }, { runId: 'B', snapshotId: 's1' })).not.toThrow();
});

test('JUnit XML: one testcase per copilot, a regression is a failure, names escaped, the document well formed', () => {
  const qs = queries(12);
  const copilots = ['Ace', 'B<&"ob>'];
  const side = (runId: string, worse: string | null) =>
    run(
      runId,
      qs.flatMap((q, i) =>
        copilots.map((c) =>
          judgment(runId, q.id, c, Object.fromEntries(DIMS.map((d) => [d, truth(i, c, d) - (c === worse ? 2 : 0)]))),
        ),
      ),
      copilots,
    );
  const xml = gateJunit(compareRuns(side('A', null), side('B', 'B<&"ob>'), qs, latticeProtocol));
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')).toBe(true);
  expect(xml).toMatch(/<testsuites [^>]*tests="2" failures="1"/);
  const cases = [...xml.matchAll(/<testcase classname="judgeflow.gate" name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)];
  expect(cases.map((m) => m[1])).toEqual(['Ace', 'B&lt;&amp;&quot;ob&gt;']);
  expect(cases[0][2]).not.toContain('<failure');
  expect(cases[1][2]).toMatch(/^<failure type="regression" message="B&lt;&amp;&quot;ob&gt;: REGRESSION/);
  expectWellFormed(xml);
});

/** Tags balance and nest, attribute values are quoted, and no bare & or < is left in text. */
function expectWellFormed(xml: string): void {
  const body = xml.replace(/^<\?xml[^?]*\?>\n/, '');
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w.-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of body.matchAll(tag)) {
    const text = body.slice(last, m.index);
    expect(text).not.toMatch(/<|&(?!(amp|lt|gt|quot|apos);)/);
    last = m.index! + m[0].length;
    if (m[4]) continue;
    if (m[1]) expect(stack.pop()).toBe(m[2]);
    else stack.push(m[2]);
  }
  expect(body.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}
