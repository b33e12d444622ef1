/**
 * The report's cost block from the run's LLM calls read a page at a time (issue 35): the same text of report.json's
 * `cost` as summariseCost of every call read at once, whatever the page size, and no read asks for more than a page.
 */
import path from 'node:path';
import { summariseCost, type Pricing } from '../../core/stats/cost';
import type { LlmCallRecord } from '../../core/model/types';
import { reportCost, REPORT_PAGE_ROWS } from '../../services/runReport';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';
import { aCall, aRun } from '../stores/contract';

const pricing: Pricing = {
  'gpt-x': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
  Bolt: { inputPerMTok: 0.1, outputPerMTok: 0.3 },
  'judge-m': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 },
  'judge-n': { inputPerMTok: 0.7, outputPerMTok: 2.1 },
};

/** Calls of every kind the figures treat apart, recorded out of time order: failures of three kinds, reused, batch. */
function calls(runId: string, n: number): LlmCallRecord[] {
  return Array.from({ length: n }, (_, i) => {
    // Times out of order, and many calls sharing one time (llmCalls then orders them as recorded).
    const at = `2025-01-01T00:${String((i * 17) % 60).padStart(2, '0')}:${String((i * 37) % 7).padStart(2, '0')}.000Z`;
    const usage = {
      promptTokens: 1000 + ((i * 7919) % 3001),
      completionTokens: 50 + ((i * 104729) % 777),
      cachedTokens: (i * 13) % 400,
      latencyMs: 100 + ((i * 6151) % 2000) + 0.25,
    };
    const failure = (errorKind: string | null) =>
      aCall(runId, at, { name: 'judge-m', ok: false, errorKind, ...usage, promptTokens: null, completionTokens: null });
    switch (i % 9) {
      case 0:
        return aCall(runId, at, { role: 'copilot', name: 'Ace', model: 'gpt-x', ...usage });
      case 1:
        return aCall(runId, at, { role: 'copilot', name: 'Bolt', model: null, ...usage });
      case 2:
        return aCall(runId, at, { name: 'judge-m', model: 'judge-m', batch: true, ...usage });
      case 3:
        // The judge line that appears first by time is listed first, wherever its first call was recorded.
        return aCall(runId, i === 30 ? '2024-12-31T00:00:00.000Z' : at, {
          name: 'judge-z',
          model: 'judge-n',
          ...usage,
        });
      case 4:
        return aCall(runId, at, {
          name: 'judge-m',
          ...usage,
          promptTokens: null,
          completionTokens: null,
          cachedTokens: null,
          requestChars: 3000 + i,
          replyChars: 500 + i,
        });
      case 5:
        return aCall(runId, at, {
          name: 'judge-n',
          model: 'judge-n',
          reused: true,
          // Avoided costs of very different sizes: their sum depends on the order they are added in.
          requestChars: 900 + ((i * i * 7919) % 100_003),
          replyChars: 80 + ((i * 104729) % 9_999),
        });
      case 6:
        // A timeout is recorded first, but a rate limit has the earliest time: report.json lists rate_limit first.
        return i === 15
          ? aCall(runId, '2024-12-30T00:00:00.000Z', { name: 'judge-m', ok: false, errorKind: 'rate_limit', ...usage })
          : failure(i % 2 ? 'rate_limit' : 'timeout');
      case 7:
        return failure(null);
      default:
        return aCall(runId, at, { role: 'copilot', name: 'Ace', model: 'gpt-x', batch: true, ok: false, ...usage });
    }
  });
}

test('report.json’s cost from the calls read in pages is the one from every call at once, and no read asks for more than a page', async () => {
  const store = new SqliteStore(path.join(tempDir('jf-report-cost-'), 'results.db'));
  const runId = 'run-cost';
  const copilots = ['Ace', 'Bolt', 'Quiet'];
  await store.createRun(aRun(runId, { copilots, config: { pricing } }));
  for (const c of calls(runId, 300)) await store.putLlmCall(c);
  const everyCall = await store.llmCalls(runId);
  const whole = JSON.stringify(summariseCost(everyCall, copilots, pricing));
  expect(whole).toContain('"judge-z"');
  expect(whole).toContain('"timeout"');

  const limits: number[] = [];
  const after = store.llmCallsAfter.bind(store);
  store.llmCallsAfter = async (id, cursor, limit) => {
    limits.push(limit!);
    return after(id, cursor, limit);
  };
  store.llmCalls = () => Promise.reject(new Error('the report read every call at once'));
  for (const page of [7, 299, 300, 301, REPORT_PAGE_ROWS]) {
    limits.length = 0;
    expect(JSON.stringify(await reportCost(store, runId, copilots, pricing, page))).toBe(whole);
    expect(limits.every((l) => l === page)).toBe(true);
    // Pages until one comes back short: 300 calls are 43 pages of 7 (the last short), 2 of 299, 2 of 300, 1 of 301.
    expect(limits).toHaveLength(Math.floor(300 / page) + 1);
  }
  // Without prices, and with none for some lines, the same too.
  for (const prices of [undefined, { Bolt: pricing.Bolt }])
    expect(JSON.stringify(await reportCost(store, runId, copilots, prices, 11))).toBe(
      JSON.stringify(summariseCost(everyCall, copilots, prices)),
    );
  await store.close();
});
