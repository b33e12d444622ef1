import { crossCopilotConflicts, groundingReport } from '../../../core/grounding/report';
import { studentTQuantile, wilsonInterval } from '../../../core/stats/stats';
import { limitContext, type GroundingClaim, type StoredGroundingCheck } from '../../../core/grounding/checks';
import type { Query, StoredResponse } from '../../../core/model/types';

const claim = (status: GroundingClaim['status'], over: Partial<GroundingClaim> = {}): GroundingClaim => ({
  index: 0,
  text: `a ${status} claim`,
  status,
  excerpt: status === 'fabricated' ? null : 'ctx',
  entity: null,
  metric: null,
  value: null,
  unit: null,
  citation: null,
  ...over,
});
const check = (
  queryId: string,
  copilot: string,
  claims: GroundingClaim[],
  over: Partial<StoredGroundingCheck> = {},
): StoredGroundingCheck => ({
  runId: 'r',
  queryId,
  copilot,
  groundingVersion: 'gv',
  judgeName: '',
  status: 'ok',
  label: null,
  claims: claims.map((c, index) => ({ ...c, index })),
  error: null,
  judge: { model: 'j', baseURL: 'http://j' },
  attempts: 1,
  createdAt: 'now',
  ...over,
});
const response = (
  queryId: string,
  copilot: string,
  context: string | null,
  over: Partial<StoredResponse> = {},
): StoredResponse => ({
  runId: 'r',
  queryId,
  copilot,
  status: 'ok',
  text: 'answer',
  raw: null,
  html: null,
  adapter: 'http',
  startedAt: null,
  finishedAt: null,
  latencyMs: null,
  errorKind: null,
  errorMessage: null,
  conversationId: null,
  context,
  ...over,
});
const queries: Query[] = ['q1', 'q2', 'q3'].map((id, i) => ({ id, text: id, tag: i < 2 ? 'Markets' : 'Security' }));
const report = (
  stored: StoredGroundingCheck[],
  responses: StoredResponse[],
  checks: Array<'hallucination' | 'citations'> = ['hallucination', 'citations'],
) =>
  groundingReport({
    groundingVersion: 'gv',
    checks,
    copilots: ['A', 'B'],
    queries,
    responses,
    stored,
    labelsOf: (q) => ({ tag: [String(q.tag)] }),
    seed: 's',
  });

test('verification rate: exact and derivable over all checked claims; no-context answers listed, never counted; failed checks counted apart', () => {
  const stored = [
    check('q1', 'A', [claim('exact'), claim('derivable'), claim('fabricated'), claim('contradicted')], {
      label: 'partial',
    }),
    check('q2', 'A', [claim('exact'), claim('exact')], { label: 'factual' }),
    check('q3', 'A', [claim('unchecked'), claim('unchecked')], { status: 'no_context' }),
    check('q1', 'B', [], { status: 'failed', error: 'invalid' }),
  ];
  const responses = [
    response('q1', 'A', 'c'),
    response('q2', 'A', null, { sources: [{ id: '1', text: 'src' }] }),
    response('q3', 'A', null),
    response('q1', 'B', 'c'),
    response('q2', 'B', null, { status: 'failed', text: null }),
  ];
  const g = report(stored, responses);
  expect(g.copilots.A).toMatchObject({
    responses: 3,
    responsesWithContext: 2,
    claims: 6,
    verified: 3,
    derivable: 1,
    fabricated: 1,
    contradicted: 1,
    verificationRate: 4 / 6,
    uncheckedClaims: 2,
    checksFailed: 0,
  });
  expect(g.copilots.A.labels).toEqual({ factual: 1, partial: 1, hallucinated: 0 });
  expect(g.copilots.B).toMatchObject({
    responses: 1,
    responsesWithContext: 1,
    claims: 0,
    verificationRate: null,
    ci95: null,
    checksFailed: 1,
  });
  // The interval is Wilson on the query-clustered effective size: q1 at 2/4 and q2 at 2/2 give a design effect of 4/3
  // (cluster-robust variance 2·(4/9 + 4/9)/36 against the binomial (2/9)/6), so 4 of 6 counts as 3 of 4.5; with two
  // queries the quantile is t on 1 df.
  const expected = wilsonInterval(3, 4.5, studentTQuantile(0.975, 1))!;
  expect(g.copilots.A.ci95!.low).toBeCloseTo(expected.low, 12);
  expect(g.copilots.A.ci95!.high).toBeCloseTo(expected.high, 12);
  expect(g.copilots.A.ci95!.low).toBeLessThan(wilsonInterval(4, 6)!.low);
  expect(g.byCategory.tag.Markets.A).toEqual({ claims: 6, verified: 4, verificationRate: 4 / 6 });
  expect(g.byCategory.tag.Security).toBeUndefined(); // q3 had no context: nothing checked
  expect(g.claims).toHaveLength(8);
});

test("citations: precision over cited claims; the reference's completeness (cited ÷ needing) beside judgeflow's (correctly cited ÷ needing); absent when the check did not run", () => {
  const cite = (verdict: NonNullable<GroundingClaim['citation']>['verdict'], source: string | null) => ({
    citation: { verdict, source },
  });
  const stored = [
    check('q1', 'A', [
      claim('exact', cite('direct', '1')),
      claim('derivable', cite('derivable', '2')),
      claim('contradicted', cite('incorrect', '1')),
      claim('fabricated', cite('missing', null)),
      claim('exact', cite('not_needed', null)),
    ]),
  ];
  const g = report(stored, [response('q1', 'A', 'c')]);
  expect(g.copilots.A).toMatchObject({
    claimsWithCitations: 3,
    correctlyCited: 2,
    incorrectlyCited: 1,
    missingCitations: 1,
    citationPrecision: 2 / 3,
    citationCompleteness: 3 / 4,
    correctCitationCompleteness: 2 / 4,
  });
  expect(report(stored, [response('q1', 'A', 'c')], ['hallucination']).copilots.A.citationPrecision).toBeNull();
  // Only the citation check ran: claims listed unverified, so no verification rate, but the citation figures stand.
  const listed = [
    check(
      'q1',
      'A',
      stored[0].claims.map((c) => ({ ...c, status: 'unchecked' as const })),
    ),
  ];
  expect(report(listed, [response('q1', 'A', 'c')], ['citations']).copilots.A).toMatchObject({
    claims: 0,
    verificationRate: null,
    uncheckedClaims: 5,
    citationPrecision: 2 / 3,
    citationCompleteness: 3 / 4,
    correctCitationCompleteness: 2 / 4,
  });
});

test('cross-copilot conflicts: same query, entity, metric and unit, values more than 2% apart — rounding differences are not conflicts', () => {
  const tvl = (value: number, entity = 'Aave') =>
    claim('unchecked', { entity, metric: 'TVL', value, unit: 'USD', text: `${entity} TVL ${value}` });
  const conflicts = crossCopilotConflicts([
    check('q1', 'A', [tvl(3.2e9), tvl(5e6, 'Lido')]),
    check('q1', 'B', [tvl(1.1e9), tvl(5.05e6, 'Lido')], { status: 'no_context' }),
    check('q2', 'A', [tvl(3.2e9)]),
    check('q2', 'B', [claim('exact', { entity: 'aave ', metric: 'tvl', value: 3.21e9, unit: 'usd' })]),
  ]);
  expect(conflicts).toEqual([
    {
      queryId: 'q1',
      entity: 'Aave',
      metric: 'TVL',
      unit: 'USD',
      claims: [
        { copilot: 'B', value: 1.1e9, text: 'Aave TVL 1100000000', status: 'unchecked' },
        { copilot: 'A', value: 3.2e9, text: 'Aave TVL 3200000000', status: 'unchecked' },
      ],
    },
  ]);
});

test('stored context is cut to the limit with a marker saying how much was dropped', () => {
  expect(limitContext('short', 10)).toEqual({ context: 'short', truncated: false });
  expect(limitContext(undefined, 10)).toEqual({ context: null, truncated: false });
  const cut = limitContext('x'.repeat(25), 10);
  expect(cut.truncated).toBe(true);
  expect(cut.context).toMatch(
    /^x{10}\n\[context cut by judgeflow \(15 of 25 characters dropped; raise grounding\.maxContextChars/,
  );
  const g = report([], [response('q1', 'A', cut.context)]);
  expect(g.copilots.A.contextTruncated).toBe(1);
});

test("the judge's own labels and stated rate kept beside judgeflow's; same-topic claims count verified only in the reference's rate; a judge-side context cut is listed per answer", () => {
  const stated = (over: Partial<NonNullable<StoredGroundingCheck['stated']>>) => ({
    stated: {
      hallucinationLabel: null,
      verificationRatePercent: null,
      citationLabel: null,
      sameTopicClaims: [],
      contextShown: null,
      ...over,
    },
  });
  const stored = [
    // Claims 2 and 3 are fabricated; the judge says the context discusses the topic of claim 2 (and of the exact claim 0, which changes nothing).
    check('q1', 'A', [claim('exact'), claim('derivable'), claim('fabricated'), claim('fabricated')], {
      label: 'partial',
      ...stated({
        hallucinationLabel: 'partially factual',
        verificationRatePercent: 75,
        citationLabel: 'partially correct',
        sameTopicClaims: [0, 2],
      }),
    }),
    check('q2', 'A', [claim('exact')], {
      label: 'factual',
      ...stated({
        hallucinationLabel: 'factual',
        verificationRatePercent: 100,
        citationLabel: 'correct',
        contextShown: { chars: 1000, of: 5000 },
      }),
    }),
    // Stored before the judge was asked: no stated figures, still counted by judgeflow.
    check('q3', 'A', [claim('fabricated')], { label: 'hallucinated' }),
  ];
  const g = report(stored, [response('q1', 'A', 'c'), response('q2', 'A', 'c'), response('q3', 'A', 'c')]);
  expect(g.copilots.A).toMatchObject({
    verificationRate: 3 / 6,
    referenceVerificationRate: 4 / 6,
    statedVerificationRate: (0.75 + 1) / 2,
    labels: { factual: 1, partial: 1, hallucinated: 1 },
    judgeLabels: { factual: 1, partiallyFactual: 1, hallucinated: 0 },
    citationLabels: { correct: 1, partiallyCorrect: 1, incorrect: 0 },
    contextCutForJudge: 1,
  });
  expect(
    g.answers.map((a) => [a.queryId, a.label, a.judgeLabel, a.statedVerificationRate, a.citationLabel, a.contextShown]),
  ).toEqual([
    ['q1', 'partial', 'partially factual', 0.75, 'partially correct', null],
    ['q2', 'factual', 'factual', 1, 'correct', { chars: 1000, of: 5000 }],
    ['q3', 'hallucinated', null, null, null, null],
  ]);
});
