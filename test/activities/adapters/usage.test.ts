import { httpAdapter } from '../../../activities/adapters/http';
import { openaiAdapter } from '../../../activities/adapters/openai';
import { summariseCost } from '../../../core/stats/cost';
import type { LlmCallRecord } from '../../../core/model/types';
import { simServersForFile } from '../../support/sims';

const sim = simServersForFile({ copilots: {} });
const query = { id: 'q1', text: 'Should I stake ETH on Lido or Rocket Pool?' };
const ctx = { env: {} };
const collect = (adapter: { collect: (r: { query: typeof query; signal: AbortSignal }) => Promise<any> }) =>
  adapter.collect({ query, signal: AbortSignal.timeout(10_000) });

test('copilot adapters return the usage the endpoint reported: openai, http JSON, http SSE with a usage event; none when absent', async () => {
  const openai = await collect(
    openaiAdapter.create(
      openaiAdapter.configSchema.parse({ name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' }),
      ctx,
    ),
  );
  const sent = sim.copilots.requests.at(-1)!.usage!;
  expect(openai.usage).toEqual({
    promptTokens: sent.prompt_tokens,
    completionTokens: sent.completion_tokens,
    cachedTokens: null,
  });

  const body = { model: 'sim-thorough', messages: [{ role: 'user', content: '{{query}}' }] };
  const json = await collect(
    httpAdapter.create(
      httpAdapter.configSchema.parse({
        name: 'B',
        type: 'http',
        url: `${sim.copilots.url}/chat/completions`,
        body,
        answerPath: 'choices[0].message.content',
      }),
      ctx,
    ),
  );
  expect(json.usage).toEqual({
    promptTokens: sim.copilots.requests.at(-1)!.usage!.prompt_tokens,
    completionTokens: sim.copilots.requests.at(-1)!.usage!.completion_tokens,
    cachedTokens: null,
  });

  const streamed = { ...body, stream: true, stream_options: { include_usage: true } };
  const sse = await collect(
    httpAdapter.create(
      httpAdapter.configSchema.parse({
        name: 'C',
        type: 'http',
        url: `${sim.copilots.url}/chat/completions`,
        body: streamed,
        stream: 'sse',
        chunkPath: 'choices[0].delta.content',
      }),
      ctx,
    ),
  );
  expect(sse.usage?.completionTokens).toBe(sim.copilots.requests.at(-1)!.usage!.completion_tokens);

  const noUsage = await collect(
    httpAdapter.create(
      httpAdapter.configSchema.parse({
        name: 'D',
        type: 'http',
        url: `${sim.copilots.url}/chat/completions`,
        body: { ...body, stream: true },
        stream: 'sse',
        chunkPath: 'choices[0].delta.content',
      }),
      ctx,
    ),
  );
  expect(noUsage.usage).toBeUndefined();
});

test('cost summary: sums, latency percentiles (linear interpolation, as every quantile in judgeflow), failures by kind, prices by model or copilot name', () => {
  const call = (over: Partial<LlmCallRecord>): LlmCallRecord => ({
    runId: 'r',
    role: 'copilot',
    name: 'A',
    model: 'm',
    queryId: 'q',
    promptTokens: 100,
    completionTokens: 10,
    cachedTokens: 40,
    latencyMs: 100,
    ok: true,
    errorKind: null,
    at: '',
    ...over,
  });
  const calls = [
    ...Array.from({ length: 19 }, (_, i) => call({ latencyMs: (i + 1) * 10 })),
    call({
      ok: false,
      errorKind: 'rate_limited',
      promptTokens: null,
      completionTokens: null,
      cachedTokens: null,
      latencyMs: 1000,
    }),
    call({ name: 'Web', model: null, promptTokens: null, completionTokens: null, cachedTokens: null }),
    call({ role: 'judge', name: 'j', model: 'j', promptTokens: 1000, completionTokens: 0, cachedTokens: 0 }),
  ];
  const cost = summariseCost(calls, ['A', 'Web'], {
    m: { inputPerMTok: 1, outputPerMTok: 10, cachedInputPerMTok: 0.5 },
    Web: { inputPerMTok: 9, outputPerMTok: 9 },
  });
  expect(cost.copilots.A).toMatchObject({
    calls: 20,
    failed: 1,
    failuresByKind: { rate_limited: 1 },
    promptTokens: 1900,
    completionTokens: 190,
    cachedTokens: 760,
    cachedShare: 0.4,
    latencyP50Ms: 105,
  });
  // 20 latencies 10…190 and 1000: the 95th percentile lies 5% of the way from 190 to 1000.
  expect(cost.copilots.A.latencyP95Ms).toBeCloseTo(190 + 0.05 * (1000 - 190), 9);
  expect(cost.copilots.A.estimatedCostUsd).toBeCloseTo(((1900 - 760) * 1 + 760 * 0.5 + 190 * 10) / 1e6, 12);
  expect(cost.copilots.Web).toMatchObject({ calls: 1, callsWithoutUsage: 1, estimatedCostUsd: 0 });
  expect(cost.judge.j).toMatchObject({ calls: 1, promptTokens: 1000, estimatedCostUsd: null });
  expect(cost.total).toMatchObject({ calls: 22, promptTokens: 2900 });
  expect(summariseCost([], ['A'], undefined).copilots.A).toMatchObject({
    calls: 0,
    latencyP50Ms: null,
    latencyP95Ms: null,
  });
});
