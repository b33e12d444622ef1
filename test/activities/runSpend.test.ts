import path from 'node:path';
import { SPEND_TALLIES_KEPT, spendActivities, type RunSpend } from '../../activities/spend';
import { summariseCost, type Pricing } from '../../core/stats/cost';
import type { LlmCallRecord } from '../../core/model/types';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';
import { aCall, aRun } from '../stores/contract';

/** The budget watch's figures as runSpend gave them before it kept a tally: every call read and summarised. */
async function fromScratch(store: SqliteStore, runId: string): Promise<RunSpend> {
  const run = (await store.getRun(runId))!;
  const cost = summariseCost(await store.llmCalls(runId), run.copilots, (run.config as any).pricing);
  const lines = [...Object.values(cost.copilots), ...Object.values(cost.judge)];
  return {
    usd: cost.total.estimatedCostUsd,
    tokens: cost.total.promptTokens + cost.total.completionTokens,
    calls: cost.total.calls,
    callsWithoutUsage: lines.reduce((n, l) => n + l.callsWithoutUsage, 0),
    callsEstimated: lines.reduce((n, l) => n + l.callsEstimated, 0),
  };
}

const pricing: Pricing = {
  'gpt-x': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
  Bolt: { inputPerMTok: 0.1, outputPerMTok: 0.3 },
  'judge-m': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 },
  'judge-n': { inputPerMTok: 0.7, outputPerMTok: 2.1 },
};

/** Calls of every kind the sums treat apart: priced by model or by name, batch, without usage, estimated, reused, failed. */
function calls(runId: string, from: number, n: number, minute: number): LlmCallRecord[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    // Times out of order: some calls are recorded after calls with a later time.
    const at = `2025-01-01T00:${String(minute).padStart(2, '0')}:${String((i * 37) % 60).padStart(2, '0')}.000Z`;
    const usage = {
      promptTokens: 1000 + ((i * 7919) % 3001),
      completionTokens: 50 + ((i * 104729) % 777),
      cachedTokens: (i * 13) % 400,
    };
    switch (i % 7) {
      case 0:
        return aCall(runId, at, { role: 'copilot', name: 'Ace', model: 'gpt-x', ...usage });
      case 1:
        return aCall(runId, at, { role: 'copilot', name: 'Bolt', model: null, ...usage });
      case 2:
        return aCall(runId, at, { name: 'judge-m', model: 'judge-m', batch: true, ...usage });
      case 3:
        return aCall(runId, at, { name: 'judge-n', model: 'judge-n', ...usage });
      case 4:
        return aCall(runId, at, {
          name: 'judge-m',
          promptTokens: null,
          completionTokens: null,
          cachedTokens: null,
          requestChars: 3000 + i,
          replyChars: 500 + i,
        });
      case 5:
        return aCall(runId, at, { name: 'judge-n', model: 'judge-n', reused: true, requestChars: 900, replyChars: 80 });
      default:
        return aCall(runId, at, {
          name: 'judge-m',
          ok: false,
          errorKind: 'rate_limit',
          promptTokens: null,
          completionTokens: null,
          cachedTokens: null,
        });
    }
  });
}

test('the budget watch reads only the calls recorded since its last look and gives what summing every call gives', async () => {
  const store = new SqliteStore(path.join(tempDir('jf-run-spend-'), 'results.db'));
  const runId = 'run-spend';
  await store.createRun(aRun(runId, { copilots: ['Ace', 'Bolt', 'Quiet'], config: { pricing } }));
  const read: number[] = [];
  const after = store.llmCallsAfter.bind(store);
  store.llmCallsAfter = async (...args) => {
    const page = await after(...args);
    read.push(page.calls.length);
    return page;
  };
  const { runSpend } = spendActivities({ store, env: {} });
  const record = async (list: LlmCallRecord[]) => {
    for (const c of list) await store.putLlmCall(c);
  };

  await record(calls(runId, 0, 300, 30));
  const first = await runSpend({ runId });
  expect(first).toEqual(await fromScratch(store, runId));
  expect(first.calls).toBeGreaterThan(0);
  expect(read.reduce((n, r) => n + r, 0)).toBe(300);

  // More calls, most of them with times before those already counted.
  read.length = 0;
  await record(calls(runId, 300, 45, 10));
  const second = await runSpend({ runId });
  expect(read).toEqual([45]);
  expect(second).toEqual(await fromScratch(store, runId));
  expect(second.usd).toBeGreaterThan(first.usd!);

  // resume --config changes the prices: the same tally, priced anew; a model without a price makes the cost unknown.
  await store.replaceRunConfig(
    runId,
    { pricing: { ...pricing, 'judge-m': { inputPerMTok: 3, outputPerMTok: 12 } } },
    aRun(runId).judge,
  );
  read.length = 0;
  const repriced = await runSpend({ runId });
  expect(read).toEqual([0]);
  expect(repriced).toEqual(await fromScratch(store, runId));
  expect(repriced.usd).not.toBe(second.usd);
  await store.replaceRunConfig(runId, { pricing: { Bolt: pricing.Bolt } }, aRun(runId).judge);
  expect(await runSpend({ runId })).toEqual(await fromScratch(store, runId));

  // Another worker process, with no tally, agrees to the last bit.
  await record(calls(runId, 345, 20, 5));
  await store.replaceRunConfig(runId, { pricing }, aRun(runId).judge);
  const again = await runSpend({ runId });
  expect(await spendActivities({ store, env: {} }).runSpend({ runId })).toEqual(again);
  expect(again).toEqual(await fromScratch(store, runId));
});

test('the tallies a worker keeps are bounded; a run dropped is tallied again from its first call', async () => {
  const store = new SqliteStore(path.join(tempDir('jf-run-spend-lru-'), 'results.db'));
  const { runSpend } = spendActivities({ store, env: {} });
  const cursors: number[] = [];
  const after = store.llmCallsAfter.bind(store);
  store.llmCallsAfter = async (runId, cursor, limit) => {
    if (runId === 'run-0') cursors.push(cursor);
    return after(runId, cursor, limit);
  };
  for (let r = 0; r <= SPEND_TALLIES_KEPT; r++) {
    await store.createRun(aRun(`run-${r}`, { config: { pricing } }));
    await store.putLlmCall(aCall(`run-${r}`, '2025-01-01T00:00:00.000Z'));
    await runSpend({ runId: `run-${r}` });
  }
  // run-0 was looked at least recently: dropped, so its next look starts from the first call and still counts it once.
  const spend = await runSpend({ runId: 'run-0' });
  expect(cursors).toEqual([0, 0]);
  expect(spend).toEqual(await fromScratch(store, 'run-0'));
  expect(spend.calls).toBe(1);
});
