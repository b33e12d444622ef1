import { planCalls, summariseCost } from '../../core/cost';
import type { LlmCallRecord } from '../../core/types';

const call = (over: Partial<LlmCallRecord>): LlmCallRecord => ({ runId: 'r', role: 'copilot', name: 'Web', model: null, queryId: 'q', promptTokens: null, completionTokens: null, cachedTokens: null, latencyMs: 10, ok: true, errorKind: null, at: '', ...over });

test('a call reported without usage is estimated from its request and reply size (4 characters a token), counted and priced', () => {
  const calls = [
    call({ requestChars: 400, replyChars: 1_000 }), // ≈ 100 in, 250 out
    call({ requestChars: 401, replyChars: 0 }), // a reply with nothing in it: 101 in
    call({ ok: false, errorKind: 'network', requestChars: 400, replyChars: null }), // no reply came: not estimated
    call({}), // recorded before sizes were: not estimated
    call({ promptTokens: 7, completionTokens: 3, cachedTokens: null, requestChars: 4_000, replyChars: 4_000 }), // reported: as reported
  ];
  const cost = summariseCost(calls, ['Web'], { Web: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 } });
  expect(cost.copilots.Web).toMatchObject({ calls: 5, callsWithoutUsage: 4, callsEstimated: 2, promptTokens: 100 + 101 + 7, completionTokens: 250 + 3, cachedTokens: 0 });
  expect(cost.copilots.Web.estimatedCostUsd).toBeCloseTo((100 + 101 + 7) * 1 + (250 + 3) * 2, 9);
  expect(cost.total).toMatchObject({ promptTokens: 208, completionTokens: 253 });
  // The same calls without sizes: counted as without usage, not estimated, nothing added.
  const unsized = summariseCost(calls.map(({ requestChars: _r, replyChars: _p, ...c }) => c), ['Web'], undefined);
  expect(unsized.copilots.Web).toMatchObject({ callsWithoutUsage: 4, callsEstimated: 0, promptTokens: 7, completionTokens: 3 });
});

test('the dry-run plan estimates prompts from the queries\' text and earlier turns', () => {
  const [copilot] = planCalls({ queries: [{ text: 'x'.repeat(40), history: [{ content: 'y'.repeat(40) }] }], copilots: [{ name: 'A', type: 'openai', model: 'm' }], judges: [], judgeCallsPerQuery: () => 1, judgePromptChars: 0 });
  expect(copilot.estimatedPromptTokens).toBe(20);
});
