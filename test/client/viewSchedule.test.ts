import path from 'node:path';
import { startViewServer } from '../../client/view/server';
import { saveSnapshot } from '../../core/snapshots/snapshots';
import type { Query, StoredJudgment } from '../../core/model/types';
import { latticeProtocol } from '../../rubrics/lattice';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };
const j = (runId: string, queryId: string, copilot: string, score: number): StoredJudgment => ({
  runId,
  queryId,
  copilot,
  rubricVersion: 'v1',
  status: 'ok',
  scores: { D1: score, D2: score },
  rationales: null,
  total: 2 * score,
  rank: null,
  position: null,
  error: null,
  judge: { ...judge, rubricVersion: 'v1' },
  attempts: 1,
  createdAt: '2025-01-01T00:00:00Z',
});

test("judgeflow view: a schedule's page draws each copilot's line with interval bands, marks the regression, links every run and compare; a run links its schedule", async () => {
  const store = new SqliteStore(path.join(tempDir(), 'results.db'));
  const view = await startViewServer({ store, port: 0 });
  try {
    const queries: Query[] = Array.from({ length: 12 }, (_, i) => ({
      id: `q${i}`,
      text: `question ${i}`,
      task: 'T1',
      category: 'C1',
    }));
    const { snapshotId } = await saveSnapshot(store, latticeProtocol.labelsOf, {
      queries,
      parentId: null,
      meta: { generator: 'test' },
    });
    const runIds = ['nightly-20261201-0600-a1b2c3', 'nightly-20261202-0600-d4e5f6', 'nightly-20261203-0600-0a9b8c'];
    for (const [k, runId] of runIds.entries()) {
      await store.createRun({
        runId,
        protocol: 'lattice',
        snapshotId,
        rubricVersion: 'v1',
        judge,
        copilots: ['Ace', 'Bolt'],
        startedAt: `2026-12-0${k + 1}T06:00:00Z`,
        sourceRunId: null,
        config: {},
      });
      await store.recordScheduleSnapshot({
        schedule: 'nightly',
        workflowId: `wf-${k}`,
        snapshotId,
        parentId: k ? snapshotId : null,
        createdAt: `2026-12-0${k + 1}T06:00:00Z`,
        runId,
      });
      // Bolt loses two points a dimension in the third run; Ace stays.
      for (const [i, q] of queries.entries())
        for (const c of ['Ace', 'Bolt'])
          await store.putJudgment(j(runId, q.id, c, 3 + (i % 4) - (c === 'Bolt' && k === 2 ? 2 : 0)));
    }
    const res = await fetch(`${view.url}schedules/nightly`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.match(/<polyline /g)).toHaveLength(2);
    expect(html.match(/<polygon class="band"/g)).toHaveLength(2);
    const flagged = [
      ...html.matchAll(
        /<g class="mark" data-series="([^"]+)" data-label="[^"]*" data-value="[^"]*"[^>]*data-flagged="true"/g,
      ),
    ].map((m) => m[1]);
    expect(flagged).toEqual(['Bolt']);
    for (const runId of runIds) expect(html).toContain(`href="/runs/${runId}"`);
    expect(html).toContain(`href="/compare?a=${runIds[0]}&amp;b=${runIds[1]}"`);
    expect(html).toContain(`href="/compare?a=${runIds[1]}&amp;b=${runIds[2]}"`);
    expect(html).toContain('▼ regression');
    expect((await fetch(`${view.url}compare?a=${runIds[1]}&b=${runIds[2]}`)).status).toBe(200);

    expect(await (await fetch(`${view.url}runs/${runIds[2]}`)).text()).toContain(
      'made by schedule <a href="/schedules/nightly">nightly</a>',
    );
    expect((await fetch(`${view.url}schedules/no-such`)).status).toBe(404);
  } finally {
    await view.close();
    await store.close();
  }
});
