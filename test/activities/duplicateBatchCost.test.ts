import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { countDuplicateBatches, ingestBatch, submitLines, type PendingLine } from '../../activities/judgeBatch';
import { summariseCost } from '../../core/stats/cost';
import type { ModelEndpoint } from '../../core/llm/client';
import { batchClient, type BatchClient } from '../../core/llm/providers/batch';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';
import { simServerPerTest } from '../support/sims';

/**
 * Issue 30, row 6: a worker killed while a batch's create reply was in flight, and two batches made at the provider
 * before the retried submit looked. The oldest is adopted, the other cancelled as a duplicate; what the duplicate ran
 * before its cancel is billed, so the cost table counts it: each of its answered lines once, at the batch price.
 */
const sim = simServerPerTest({ batchSeconds: 0.3 });
const inActivity = <T>(fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment().run(fn) as Promise<T>;
const schema = {
  type: 'object',
  properties: { score: { type: 'integer' } },
  required: ['score'],
  additionalProperties: false,
};

async function untilEnded(client: BatchClient, id: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await client.status(id)).ended) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`batch ${id} did not end`);
}

test('a duplicate batch cancelled after a crash around its create is counted in the cost table, once', async () => {
  const server = await sim();
  const store = new SqliteStore(path.join(tempDir('jf-dup-batch-'), 'results.db'));
  const deps = { store, env: {} };
  const runId = 'run-dup';
  const settings = { baseURL: server.url, model: 'sim-judge', timeoutMs: 5000 } as ModelEndpoint;
  const lines: PendingLine[] = ['j0_a', 'j1_b', 'j2_c'].map((customId) => ({
    customId,
    queryId: `q-${customId}`,
    callName: 'sim-judge',
    settings,
    body: {
      model: 'sim-judge',
      messages: [{ role: 'user', content: `Rate answer ${customId}.` }],
      response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema } },
    },
  }));
  try {
    // The intent stored, then the create sent twice (the first reply lost with the worker); both ran to the end.
    const client = batchClient({ baseURL: server.url, timeoutMs: 5000 }, {});
    await store.putJudgeBatch(
      {
        runId,
        key: 'judge/1',
        batchId: null,
        api: 'openai',
        endpoint: { baseURL: server.url, timeoutMs: 60_000, model: 'sim-judge' },
        state: 'submitting',
        counts: { total: 3, succeeded: 0, failed: 0, pending: 3 },
        lines: 3,
        createdAt: new Date(Date.now() - 1000).toISOString(),
      },
      lines,
    );
    const made = [await client.submit(lines, `${runId}/judge/1`), await client.submit(lines, `${runId}/judge/1`)];
    for (const b of made) await untilEnded(client, b.id);

    await inActivity(() => submitLines(deps, runId, 'judge', lines));
    const batches = await store.judgeBatches(runId);
    expect(batches.map((b) => [b.key, b.batchId])).toEqual([
      ['judge/1', made[0].id],
      ['judge/1/duplicate-1', made[1].id],
    ]);

    expect(await inActivity(() => ingestBatch(deps, runId, 'judge/1'))).toEqual({ ok: 3, failed: 0 });
    const calls = await store.llmCalls(runId);
    expect(calls).toHaveLength(6); // three lines of the adopted batch, three the duplicate ran (and was billed for)
    expect(calls.every((c) => c.batch && c.ok && (c.promptTokens ?? 0) > 0)).toBe(true);
    expect(
      summariseCost(calls, [], { 'sim-judge': { inputPerMTok: 2, outputPerMTok: 8 } }).judge['sim-judge'],
    ).toMatchObject({ calls: 6, batchCalls: 6 });
    // Counted once: a later look (another ingest, the report) adds nothing, and the run's own lines are untouched.
    expect(await inActivity(() => countDuplicateBatches(deps, runId))).toBe(0);
    await inActivity(() => ingestBatch(deps, runId, 'judge/1'));
    expect(await store.llmCalls(runId)).toHaveLength(6);
    expect((await store.batchLines(runId, 'judge/1')).map((l) => [l.customId, l.status])).toEqual([
      ['j0_a', 'ok'],
      ['j1_b', 'ok'],
      ['j2_c', 'ok'],
    ]);
    expect(await store.batchLine(runId, 'j0_a@judge/1/duplicate-1')).toMatchObject({ status: 'ok', body: null });
  } finally {
    await store.close();
  }
});
