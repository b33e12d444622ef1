import { protocolFor } from '../../../rubrics';
import { summariseCab } from '../../../rubrics/cab/aggregate';
import { errorClusters } from '../../../rubrics/cab/clustering';
import { taxonomyKey } from '../../../rubrics/cab/judge';
import { rankingMessage, scoringMessage, systemMessage, taxonomyMessages } from '../../../rubrics/cab/prompts';
import type { CabRubric } from '../../../rubrics/cab/rubric';
import { cabResponseScore } from '../../../rubrics/cab/score';
import type { Query, StoredJudgment, StoredResponse } from '../../../core/model/types';

const cab = protocolFor('cab');
const rubric = cab.loadRubric(cab.defaultRubricDir) as CabRubric;
const query: Query = { id: 'q1', text: 'Is SOL a buy before the ETF decision?' };
const HEADINGS = [
  'TEMPORAL RELEVANCE [temporal_relevance]',
  'DATA CONSISTENCY [data_consistency]',
  'DEPTH [depth]',
  'RELEVANCE [relevance]',
];
const count = (text: string, part: string) => text.split(part).length - 1;

describe('the criteria the judge sees', () => {
  test("the four dimensions in the reference's order (script.py), each with the reference's number of points", () => {
    expect(rubric.data.dimensions.map((d) => d.id)).toEqual([
      'temporal_relevance',
      'data_consistency',
      'depth',
      'relevance',
    ]);
    // script.py lists 4, 6, 5 and 5 points under the four headings; every one is kept, in judgeflow's words.
    expect(rubric.data.dimensions.map((d) => d.criteria.length)).toEqual([4, 6, 5, 5]);
  });

  test('every scoring turn carries every criterion once, in that order; so do the system message and the ranking turn', () => {
    const shown = { label: 'Response #2', text: 'Buy a little.', timestamp: null, context: null };
    const texts = [
      scoringMessage(rubric, query, shown, '2026-03-05').content,
      systemMessage(rubric, '2026-03-05').content,
      rankingMessage(rubric, query, ['Response #1', 'Response #2'], '2026-03-05').content,
    ];
    for (const text of texts) {
      const at = HEADINGS.map((h) => text.indexOf(h));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      for (const d of rubric.data.dimensions) for (const c of d.criteria) expect(count(text, c)).toBe(1);
    }
    expect(texts[0]).not.toMatch(/written at/i);
    expect(texts[0]).toContain('Evaluation date: 2026-03-05');
  });

  test('the error taxonomy prompt gives each flag its meaning, typical symptoms and how to check it', () => {
    const text = taxonomyMessages(rubric, query, { text: 'Buy.', timestamp: null, context: null }, '2026-03-05')
      .map((m) => m.content)
      .join('\n');
    for (const f of rubric.data.taxonomy) {
      expect(f.meaning && f.check && f.symptoms?.length).toBeTruthy();
      expect(text).toContain(`What it means: ${f.meaning}`);
      for (const s of f.symptoms!) expect(text).toContain(`- ${s}`);
      expect(text).toContain(`How to check: ${f.check}`);
    }
  });
});

// Three copilots, four queries, failures of every kind the reference fills in.
const COPILOTS = ['A', 'B', 'C'];
const queries: Query[] = ['q1', 'q2', 'q3', 'q4'].map((id) => ({ id, text: `query ${id}` }));
const scoresOf = (base: number) => ({
  temporal_relevance: base,
  data_consistency: base + 1,
  depth: base - 1,
  relevance: base,
});
const flags = (present: number[]) =>
  Object.fromEntries(rubric.data.taxonomy.map((f, i) => [taxonomyKey(f.id), present.includes(i) ? 1 : 0]));
function judgment(queryId: string, copilot: string, over: Partial<StoredJudgment>): StoredJudgment {
  return {
    runId: 'r',
    queryId,
    copilot,
    rubricVersion: 'v',
    status: 'ok',
    scores: null,
    rationales: null,
    total: null,
    rank: null,
    position: null,
    error: null,
    judge: { model: 'j', baseURL: 'http://j', temperature: 0.1, rubricVersion: 'v', seed: null },
    attempts: 1,
    createdAt: 'now',
    ...over,
  } as StoredJudgment;
}
const ok = (
  q: string,
  c: string,
  base: number,
  position: number,
  rank: number | null,
  present: number[] | null = [],
) => {
  const scores = { ...scoresOf(base), ...(present ? flags(present) : {}) };
  return judgment(q, c, { scores, total: 4 * base, position, rank });
};
const judgments: StoredJudgment[] = [
  // q1: all fine.
  ok('q1', 'A', 8, 1, 1, [0]),
  ok('q1', 'B', 6, 2, 2, [1, 2]),
  ok('q1', 'C', 4, 3, 3),
  // q2: B's scoring failed (its flags were still checked); the ranking succeeded and ranks it.
  ok('q2', 'A', 7, 2, 2),
  judgment('q2', 'B', { status: 'failed', scores: flags([3]), error: 'invalid answer', position: 1, rank: 1 }),
  ok('q2', 'C', 9, 3, 3, null),
  // q3: the ranking turn failed; A's and C's sums tie (shown order decides), B is higher.
  ok('q3', 'A', 5, 3, null),
  ok('q3', 'B', 7, 1, null),
  ok('q3', 'C', 5, 2, null),
  // q4: C's answer was never collected (no conversation row); A and B ranked.
  ok('q4', 'A', 6, 2, 2),
  ok('q4', 'B', 8, 1, 1),
];
const response = (q: string, c: string, status: StoredResponse['status'] = 'ok') =>
  ({ runId: 'r', queryId: q, copilot: c, status, text: status === 'ok' ? 'x' : null }) as StoredResponse;
const responses = queries.flatMap((q) =>
  COPILOTS.map((c) => response(q.id, c, q.id === 'q4' && c === 'C' ? 'failed' : 'ok')),
);

test("with failures: judgeflow's figures exclude them, the reference-rule figures apply the reference's rules to the same verdicts", () => {
  const s = summariseCab({
    queries,
    copilots: COPILOTS,
    responses,
    judgments,
    plan: undefined,
    taxonomy: true,
    minScore: 1,
  });
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const dims = ['temporal_relevance', 'data_consistency', 'depth', 'relevance'];
  const byKey = new Map(judgments.map((j) => [`${j.queryId}/${j.copilot}`, j]));
  for (const c of COPILOTS) {
    // judgeflow: ok verdicts only; the headline is the mean of the four dimension means.
    const mine = judgments.filter((j) => j.copilot === c && j.status === 'ok');
    const dimMeans = dims.map((d) => mean(mine.map((j) => j.scores![d])));
    expect(s.systems[c].score).toBeCloseTo(mean(dimMeans), 12);
    expect(s.systems[c].score).toBeCloseTo(mean(mine.map((j) => cabResponseScore(j)!)), 12);

    // The reference, recomputed here: every query × copilot a row; a failure scores 1 everywhere.
    const filled = queries.map((q) => {
      const j = byKey.get(`${q.id}/${c}`);
      return j?.status === 'ok' ? j.scores! : Object.fromEntries(dims.map((d) => [d, 1]));
    });
    const refDims = dims.map((d) => mean(filled.map((x) => x[d])));
    expect(s.referenceRules.systems[c].score).toBeCloseTo(mean(refDims), 12);
  }
  // Ranks: q3 by sums (B 28, then A and C tie at 20 — C was shown before A), q4's uncollected C gets N = 3.
  const refRanks = { A: [1, 2, 3, 2], B: [2, 1, 1, 1], C: [3, 3, 2, 3] };
  for (const c of COPILOTS) {
    expect(s.referenceRules.systems[c].meanRank).toBeCloseTo(mean(refRanks[c as 'A']), 12);
    expect(s.referenceRules.systems[c].wins).toBe(refRanks[c as 'A'].filter((r) => r === 1).length);
  }
  // judgeflow's mean rank is over the queries whose ranking succeeded.
  expect(s.systems.C.meanRank).toBeCloseTo(mean([3, 3]), 12);
  expect(s.referenceRules.rankedByTotal).toBe(1);
  // Differences: B/q2 and C/q4 scores; q3's three ranks and C/q4's rank; C/q2's check failed (C/q4 was never collected, so never checked).
  expect(s.referenceRules.differ).toEqual({ scores: 2, ranks: 4, flags: 1 });
  // Flags: a failed scoring keeps its flags (B/q2 counted); C/q2's failed check is missing in judgeflow, all 1 under the reference.
  expect(s.systems.B.taxonomy!.n).toBe(4);
  expect(s.systems.C.taxonomy).toMatchObject({ n: 2, failed: 1 });
  const first = rubric.data.taxonomy[0].id;
  expect(s.systems.C.taxonomy!.rates[first]).toBe(0);
  expect(s.referenceRules.systems.C.taxonomy![first]).toBeCloseTo(1 / 3, 12);
});

test('the error-clustering sheet: per copilot and dimension, responses scoring 8 or less, grouped by the flags set on them', () => {
  const clusters = errorClusters(rubric, queries, COPILOTS, judgments);
  // A scores 8/9/7/8 on q1 (base 8): three dimensions ≤ 8, each with flag 0 present.
  const a1 = clusters.filter(
    (c) => c.copilot === 'A' && c.exampleQueries.includes('query q1') && c.flag === rubric.data.taxonomy[0].id,
  );
  expect(a1.map((c) => c.dimension).sort()).toEqual(['depth', 'relevance', 'temporal_relevance']);
  // C's q2 scores 9/10/8/9: only depth is low, and its check failed, so it has no flag.
  const c2 = clusters.filter((c) => c.copilot === 'C' && c.exampleQueries.includes('query q2'));
  expect(c2.map((c) => [c.dimension, c.flag])).toEqual([['depth', null]]);
  // B's q1 has two flags: it counts in both groups.
  const b1 = clusters.filter((c) => c.copilot === 'B' && c.dimension === 'relevance');
  expect(b1.filter((c) => c.flag !== null).map((c) => c.flag)).toEqual([
    rubric.data.taxonomy[1].id,
    rubric.data.taxonomy[2].id,
  ]);
  // Failed verdicts are not low scores.
  expect(clusters.every((c) => c.lowScores <= c.queries)).toBe(true);
});
