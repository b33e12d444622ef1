import fs from 'node:fs';
import path from 'node:path';
import { collectActivities } from '../../activities/collect';
import { runActivities } from '../../activities/run';
import { runInput } from '../../client/startRun';
import type { StoredRunConfig } from '../../activities/deps';
import { SqliteStore } from '../../stores/sqlite';
import { runConfig, tempDir } from '../support/harness';
import { quietActivityEnvironment } from '../support/quietTemporal';

/**
 * importAnswers (activities/collect.ts): answers held in files, read and stored many to a transaction, inside a mocked
 * activity. A retried import takes what its copilots have stored already and reads only the rest; the other copilots'
 * rows (imported beside it) are neither counted nor re-read.
 */

let store: SqliteStore;
let runId: string;
const deps = () => ({ store, env: process.env });
const queries = ['one', 'two', 'three'].map((word, k) => ({
  id: `q${k + 1}`,
  text: `Question ${word}: should I stake ETH?`,
  task: 'T1',
  category: 'C1',
}));

beforeAll(async () => {
  const dir = tempDir('jf-import-');
  const answers = (name: string, texts: Array<string | null>) => {
    const file = path.join(dir, `filtered_response_${name}.json`);
    const records = queries.flatMap((q, i) => (texts[i] === null ? [] : [{ query: q.text, response: texts[i] }]));
    fs.writeFileSync(file, JSON.stringify(records));
    return file;
  };
  store = new SqliteStore(path.join(dir, 'results.db'));
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'sim-judge' },
    copilots: [
      { name: 'A', type: 'file', path: answers('A', ['a1', 'a2', '   ']) },
      { name: 'B', type: 'file', path: answers('B', ['b1', null, 'b3']) },
    ],
  });
  runId = `run-import-${Date.now()}`;
  await runActivities(deps()).prepareRun(runInput(config, runId));
});
afterAll(async () => {
  await store?.close();
});

const importAnswers = (copilots: string[]) =>
  quietActivityEnvironment().run(() => collectActivities(deps()).importAnswers({ runId, copilots }));

test("each copilot's answers stored; an empty or absent answer is missing, not scored", async () => {
  expect(await importAnswers(['A'])).toEqual({ ok: 2, failed: 1 });
  const a = (await store.responses(runId)).filter((r) => r.copilot === 'A');
  expect(a.map((r) => `${r.queryId}/${r.status}/${r.text ?? ''}`)).toEqual(['q1/ok/a1', 'q2/ok/a2', 'q3/missing/']);
  expect(JSON.parse(a[0].raw!)).toEqual({ query: queries[0].text, response: 'a1' });
  expect(a[2].errorMessage).toMatch(/is empty/);
});

test('a retried import keeps what its copilot stored, reads the rest, and leaves the other copilots alone', async () => {
  // B's earlier attempt stored q1 as failed (say): kept and counted, not read again from the file.
  await store.putResponse({
    runId,
    queryId: 'q1',
    copilot: 'B',
    adapter: 'file',
    status: 'failed',
    text: null,
    raw: null,
    html: null,
    startedAt: null,
    finishedAt: null,
    latencyMs: null,
    errorKind: 'activity',
    errorMessage: 'the worker died',
    conversationId: null,
    context: null,
  });
  expect(await store.responseStatuses(runId, ['B'])).toEqual([{ queryId: 'q1', copilot: 'B', status: 'failed' }]);
  expect(await importAnswers(['B'])).toEqual({ ok: 1, failed: 2 });
  const b = (await store.responses(runId)).filter((r) => r.copilot === 'B');
  expect(b.map((r) => `${r.queryId}/${r.status}`)).toEqual(['q1/failed', 'q2/missing', 'q3/ok']);
  expect(b[0].errorMessage).toBe('the worker died');
  // Again (every answer stored): nothing read, the same counts.
  expect(await importAnswers(['B'])).toEqual({ ok: 1, failed: 2 });
  expect(await importAnswers(['A'])).toEqual({ ok: 2, failed: 1 });
});

test("a page of the snapshot's queries: only those answers are read and stored, and the rest come with the next page", async () => {
  const page = (copilots: string[], from: number, to: number) =>
    quietActivityEnvironment().run(() =>
      collectActivities(deps()).importAnswers({ runId: pagedRun, copilots, queries: { from, to } }),
    );
  const pagedRun = `${runId}-paged`;
  const run = (await store.getRun(runId))!;
  await runActivities(deps()).prepareRun(runInput(run.config as StoredRunConfig, pagedRun));
  expect(await page(['A', 'B'], 0, 2)).toEqual({ ok: 3, failed: 1 });
  const stored = async () =>
    (await store.responses(pagedRun)).map((r) => `${r.copilot}/${r.queryId}/${r.status}`).sort();
  expect(await stored()).toEqual(['A/q1/ok', 'A/q2/ok', 'B/q1/ok', 'B/q2/missing']);
  expect(await page(['A', 'B'], 2, 3)).toEqual({ ok: 1, failed: 1 });
  expect(await stored()).toEqual(['A/q1/ok', 'A/q2/ok', 'A/q3/missing', 'B/q1/ok', 'B/q2/missing', 'B/q3/ok']);
  // A retried page counts what it stored, and nothing of the other pages.
  expect(await page(['A', 'B'], 2, 3)).toEqual({ ok: 1, failed: 1 });
});
