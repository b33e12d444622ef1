import type { JudgeUnit, NewRun, ResultsStore } from '../core/store';
import type { Query, StoredJudgment, StoredResponse } from '../core/types';

/**
 * The contract every results store implementation must pass (SQLite today; PostgreSQL next):
 * `describeStoreContract('postgres', makePostgresFixture)` in a test file of its own is all a new one needs.
 */

/** A fresh, empty backing store. `open()` may be called several times: each call is another connection to the same data. */
export interface StoreFixture {
  open(): ResultsStore | Promise<ResultsStore>;
  /** Remove the backing data (after every store opened from it is closed). */
  dispose?(): void | Promise<void>;
}

export const aRun = (runId: string, over: Partial<NewRun> = {}): NewRun => ({
  runId,
  protocol: 'lattice',
  snapshotId: 'snap-1',
  rubricVersion: 'rv1',
  judge: { model: 'judge-m', baseURL: 'http://judge.test/v1', temperature: 0 },
  copilots: ['Ace', 'Bolt'],
  startedAt: '2025-01-01T00:00:00.000Z',
  sourceRunId: null,
  config: { seed: 'x', nested: { list: [1, 2] } },
  ...over,
});

export const aResponse = (runId: string, queryId: string, copilot: string, over: Partial<StoredResponse> = {}): StoredResponse => ({
  runId,
  queryId,
  copilot,
  status: 'ok',
  text: `${copilot} on ${queryId}`,
  raw: '{"raw":true}',
  html: null,
  adapter: 'openai',
  startedAt: '2025-01-01T00:00:00.000Z',
  finishedAt: '2025-01-01T00:00:01.000Z',
  latencyMs: 1000.5,
  errorKind: null,
  errorMessage: null,
  conversationId: 'conv-1',
  context: null,
  ...over,
});

export const aJudgment = (runId: string, queryId: string, copilot: string, over: Partial<StoredJudgment> = {}): StoredJudgment => ({
  runId,
  queryId,
  copilot,
  rubricVersion: 'rv1',
  status: 'ok',
  scores: { d1: 7, d2: 3 },
  rationales: { d1: 'because', d2: 'also' },
  total: 55.5,
  rank: 2,
  position: 1,
  error: null,
  judge: { model: 'judge-m', baseURL: 'http://judge.test/v1', temperature: 0, rubricVersion: 'rv1' },
  attempts: 1,
  createdAt: '2025-01-01T00:00:02.000Z',
  sample: 0,
  judgeName: '',
  ...over,
});

const queries: Query[] = [
  { id: 'q-b', text: 'Second id, first position', task: 'T1', category: 'C1' },
  { id: 'q-a', text: 'First id, second position', tags: 'Meme Coins', history: [{ role: 'user', content: 'earlier' }] },
  { id: 'q-c', text: 'Third', context: 'ctx' },
];

export function describeStoreContract(name: string, makeStore: () => StoreFixture | Promise<StoreFixture>): void {
  describe(`results store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: ResultsStore;
    const extra: ResultsStore[] = [];
    /** Another connection to the same data, closed after the test. */
    const another = async () => {
      const s = await fixture.open();
      extra.push(s);
      return s;
    };

    beforeEach(async () => {
      fixture = await makeStore();
      store = await fixture.open();
    });
    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close();
      await store.close();
      await fixture.dispose?.();
    });

    describe('runs', () => {
      test('createRun is idempotent: the first record is kept, status starts as running', async () => {
        await store.createRun(aRun('r1'));
        await store.createRun(aRun('r1', { protocol: 'cab', copilots: ['Other'] }));
        expect(await store.getRun('r1')).toEqual({ ...aRun('r1'), status: 'running', finishedAt: null, reportPath: null, summary: null });
        expect(await store.listRuns()).toHaveLength(1);
        expect(await store.getRun('nope')).toBeNull();
      });

      test('finishRun records status, report path, summary and time', async () => {
        await store.createRun(aRun('r1'));
        await store.finishRun('r1', 'completed', '/out/r1/report.json', { Ace: 71.5, Bolt: null }, '2025-01-02T00:00:00.000Z');
        expect(await store.getRun('r1')).toMatchObject({ status: 'completed', reportPath: '/out/r1/report.json', summary: { Ace: 71.5, Bolt: null }, finishedAt: '2025-01-02T00:00:00.000Z' });
        await store.createRun(aRun('r2'));
        await store.finishRun('r2', 'failed', null, { error: 'boom' }, '2025-01-03T00:00:00.000Z');
        expect(await store.getRun('r2')).toMatchObject({ status: 'failed', reportPath: null, summary: { error: 'boom' } });
      });

      test('listRuns is newest first, then by run id descending', async () => {
        await store.createRun(aRun('old', { startedAt: '2025-01-01T00:00:00.000Z' }));
        await store.createRun(aRun('new', { startedAt: '2025-03-01T00:00:00.000Z' }));
        await store.createRun(aRun('mid-a', { startedAt: '2025-02-01T00:00:00.000Z' }));
        await store.createRun(aRun('mid-b', { startedAt: '2025-02-01T00:00:00.000Z' }));
        expect((await store.listRuns()).map((r) => r.runId)).toEqual(['new', 'mid-b', 'mid-a', 'old']);
      });
    });

    describe('snapshots', () => {
      const record = { snapshotId: 'snap-abc123', createdAt: '2025-01-01T00:00:00.000Z', parentId: null, meta: { generator: 'test', counts: { task: { T1: 1 } } } };

      test('put, get, queries in snapshot order, ranges, one query by id', async () => {
        await store.putSnapshot(record, queries);
        expect(await store.getSnapshot('snap-abc123')).toEqual({ ...record, queryCount: 3 });
        expect(await store.snapshotQueries('snap-abc123')).toEqual(queries);
        expect(await store.snapshotQueries('snap-abc123', 1)).toEqual(queries.slice(1));
        expect(await store.snapshotQueries('snap-abc123', 1, 2)).toEqual([queries[1]]);
        expect(await store.snapshotQueries('snap-abc123', 3)).toEqual([]);
        expect(await store.snapshotQuery('snap-abc123', 'q-a')).toEqual(queries[1]);
        expect(await store.getSnapshot('snap-none')).toBeNull();
        expect(await store.snapshotQueries('snap-none')).toEqual([]);
      });

      test('a query not in the snapshot is an error naming both', async () => {
        await store.putSnapshot(record, queries);
        await expect(store.snapshotQuery('snap-abc123', 'q-zzz')).rejects.toThrow(/q-zzz.*snap-abc123/);
      });

      test('a snapshot stored again keeps its first record and queries', async () => {
        await store.putSnapshot(record, queries);
        await store.putSnapshot({ ...record, createdAt: '2026-01-01T00:00:00.000Z', parentId: 'snap-other', meta: { generator: 'again' } }, queries.slice(0, 1));
        expect(await store.getSnapshot('snap-abc123')).toEqual({ ...record, queryCount: 3 });
        expect(await store.snapshotQueries('snap-abc123')).toEqual(queries);
      });

      test('list is newest first; ids by prefix', async () => {
        await store.putSnapshot({ ...record, snapshotId: 'snap-aa1', createdAt: '2025-01-01T00:00:00.000Z' }, queries);
        await store.putSnapshot({ ...record, snapshotId: 'snap-aa2', createdAt: '2025-03-01T00:00:00.000Z', parentId: 'snap-aa1' }, queries.slice(1));
        await store.putSnapshot({ ...record, snapshotId: 'snap-b', createdAt: '2025-02-01T00:00:00.000Z' }, queries);
        expect((await store.listSnapshots()).map((s) => [s.snapshotId, s.queryCount, s.parentId])).toEqual([
          ['snap-aa2', 2, 'snap-aa1'],
          ['snap-b', 3, null],
          ['snap-aa1', 3, null],
        ]);
        expect(await store.snapshotIdsStartingWith('snap-aa')).toEqual(['snap-aa1', 'snap-aa2']);
        expect(await store.snapshotIdsStartingWith('snap-b')).toEqual(['snap-b']);
        expect(await store.snapshotIdsStartingWith('snap-%')).toEqual([]); // no pattern characters
        expect(await store.snapshotIdsStartingWith('snap-_a1')).toEqual([]);
      });
    });

    test('rubrics: by version, first write wins', async () => {
      const content = { dimensions: [{ id: 'd1', text: 'Intent' }], weights: { C1: [0.5, 0.5] } };
      await store.putRubric('rv1', 'lattice', content);
      await store.putRubric('rv1', 'cab', { other: true });
      expect(await store.getRubric('rv1')).toEqual({ protocol: 'lattice', content });
      expect(await store.getRubric('rv2')).toBeNull();
    });

    describe('responses', () => {
      test('round trip of every field; first write wins; ordered by query id then copilot', async () => {
        const first = aResponse('r1', 'q2', 'Bolt');
        await store.putResponse(first);
        await store.putResponse({ ...first, text: 'a retried attempt', status: 'failed' });
        await store.putResponse(aResponse('r1', 'q1', 'Bolt', { status: 'missing', text: null, raw: null, errorKind: 'missing', errorMessage: 'no row', latencyMs: null, conversationId: null }));
        await store.putResponse(aResponse('r1', 'q1', 'Ace', { html: '<p>x</p>', context: 'ctx' }));
        await store.putResponse(aResponse('r2', 'q1', 'Ace'));
        expect(await store.getResponse('r1', 'q2', 'Bolt')).toEqual(first);
        expect(await store.getResponse('r1', 'q2', 'Ace')).toBeNull();
        expect((await store.responses('r1')).map((r) => `${r.queryId}/${r.copilot}/${r.status}`)).toEqual(['q1/Ace/ok', 'q1/Bolt/missing', 'q2/Bolt/ok']);
        expect((await store.responses('r1'))[0]).toEqual(aResponse('r1', 'q1', 'Ace', { html: '<p>x</p>', context: 'ctx' }));
      });

      test('adoptResponses copies another run\'s responses once, keeping what the target already has', async () => {
        await store.putResponse(aResponse('src', 'q1', 'Ace'));
        await store.putResponse(aResponse('src', 'q2', 'Ace', { status: 'failed', text: null, errorKind: 'http', errorMessage: '500' }));
        await store.putResponse(aResponse('dst', 'q2', 'Ace', { text: 'already here' }));
        expect(await store.adoptResponses('src', 'dst')).toBe(1);
        expect(await store.adoptResponses('src', 'dst')).toBe(0);
        expect(await store.getResponse('dst', 'q1', 'Ace')).toEqual(aResponse('dst', 'q1', 'Ace'));
        expect((await store.getResponse('dst', 'q2', 'Ace'))!.text).toBe('already here');
        expect(await store.responses('src')).toHaveLength(2);
      });
    });

    describe('judging', () => {
      const units: JudgeUnit[] = [
        { queryId: 'q1', copilots: ['Bolt', 'Ace'] },
        { queryId: 'q2', copilots: ['Ace', 'Bolt'] },
        { queryId: 'q3', copilots: ['Ace'] },
      ];

      test('units and plan: stored together, read in order and by range; a second plan changes nothing', async () => {
        expect(await store.runPlan('r1')).toBeUndefined();
        expect(await store.judgeUnits('r1')).toEqual([]);
        const plan = { seed: 's', schedule: { orders: { q1: ['Bolt', 'Ace'] } }, predecessorImbalance: 0.25 };
        await store.putJudgeUnits('r1', units, plan);
        await store.putJudgeUnits('r1', units.slice(0, 1).map((u) => ({ ...u, copilots: ['Other'] })), { seed: 'other' });
        expect(await store.judgeUnits('r1')).toEqual(units);
        expect(await store.judgeUnits('r1', 1, 2)).toEqual([units[1]]);
        expect(await store.judgeUnits('r1', 2)).toEqual([units[2]]);
        expect(await store.runPlan('r1')).toEqual(plan);
        await store.putJudgeUnits('r2', units);
        expect(await store.runPlan('r2')).toBeUndefined();
        expect(await store.judgeUnits('r2')).toHaveLength(3);
      });

      test('units and plan are atomic: a plan that cannot be stored leaves no units behind', async () => {
        await expect(store.putJudgeUnits('r1', units, { cannotSerialise: BigInt(1) })).rejects.toThrow();
        expect(await store.judgeUnits('r1')).toEqual([]);
        expect(await store.runPlan('r1')).toBeUndefined();
      });

      test('judgments: first write wins, keyed by rubric version too, filtered and ordered', async () => {
        const first = aJudgment('r1', 'q2', 'Ace');
        await store.putJudgment(first);
        await store.putJudgment({ ...first, total: 1, status: 'failed' });
        const failed = aJudgment('r1', 'q2', 'Ace', { rubricVersion: 'rv2', status: 'failed', scores: null, rationales: null, total: null, rank: null, position: null, error: 'invalid answer', attempts: 3 });
        await store.putJudgment(failed);
        await store.putJudgment(aJudgment('r1', 'q1', 'Bolt'));
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv1')).toEqual(first);
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv2')).toEqual(failed);
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv3')).toBeNull();
        expect((await store.judgments('r1', 'rv1')).map((j) => `${j.queryId}/${j.copilot}`)).toEqual(['q1/Bolt', 'q2/Ace']);
        expect(await store.judgments('r1', 'rv2')).toEqual([failed]);
        expect(await store.judgments('r1')).toHaveLength(3);
        expect(await store.judgments('r9')).toEqual([]);
      });

      test('putJudgments: all of a unit\'s verdicts or none; each row first-write-wins', async () => {
        const kept = aJudgment('r1', 'q1', 'Ace', { total: 10 });
        await store.putJudgment(kept);
        await store.putJudgments([aJudgment('r1', 'q1', 'Ace', { total: 99 }), aJudgment('r1', 'q1', 'Bolt', { rank: 1 })]);
        expect((await store.getJudgment('r1', 'q1', 'Ace', 'rv1'))!.total).toBe(10);
        expect((await store.getJudgment('r1', 'q1', 'Bolt', 'rv1'))!.rank).toBe(1);
        // A batch whose last row cannot be stored (a score that is not JSON) stores none of its rows.
        const broken = aJudgment('r1', 'q2', 'Bolt', { scores: { d1: BigInt(7) as unknown as number } });
        await expect(store.putJudgments([aJudgment('r1', 'q2', 'Ace'), broken])).rejects.toThrow();
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv1')).toBeNull();
      });

      test('conversation turns: read back in turn order, first write wins, per rubric version', async () => {
        for (const turn of [3, 1, 1001, 2]) await store.putJudgeTurn('r1', 'q1', 'rv1', turn, { kind: 'scoring', messages: [{ role: 'user', content: `turn ${turn}` }] }, `answer ${turn}`);
        await store.putJudgeTurn('r1', 'q1', 'rv1', 2, { stale: true }, 'a stale attempt');
        await store.putJudgeTurn('r1', 'q1', 'rv2', 1, { other: 'version' }, 'v2');
        await store.putJudgeTurn('r1', 'q2', 'rv1', 1, {}, 'other query');
        const turns = await store.judgeTurns('r1', 'q1', 'rv1');
        expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 1001]);
        expect(turns[1]).toEqual({ turn: 2, request: { kind: 'scoring', messages: [{ role: 'user', content: 'turn 2' }] }, answer: 'answer 2' });
        expect(await store.judgeTurns('r1', 'q1', 'rv2')).toEqual([{ turn: 1, request: { other: 'version' }, answer: 'v2' }]);
        expect(await store.judgeTurns('r1', 'q9', 'rv1')).toEqual([]);
      });
    });

    test('store id: made once, the same for every connection', async () => {
      const id = await store.storeId();
      expect(id).toMatch(/^\S{16,}$/);
      expect(await store.storeId()).toBe(id);
      expect(await (await another()).storeId()).toBe(id);
    });

    test('answer cache: miss, hit, first answer kept', async () => {
      expect(await store.cachedAnswer('key-1')).toBeNull();
      await store.cacheAnswer('key-1', '{"d1":{"score":7}}');
      await store.cacheAnswer('key-1', 'later');
      await store.cacheAnswer('key-2', '');
      expect(await store.cachedAnswer('key-1')).toBe('{"d1":{"score":7}}');
      expect(await store.cachedAnswer('key-2')).toBe('');
    });

    test('snapshot job work: per job and key, first write wins', async () => {
      expect(await store.getWork('job-1', 'plan')).toBeNull();
      await store.putWork('job-1', 'plan', { cells: ['T1/C1'], promptsVersion: 'p1' });
      await store.putWork('job-1', 'plan', { cells: [] });
      await store.putWork('job-2', 'plan', 'other job');
      await store.putWork('job-1', 'counts', 0);
      expect(await store.getWork('job-1', 'plan')).toEqual({ cells: ['T1/C1'], promptsVersion: 'p1' });
      expect(await store.getWork('job-2', 'plan')).toBe('other job');
      expect(await store.getWork('job-1', 'counts')).toBe(0);
    });

    test('schedule lineage: newest first per schedule, idempotent, run recorded later', async () => {
      const row = (workflowId: string, snapshotId: string, createdAt: string) => ({ schedule: 'weekly', workflowId, snapshotId, parentId: null, createdAt, runId: null });
      await store.recordScheduleSnapshot(row('wf-1', 'snap-1', '2025-01-01T00:00:00.000Z'));
      await store.recordScheduleSnapshot({ ...row('wf-2', 'snap-2', '2025-01-08T00:00:00.000Z'), parentId: 'snap-1' });
      await store.recordScheduleSnapshot(row('wf-2', 'snap-other', '2025-02-01T00:00:00.000Z'));
      await store.recordScheduleSnapshot({ ...row('wf-9', 'snap-9', '2025-03-01T00:00:00.000Z'), schedule: 'daily' });
      await store.setScheduleRun('weekly', 'wf-2', 'run-2');
      expect(await store.scheduleSnapshots('weekly')).toEqual([
        { schedule: 'weekly', workflowId: 'wf-2', snapshotId: 'snap-2', parentId: 'snap-1', createdAt: '2025-01-08T00:00:00.000Z', runId: 'run-2' },
        { schedule: 'weekly', workflowId: 'wf-1', snapshotId: 'snap-1', parentId: null, createdAt: '2025-01-01T00:00:00.000Z', runId: null },
      ]);
      expect(await store.scheduleSnapshots('none')).toEqual([]);
    });

    test('two connections writing interleaved: every row once, the first writer wins, each sees the other\'s writes', async () => {
      const other = await another();
      await store.createRun(aRun('shared'));
      expect(await other.getRun('shared')).toMatchObject({ runId: 'shared', status: 'running' });
      const writes: Array<Promise<void>> = [];
      for (let q = 0; q < 40; q++) {
        const [a, b] = q % 2 ? [store, other] : [other, store];
        writes.push(a.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Ace', { text: `first ${q}` })));
        writes.push(b.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Ace', { text: `second ${q}` })));
        writes.push(b.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Bolt')));
        writes.push(a.putJudgeTurn('shared', `q${q}`, 'rv1', 1, { by: 'a' }, 'a'));
        writes.push(b.putJudgeTurn('shared', `q${q}`, 'rv1', 1, { by: 'b' }, 'b'));
      }
      await Promise.all(writes);
      for (const s of [store, other]) {
        const rows = await s.responses('shared');
        expect(rows).toHaveLength(80);
        const ace = rows.filter((r) => r.copilot === 'Ace');
        expect(ace.every((r) => r.text === `first ${Number(r.queryId.slice(1))}` || r.text === `second ${Number(r.queryId.slice(1))}`)).toBe(true);
        expect(await s.judgeTurns('shared', 'q7', 'rv1')).toHaveLength(1);
      }
      // Both connections agree on which write won.
      expect(await other.responses('shared')).toEqual(await store.responses('shared'));
      await other.finishRun('shared', 'completed', '/r.json', { Ace: 1 }, '2025-01-02T00:00:00.000Z');
      expect((await store.getRun('shared'))!.status).toBe('completed');
    });
  });
}
