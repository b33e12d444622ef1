import { batchPriceOf, callCostUsd, planCalls, priceFor, summariseCost } from '../../../core/stats/cost';
import { parseRunConfig } from '../../../client/config';
import type { LlmCallRecord } from '../../../core/model/types';
import { costHeader, costNote, costRows } from '../../../core/report/costTable';

const call = (fields: Partial<LlmCallRecord>): LlmCallRecord => ({
  runId: 'r',
  role: 'judge',
  name: 'gpt-4.1',
  model: 'gpt-4.1',
  queryId: 'q1',
  promptTokens: 1_000_000,
  completionTokens: 100_000,
  cachedTokens: 0,
  latencyMs: 10,
  ok: true,
  errorKind: null,
  at: '2026-01-01T00:00:00.000Z',
  ...fields,
});

test('a Batch API call costs half the live price unless pricing gives batch prices', () => {
  expect(batchPriceOf({ inputPerMTok: 2, outputPerMTok: 8 })).toEqual({
    inputPerMTok: 1,
    outputPerMTok: 4,
    cachedInputPerMTok: 1,
  });
  expect(batchPriceOf({ inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 })).toEqual({
    inputPerMTok: 1,
    outputPerMTok: 4,
    cachedInputPerMTok: 0.25,
  });
  expect(
    batchPriceOf({ inputPerMTok: 2, outputPerMTok: 8, batchInputPerMTok: 1.5, batchOutputPerMTok: 5 }),
  ).toMatchObject({ inputPerMTok: 1.5, outputPerMTok: 5 });
  expect(batchPriceOf(undefined)).toBeUndefined();
});

test('a judge line prices its live and its batch calls each at their own price, and counts the batch ones', () => {
  const pricing = { 'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 } };
  const live = summariseCost([call({}), call({})], [], pricing).judge['gpt-4.1'];
  const batch = summariseCost([call({ batch: true }), call({ batch: true })], [], pricing).judge['gpt-4.1'];
  const mixed = summariseCost([call({}), call({ batch: true })], [], pricing).judge['gpt-4.1'];
  expect(live).toMatchObject({ calls: 2, batchCalls: 0, estimatedCostUsd: 2 * (2 + 0.8) });
  expect(batch).toMatchObject({ calls: 2, batchCalls: 2, estimatedCostUsd: 2.8 });
  expect(mixed).toMatchObject({ batchCalls: 1, estimatedCostUsd: 2.8 + 1.4 });
});

test('run --dry-run prices a batch judge at the batch price', () => {
  const args = {
    queries: [{ text: 'What is ETH staking yield?' }],
    copilots: [],
    judgeCallsPerQuery: () => 4,
    judgePromptChars: 4000,
    pricing: { m: { inputPerMTok: 2, outputPerMTok: 8 } },
  };
  const [live] = planCalls({ ...args, judges: [{ name: '', model: 'm', baseURL: 'https://api.openai.com/v1' }] });
  const [batch] = planCalls({
    ...args,
    judges: [{ name: '', model: 'm', baseURL: 'https://api.openai.com/v1', batch: true }],
  });
  expect(batch.estimatedCostUsd).toBeCloseTo(live.estimatedCostUsd! / 2, 12);
});

test('judge.batch on a provider without a Batch API judgeflow speaks is an input error naming the key and the provider', () => {
  const config = (judge: Record<string, unknown>) => ({
    protocol: 'lattice',
    queries: 'q.jsonl',
    judge: { model: 'm', batch: true, ...judge },
    copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:1/v1', model: 'sim-terse' }],
  });
  expect(() => parseRunConfig(config({ baseURL: 'https://api.deepseek.com/v1' }), 'run.yaml', '/tmp')).toThrow(
    /judge\.batch.*provider deepseek has no Batch API/s,
  );
  expect(() => parseRunConfig(config({ baseURL: 'https://api.openai.com/v1' }), 'run.yaml', '/tmp')).not.toThrow();
  expect(() =>
    parseRunConfig(config({ baseURL: 'https://api.anthropic.com', provider: 'anthropic' }), 'run.yaml', '/tmp'),
  ).not.toThrow();
});

const unreported = (over: Partial<LlmCallRecord>): LlmCallRecord => ({
  runId: 'r',
  role: 'copilot',
  name: 'Web',
  model: null,
  queryId: 'q',
  promptTokens: null,
  completionTokens: null,
  cachedTokens: null,
  latencyMs: 10,
  ok: true,
  errorKind: null,
  at: '',
  ...over,
});

test('a call reported without usage is estimated from its request and reply size (4 characters a token), counted and priced', () => {
  const calls = [
    unreported({ requestChars: 400, replyChars: 1_000 }), // ≈ 100 in, 250 out
    unreported({ requestChars: 401, replyChars: 0 }), // a reply with nothing in it: 101 in
    unreported({ ok: false, errorKind: 'network', requestChars: 400, replyChars: null }), // no reply came: not estimated
    unreported({}), // recorded before sizes were: not estimated
    unreported({ promptTokens: 7, completionTokens: 3, cachedTokens: null, requestChars: 4_000, replyChars: 4_000 }), // reported: as reported
  ];
  const cost = summariseCost(calls, ['Web'], { Web: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 } });
  expect(cost.copilots.Web).toMatchObject({
    calls: 5,
    callsWithoutUsage: 4,
    callsEstimated: 2,
    promptTokens: 100 + 101 + 7,
    completionTokens: 250 + 3,
    cachedTokens: 0,
  });
  expect(cost.copilots.Web.estimatedCostUsd).toBeCloseTo((100 + 101 + 7) * 1 + (250 + 3) * 2, 9);
  expect(cost.total).toMatchObject({ promptTokens: 208, completionTokens: 253 });
  // The same calls without sizes: counted as without usage, not estimated, nothing added.
  const unsized = summariseCost(
    calls.map(({ requestChars: _r, replyChars: _p, ...c }) => c),
    ['Web'],
    undefined,
  );
  expect(unsized.copilots.Web).toMatchObject({
    callsWithoutUsage: 4,
    callsEstimated: 0,
    promptTokens: 7,
    completionTokens: 3,
  });
});

test("the dry-run plan estimates prompts from the queries' text and earlier turns", () => {
  const [copilot] = planCalls({
    queries: [{ text: 'x'.repeat(40), history: [{ content: 'y'.repeat(40) }] }],
    copilots: [{ name: 'A', type: 'openai', model: 'm' }],
    judges: [],
    judgeCallsPerQuery: () => 1,
    judgePromptChars: 0,
  });
  expect(copilot.estimatedPromptTokens).toBe(20);
});

test('one pricing key for every call (priceFor): a panel member, a grounding judge and a batch call are priced by the model they were sent to, never by the member name', () => {
  const pricing = {
    'model-a': { inputPerMTok: 2, outputPerMTok: 8 },
    'model-g': { inputPerMTok: 1, outputPerMTok: 4 },
  };
  expect(priceFor(pricing, { name: 'alpha', model: 'model-a' })).toEqual(pricing['model-a']);
  expect(priceFor(pricing, { name: 'alpha', model: 'model-a', batch: true })).toEqual(batchPriceOf(pricing['model-a']));
  // An http copilot has no model: its name is the key.
  expect(priceFor({ Web: pricing['model-g'] }, { name: 'Web', model: null })).toEqual(pricing['model-g']);
  const calls = [
    call({ name: 'alpha', model: 'model-a' }),
    call({ name: 'alpha', model: 'model-a', batch: true }),
    call({ name: 'grounding', model: 'model-g' }),
  ];
  const cost = summariseCost(calls, [], pricing);
  expect(cost.judge.alpha.estimatedCostUsd).toBeCloseTo(2.8 + 1.4, 12);
  expect(cost.judge.grounding.estimatedCostUsd).toBeCloseTo(1.4, 12);
  expect(callCostUsd(pricing, calls[0])).toBeCloseTo(2.8, 12);
  // A call with no price makes its line's cost unknown, never $0.
  expect(
    summariseCost([call({ name: 'beta', model: 'unpriced' })], [], pricing).judge.beta.estimatedCostUsd,
  ).toBeNull();
  // The dry-run plan prices a panel member by its model too.
  const [member] = planCalls({
    queries: [{ text: 'q' }],
    copilots: [],
    judges: [{ name: 'alpha', model: 'model-a', baseURL: 'https://api.openai.com/v1' }],
    judgeCallsPerQuery: () => 1,
    judgePromptChars: 4000,
    pricing,
  });
  expect(member.estimatedCostUsd).toBeGreaterThan(0);
});

test('a USD budget with a grounding judge whose model has no price is an input error naming the model', () => {
  const base = {
    protocol: 'lattice',
    queries: 'q.jsonl',
    judge: { baseURL: 'http://127.0.0.1:1/v1', model: 'sim-judge' },
    copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:1/v1', model: 'sim-terse' }],
    budget: { usd: 5 },
  };
  const pricing = {
    'sim-judge': { inputPerMTok: 1, outputPerMTok: 1 },
    'sim-terse': { inputPerMTok: 1, outputPerMTok: 1 },
  };
  expect(() =>
    parseRunConfig(
      { ...base, pricing, grounding: { judge: { baseURL: 'http://127.0.0.1:1/v1', model: 'ground-model' } } },
      'budget.yaml',
      '/tmp',
    ),
  ).toThrow(/budget\.usd.*grounding\.judge \(model ground-model\) has none: add pricing: \{ "ground-model"/s);
  expect(() =>
    parseRunConfig(
      {
        ...base,
        pricing: { ...pricing, 'ground-model': { inputPerMTok: 1, outputPerMTok: 1 } },
        grounding: { judge: { baseURL: 'http://127.0.0.1:1/v1', model: 'ground-model' } },
      },
      'budget.yaml',
      '/tmp',
    ),
  ).not.toThrow();
});

test('answers reused from the store are counted apart per judge with the price they avoided, and in none of the spent figures', () => {
  const pricing = { 'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 } };
  const reused = call({
    reused: true,
    promptTokens: null,
    completionTokens: null,
    cachedTokens: null,
    latencyMs: 0,
    requestChars: 4_000_000,
    replyChars: 400_000,
  }); // ≈ 1M in, 100k out
  const cost = summariseCost([call({}), reused, reused], [], pricing);
  expect(cost.judge['gpt-4.1']).toMatchObject({
    calls: 1,
    promptTokens: 1_000_000,
    completionTokens: 100_000,
    callsWithoutUsage: 0,
    callsEstimated: 0,
    reusedCalls: 2,
  });
  expect(cost.judge['gpt-4.1'].estimatedCostUsd).toBeCloseTo(2.8, 9);
  expect(cost.judge['gpt-4.1'].avoidedCostUsd).toBeCloseTo(2 * 2.8, 9);
  expect(cost.total).toMatchObject({ calls: 1, promptTokens: 1_000_000, reusedCalls: 2 });
  expect(cost.total.avoidedCostUsd).toBeCloseTo(5.6, 9);
  // A judge whose every answer was reused still has its line: no call made, nothing spent.
  const allReused = summariseCost([reused], [], pricing).judge['gpt-4.1'];
  expect(allReused).toMatchObject({ calls: 0, estimatedCostUsd: 0, reusedCalls: 1 });
  expect(summariseCost([reused], [], undefined).judge['gpt-4.1']).toMatchObject({
    reusedCalls: 1,
    avoidedCostUsd: null,
  });
  // The report's table gains the column only when something was reused.
  expect(costHeader(cost)).toContain('answered from the store (avoided cost)');
  expect(costRows(cost)[0].at(-1)).toBe('2 ($5.6000)');
  expect(costNote(cost, (t) => t)).toContain('2 judge requests were byte-identical to ones answered before');
  const none = summariseCost([call({})], [], pricing);
  expect(costHeader(none)).not.toContain('answered from the store (avoided cost)');
  expect(costRows(none)[0]).toHaveLength(costHeader(none).length);
});
