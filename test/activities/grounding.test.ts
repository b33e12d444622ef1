import { groundingWorkItems, withGroundingTimeout } from '../../activities/grounding';
import { groundingEndpoint, type StoredRunConfig } from '../../activities/deps';
import type { RunRecord } from '../../core/model/store';
import type { StoredResponse } from '../../core/model/types';
import { parseRunConfig } from '../../client/config';
import path from 'node:path';
import { loadGroundingRubric } from '../../rubrics/grounding';
import { SqliteStore } from '../../stores/sqlite';
import { latticeGrid, tempDir, writeQueries } from '../support/harness';

function run(extra: Record<string, unknown>): RunRecord & { config: StoredRunConfig } {
  const dir = tempDir();
  const queries = writeQueries(dir, latticeGrid(1, 1));
  const config = parseRunConfig(
    {
      protocol: 'lattice',
      queries,
      copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
      ...extra,
    },
    'test',
    dir,
  );
  return {
    runId: 'r',
    protocol: 'lattice',
    snapshotId: 's',
    rubricVersion: 'rv',
    judge: { model: 'j', baseURL: 'u', temperature: 0 },
    copilots: ['A', 'B'],
    status: 'running',
    startedAt: 'now',
    finishedAt: null,
    reportPath: null,
    sourceRunId: null,
    summary: null,
    config: config as unknown as StoredRunConfig,
  };
}
const judge = { baseURL: 'http://127.0.0.1:9/v1', model: 'j', timeoutMs: 1000 };
const panel = {
  judges: [
    { ...judge, name: 'first' },
    { ...judge, name: 'second', model: 'j2', temperature: 0.7 },
  ],
};
const response = (copilot: string, status: StoredResponse['status']) =>
  ({ queryId: 'q', copilot, status }) as StoredResponse;

test('one grounding item per collected answer (none for failed or missing ones), per panel member in the panel’s order', () => {
  const answers = [response('A', 'ok'), response('B', 'failed'), response('C', 'missing'), response('D', 'ok')];
  expect(groundingWorkItems(run({ judge }), answers)).toEqual([]); // no grounding: block
  expect(groundingWorkItems(run({ judge, grounding: {} }), answers)).toEqual([
    { queryId: 'q', copilots: ['A'], kind: 'grounding' },
    { queryId: 'q', copilots: ['D'], kind: 'grounding' },
  ]);
  expect(
    groundingWorkItems(run({ ...panel, grounding: {} }), answers).map((u) => `${u.copilots[0]}/${u.judge}`),
  ).toEqual(['A/first', 'A/second', 'D/first', 'D/second']);
});

test('who checks: the slot’s own judge at the grounding temperature (unless it sets one); a grounding judge does every check on the first member’s items', () => {
  const own = run({ ...panel, grounding: {} });
  expect(groundingEndpoint(own, { sample: 0, judge: 'first' }, 0)).toMatchObject({
    judgeName: 'first',
    endpoint: { model: 'j', temperature: 0 },
  });
  expect(groundingEndpoint(own, { sample: 0, judge: 'second' }, 0)).toMatchObject({
    judgeName: 'second',
    endpoint: { model: 'j2', temperature: 0.7 },
  });
  const separate = run({
    ...panel,
    grounding: { judge: { baseURL: 'http://g.test/v1', model: 'g', apiKeyEnv: 'G_KEY' } },
  });
  expect(groundingEndpoint(separate, { sample: 0, judge: 'first' }, 0.2)).toMatchObject({
    judgeName: '',
    endpoint: { model: 'g', baseURL: 'http://g.test/v1', apiKeyEnv: 'G_KEY', temperature: 0.2 },
  });
  expect(groundingEndpoint(separate, { sample: 0, judge: 'second' }, 0.2)).toBeNull();
});

test('a judge item’s time bound covers a grounding check: two calls, each re-asked per the grounding rubric, at the slowest judge’s timeout', async () => {
  const store = new SqliteStore(path.join(tempDir(), 'results.db'));
  try {
    const deps = { store, env: {} };
    const rubric = loadGroundingRubric();
    await store.putRubric(rubric.version, 'grounding', rubric.content);
    const withVersion = (r: ReturnType<typeof run>) => ({
      ...r,
      config: { ...r.config, groundingVersion: rubric.version },
    });
    const asks = 1 + rubric.data.judge.maxInvalidAnswers;
    expect(await withGroundingTimeout(deps, run({ judge }), 5000)).toBe(5000);
    expect(await withGroundingTimeout(deps, withVersion(run({ judge, grounding: {} })), 5000)).toBe(
      2 * asks * 1000 + 60_000,
    );
    expect(
      await withGroundingTimeout(
        deps,
        withVersion(run({ judge, grounding: { judge: { ...judge, timeoutMs: 4000 } } })),
        5000,
      ),
    ).toBe(2 * asks * 4000 + 60_000);
    expect(await withGroundingTimeout(deps, withVersion(run({ judge, grounding: {} })), 999_999)).toBe(999_999);
  } finally {
    await store.close();
  }
});
