import {
  artefactIdOf,
  type JudgeUnit,
  type NewRun,
  type RecordCounts,
  type ResultsStore,
  type StoreRecord,
} from '../../core/model/store';
import type { Answer, StudyRecord } from '../../core/study/types';
import type { StoredGroundingCheck } from '../../core/grounding/checks';
import type { LlmCallRecord, Query, StoredJudgment, StoredResponse } from '../../core/model/types';

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

export const aResponse = (
  runId: string,
  queryId: string,
  copilot: string,
  over: Partial<StoredResponse> = {},
): StoredResponse => ({
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

export const aJudgment = (
  runId: string,
  queryId: string,
  copilot: string,
  over: Partial<StoredJudgment> = {},
): StoredJudgment => ({
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

export const aCall = (runId: string, at: string, over: Partial<LlmCallRecord> = {}): LlmCallRecord => ({
  runId,
  role: 'judge',
  name: 'judge-m',
  model: 'judge-m',
  queryId: 'q1',
  promptTokens: 1200,
  completionTokens: 300,
  cachedTokens: 0,
  latencyMs: 812.25,
  ok: true,
  errorKind: null,
  at,
  ...over,
});

export const aStudy = (name: string, over: Partial<StudyRecord> = {}): StudyRecord => ({
  name,
  runId: 'r1',
  status: 'open',
  createdAt: '2025-02-01T00:00:00.000Z',
  closedAt: null,
  workflowId: `study-${name}`,
  spec: {
    copilots: ['Ace', 'Bolt'],
    queryIds: ['q1', 'q2'],
    perItem: 2,
    seed: 's',
    deadline: null,
    remindBefore: null,
    options: { choices: ['A', 'B', 'tie'] } as never,
    excluded: { failed: 0, missing: 0, pairs: 0 },
  },
  ...over,
});

const answer = (choice: Answer['choice'], reason: string | null = 'Accuracy'): Answer => ({
  choice,
  reason,
  seriousError: false,
  errorType: null,
  comment: null,
});

/** A study with two items, four assignments dealt to two annotators (token hashes th-ann-1, th-ann-2). */
async function makeStudy(store: ResultsStore, name = 'pilot'): Promise<void> {
  await store.studies.createStudy(
    aStudy(name),
    [
      { itemId: `${name}-i1`, queryId: 'q1', first: 'Ace', second: 'Bolt' },
      { itemId: `${name}-i2`, queryId: 'q2', first: 'Ace', second: 'Bolt' },
    ],
    [
      { assignmentId: `${name}-a1`, itemId: `${name}-i1`, slot: 0, left: 'Ace', right: 'Bolt' },
      { assignmentId: `${name}-a2`, itemId: `${name}-i1`, slot: 1, left: 'Bolt', right: 'Ace' },
      { assignmentId: `${name}-a3`, itemId: `${name}-i2`, slot: 2, left: 'Ace', right: 'Bolt' },
      { assignmentId: `${name}-a4`, itemId: `${name}-i2`, slot: 3, left: 'Bolt', right: 'Ace' },
    ],
  );
  await store.studies.addAnnotators(
    name,
    [
      { annotatorId: `${name}-ann-1`, study: name, label: 'alice', source: 'app', tokenHash: `th-${name}-1` },
      { annotatorId: `${name}-ann-2`, study: name, label: 'bob', source: 'app', tokenHash: `th-${name}-2` },
    ],
    [
      { assignmentId: `${name}-a1`, annotatorId: `${name}-ann-1`, order: 0 },
      { assignmentId: `${name}-a3`, annotatorId: `${name}-ann-1`, order: 1 },
      { assignmentId: `${name}-a2`, annotatorId: `${name}-ann-2`, order: 0 },
      { assignmentId: `${name}-a4`, annotatorId: `${name}-ann-2`, order: 1 },
    ],
  );
}

const submission = (
  study: string,
  id: string,
  assignment: string,
  annotator: string,
  a: Answer,
  receivedAt: string,
) => ({
  submissionId: id,
  study,
  assignmentId: assignment,
  annotatorId: annotator,
  answer: a,
  receivedAt,
});

/** Something in every table: what `store copy` must carry over. */
export async function fillEverything(store: ResultsStore): Promise<void> {
  await store.putSnapshot(
    { snapshotId: 'snap-x', createdAt: '2025-01-01T00:00:00.000Z', parentId: null, meta: { generator: 'test' } },
    queries,
  );
  await store.putRubric('rv1', 'cab', { dimensions: [{ id: 'd1' }], z: 1, a: 2 });
  await store.createRun(aRun('r1', { protocol: 'cab', snapshotId: 'snap-x' }));
  await store.finishRun('r1', 'completed', '/out/r1/report.json', { Ace: 30.5 }, '2025-01-02T00:00:00.000Z');
  await store.createRun(aRun('r2', { sourceRunId: 'r1' }));
  for (const q of ['q-a', 'q-b'])
    for (const c of ['Ace', 'Bolt'])
      await store.putResponse(aResponse('r1', q, c, { html: c === 'Bolt' ? '<b>x</b>' : null }));
  await store.putResponse(
    aResponse('r1', 'q-c', 'Ace', {
      status: 'failed',
      text: null,
      errorKind: 'http',
      errorMessage: '503',
      latencyMs: null,
    }),
  );
  await store.putJudgeUnits(
    'r1',
    [
      { queryId: 'q-a', copilots: ['Bolt', 'Ace'] },
      { queryId: 'q-b', copilots: ['Ace', 'Bolt'] },
    ],
    { seed: 's', orders: { 'q-a': ['Bolt', 'Ace'] } },
  );
  await store.putJudgeUnits('r2', [{ queryId: 'q-a', copilots: ['Ace'] }]);
  await store.putJudgments([
    aJudgment('r1', 'q-a', 'Ace', { rank: 1 }),
    aJudgment('r1', 'q-a', 'Bolt', { rank: 2, position: 1 }),
  ]);
  await store.putJudgment(
    aJudgment('r1', 'q-b', 'Ace', {
      status: 'failed',
      scores: null,
      rationales: null,
      total: null,
      rank: null,
      position: null,
      error: 'invalid',
      attempts: 3,
    }),
  );
  await store.putJudgeTurn('r1', 'q-a', 'rv1', 1, { messages: [{ role: 'user', content: 'x' }] }, 'a1');
  await store.putJudgeTurn('r1', 'q-a', 'rv1', 2, { messages: [] }, 'a2');
  await store.putJudgment(aJudgment('r1', 'q-a', 'Ace', { sample: 1, judgeName: 'panel-b', total: 12 }));
  await store.putJudgeTurn('r1', 'q-a', 'rv1', 1, { messages: [] }, 'panel b, sample 1', {
    sample: 1,
    judge: 'panel-b',
  });
  await store.putLlmCall(aCall('r1', '2025-01-01T00:00:05.000Z'));
  await store.putLlmCall(
    aCall('r1', '2025-01-01T00:00:05.000Z', {
      ok: false,
      errorKind: 'timeout',
      promptTokens: null,
      completionTokens: null,
      cachedTokens: null,
    }),
  );
  await store.putLlmCall(aCall('r2', '2025-01-01T00:00:06.000Z', { role: 'copilot', name: 'Ace', model: null }));
  await store.cacheAnswer('cache-key-1', '{"d1":7}');
  await store.putWork('job-1', 'plan', { cells: ['T1/C1'] });
  await store.recordScheduleSnapshot({
    schedule: 'weekly',
    workflowId: 'wf-1',
    snapshotId: 'snap-x',
    parentId: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    runId: null,
  });
  await store.recordScheduleSnapshot({
    schedule: 'weekly',
    workflowId: 'wf-2',
    snapshotId: 'snap-x',
    parentId: 'snap-x',
    createdAt: '2025-01-01T00:00:00.000Z',
    runId: null,
  });
  await store.setScheduleRun('weekly', 'wf-2', 'r1');
  await makeStudy(store);
  await store.studies.putSubmission(
    submission('pilot', 'sub-1', 'pilot-a1', 'pilot-ann-1', answer('A'), '2025-02-02T00:00:00.000Z'),
  );
  await store.studies.putSubmission(
    submission('pilot', 'sub-2', 'pilot-a1', 'pilot-ann-1', answer('B'), '2025-02-02T00:01:00.000Z'),
  );
  await store.studies.putSubmission(
    submission('pilot', 'sub-3', 'pilot-a2', 'pilot-ann-2', answer('tie', null), '2025-02-02T00:02:00.000Z'),
  );
  await store.studies.recordSubmission('sub-1');
  await store.studies.recordSubmission('sub-2');
  await store.studies.importAnnotations('pilot', [
    {
      annotator: 'carol',
      itemId: 'pilot-i2',
      left: 'Ace',
      right: 'Bolt',
      answer: answer('A'),
      submittedAt: '2025-02-03T00:00:00.000Z',
    },
  ]);
  await store.studies.addStudyEvent('pilot', 'reminder', { pending: ['bob'] });
  await store.putArtefact({ runId: 'r1', name: 'Ace-q-c.png', contentType: 'image/png', bytes: PNG_BYTES });
  await store.putResponse(
    aResponse('r1', 'q-d', 'Ace', {
      context: 'TVL of Aave: $3.2B',
      sources: [{ id: '1', url: 'https://x.test/a', title: 'Aave', text: 'TVL $3.2B' }],
    }),
  );
  await store.putGroundingCheck(aGroundingCheck('r1', 'q-d', 'Ace'));
  await store.putAgentStep({
    runId: 'r1',
    queryId: 'q-a',
    copilot: 'Ace',
    step: {
      kind: 'model',
      seq: 0,
      turn: 1,
      text: null,
      toolCalls: [{ id: 'c1', name: 'get_tvl', arguments: { protocol: 'Aave' } }],
      usage: { promptTokens: 9, completionTokens: 3, cachedTokens: null },
      latencyMs: 40,
      startedAt: 't0',
      finishedAt: 't1',
    },
  });
  await store.putAgentStep({
    runId: 'r1',
    queryId: 'q-a',
    copilot: 'Ace',
    step: {
      kind: 'tool',
      seq: 1,
      turn: 1,
      callId: 'c1',
      tool: 'get_tvl',
      arguments: { protocol: 'Aave' },
      result: '{"tvl":3.2e9}',
      isError: false,
      origin: 'live',
      latencyMs: 8,
      startedAt: 't1',
      finishedAt: 't2',
    },
  });
  await store.putWorldCalls('r1', [
    {
      key: 'k1',
      tool: 'get_tvl',
      arguments: '{"protocol":"Aave"}',
      result: '{"tvl":3.2e9}',
      isError: false,
      recordedAt: '2025-01-01T00:00:07.000Z',
    },
  ]);
}

export const aGroundingCheck = (
  runId: string,
  queryId: string,
  copilot: string,
  over: Partial<StoredGroundingCheck> = {},
): StoredGroundingCheck => ({
  runId,
  queryId,
  copilot,
  groundingVersion: 'gv1',
  judgeName: '',
  status: 'ok',
  label: 'partial',
  claims: [
    {
      index: 0,
      text: 'Aave TVL is $3.2B',
      status: 'exact',
      excerpt: 'TVL of Aave: $3.2B',
      entity: 'Aave',
      metric: 'TVL',
      value: 3.2e9,
      unit: 'USD',
      citation: { source: '1', verdict: 'direct' },
    },
    {
      index: 1,
      text: 'Aave launched in 2017',
      status: 'fabricated',
      excerpt: null,
      entity: null,
      metric: null,
      value: null,
      unit: null,
      citation: null,
    },
  ],
  error: null,
  judge: { model: 'judge', baseURL: 'http://judge.test/v1' },
  attempts: 1,
  createdAt: '2025-01-01T00:00:00.000Z',
  ...over,
});

/** Every byte value, a NUL first (PostgreSQL text could not hold it; a screenshot's bytes must survive exactly). */
const PNG_BYTES = Buffer.concat([
  Buffer.from([0, 0x89, 0x50, 0x4e, 0x47]),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
]);

/** Everything a store holds, read through the interface (what a copy must reproduce). */
export async function everything(store: ResultsStore): Promise<unknown> {
  const runs = await store.listRuns();
  const perRun = await Promise.all(
    ['r1', 'r2'].map(async (runId) => ({
      responses: await store.responses(runId),
      units: await store.judgeUnits(runId),
      plan: await store.runPlan(runId),
      judgments: await store.judgments(runId),
      turns: await store.judgeTurns(runId, 'q-a', 'rv1'),
      otherSlotTurns: await store.judgeTurns(runId, 'q-a', 'rv1', { sample: 1, judge: 'panel-b' }),
      calls: await store.llmCalls(runId),
      artefacts: await Promise.all(
        (await store.artefacts(runId)).map(async (a) => ({
          ...a,
          bytes: (await store.getArtefact(a.artefactId))!.bytes,
        })),
      ),
      grounding: await store.groundingChecks(runId),
      agentSteps: await store.runAgentSteps(runId),
      world: await store.worldCalls(runId),
    })),
  );
  const studies = await store.studies.listStudies();
  const study = {
    items: await store.studies.studyItems('pilot'),
    assignments: await store.studies.studyAssignments('pilot'),
    annotators: await store.studies.annotators('pilot'),
    byToken: await store.studies.annotatorByTokenHash('th-pilot-1'),
    queue: await store.studies.annotatorQueue('pilot-ann-1'),
    annotations: await store.studies.annotations('pilot'),
    // seq is each store's own numbering; the order is what must survive
    submissions: (await store.studies.submissions('pilot')).map(({ seq: _seq, ...rest }) => rest),
    events: await store.studies.studyEvents('pilot'),
  };
  return {
    snapshots: await store.listSnapshots(),
    queries: await store.snapshotQueries('snap-x'),
    rubric: await store.getRubric('rv1'),
    runs,
    perRun,
    cache: await store.cachedAnswer('cache-key-1'),
    work: await store.getWork('job-1', 'plan'),
    schedule: await store.scheduleSnapshots('weekly'),
    studies,
    study,
  };
}

async function copyAll(from: ResultsStore, to: ResultsStore): Promise<RecordCounts> {
  const total: RecordCounts = {};
  for await (const batch of from.exportRecords())
    for (const [kind, n] of Object.entries(await to.importRecords(batch)))
      total[kind as StoreRecord['kind']] = (total[kind as StoreRecord['kind']] ?? 0) + n;
  return total;
}

const queries: Query[] = [
  { id: 'q-b', text: 'Second id, first position', task: 'T1', category: 'C1' },
  { id: 'q-a', text: 'First id, second position', tags: 'Meme Coins', history: [{ role: 'user', content: 'earlier' }] },
  { id: 'q-c', text: 'Third', context: 'ctx' },
];

/**
 * After a store made before samples and panels (one verdict r1/q1/Ace/rv1 with total 70 and scores {d1: 7}, one turn
 * answered 'old answer' with request `oldRequest`) is opened by two connections `a` and `b`: its rows are sample 0 of
 * judge '' and new slots can be added.
 */
export async function expectOldVerdictsAsFirstSlot(
  a: ResultsStore,
  b: ResultsStore,
  oldRequest: unknown,
): Promise<void> {
  expect(await a.getJudgment('r1', 'q1', 'Ace', 'rv1')).toMatchObject({
    total: 70,
    sample: 0,
    judgeName: '',
    scores: { d1: 7 },
  });
  expect(await b.judgeTurns('r1', 'q1', 'rv1')).toEqual([{ turn: 1, request: oldRequest, answer: 'old answer' }]);
  await b.putJudgment({ ...(await a.getJudgment('r1', 'q1', 'Ace', 'rv1'))!, sample: 1, total: 40 });
  expect((await a.judgments('r1')).map((j) => [j.sample, j.total])).toEqual([
    [0, 70],
    [1, 40],
  ]);
}

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
        expect(await store.getRun('r1')).toEqual({
          ...aRun('r1'),
          status: 'running',
          finishedAt: null,
          reportPath: null,
          summary: null,
        });
        expect(await store.listRuns()).toHaveLength(1);
        expect(await store.getRun('nope')).toBeNull();
      });

      test('finishRun records status, report path, summary and time', async () => {
        await store.createRun(aRun('r1'));
        await store.finishRun(
          'r1',
          'completed',
          '/out/r1/report.json',
          { Ace: 71.5, Bolt: null },
          '2025-01-02T00:00:00.000Z',
        );
        expect(await store.getRun('r1')).toMatchObject({
          status: 'completed',
          reportPath: '/out/r1/report.json',
          summary: { Ace: 71.5, Bolt: null },
          finishedAt: '2025-01-02T00:00:00.000Z',
        });
        await store.createRun(aRun('r2'));
        await store.finishRun('r2', 'failed', null, { error: 'boom' }, '2025-01-03T00:00:00.000Z');
        expect(await store.getRun('r2')).toMatchObject({
          status: 'failed',
          reportPath: null,
          summary: { error: 'boom' },
        });
      });

      test('replaceRunConfig replaces the config and the judge record, keeping the rest of the run', async () => {
        await store.createRun(aRun('r1'));
        await store.finishRun('r1', 'failed', null, { error: 'paused' }, '2025-01-02T00:00:00.000Z');
        const before = (await store.getRun('r1'))!;
        const config = {
          ...(before.config as Record<string, unknown>),
          copilots: [{ name: 'Ace', type: 'http', answerPath: 'choices[0].message.content' }],
        };
        await store.replaceRunConfig('r1', config, { model: 'judge-2', baseURL: 'http://judge-2/v1', temperature: 0 });
        expect(await store.getRun('r1')).toEqual({
          ...before,
          config,
          judge: { model: 'judge-2', baseURL: 'http://judge-2/v1', temperature: 0 },
        });
        await store.replaceRunConfig('nope', config, before.judge); // no such run: nothing written
        expect(await store.getRun('nope')).toBeNull();
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
      const record = {
        snapshotId: 'snap-abc123',
        createdAt: '2025-01-01T00:00:00.000Z',
        parentId: null,
        meta: { generator: 'test', counts: { task: { T1: 1 } } },
      };

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
        await store.putSnapshot(
          { ...record, createdAt: '2026-01-01T00:00:00.000Z', parentId: 'snap-other', meta: { generator: 'again' } },
          queries.slice(0, 1),
        );
        expect(await store.getSnapshot('snap-abc123')).toEqual({ ...record, queryCount: 3 });
        expect(await store.snapshotQueries('snap-abc123')).toEqual(queries);
      });

      test('list is newest first; ids by prefix', async () => {
        await store.putSnapshot({ ...record, snapshotId: 'snap-aa1', createdAt: '2025-01-01T00:00:00.000Z' }, queries);
        await store.putSnapshot(
          { ...record, snapshotId: 'snap-aa2', createdAt: '2025-03-01T00:00:00.000Z', parentId: 'snap-aa1' },
          queries.slice(1),
        );
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
      test('putResponses: many in one transaction, all or none; each row first-write-wins', async () => {
        const kept = aResponse('r1', 'q1', 'Ace', { text: 'stored first' });
        await store.putResponse(kept);
        await store.putResponses([]);
        await store.putResponses([
          aResponse('r1', 'q1', 'Ace', { text: 'a second import' }),
          aResponse('r1', 'q1', 'Bolt', {
            status: 'missing',
            text: null,
            errorKind: 'missing',
            errorMessage: 'no row',
          }),
          aResponse('r1', 'q2', 'Ace', { html: '<p>x</p>', context: 'ctx' }),
        ]);
        expect(await store.getResponse('r1', 'q1', 'Ace')).toEqual(kept);
        expect((await store.responses('r1')).map((r) => `${r.queryId}/${r.copilot}/${r.status}`)).toEqual([
          'q1/Ace/ok',
          'q1/Bolt/missing',
          'q2/Ace/ok',
        ]);
        expect(await store.getResponse('r1', 'q2', 'Ace')).toEqual(
          aResponse('r1', 'q2', 'Ace', { html: '<p>x</p>', context: 'ctx' }),
        );
        // A batch whose last row cannot be stored (sources that are not JSON) stores none of its rows.
        const broken = aResponse('r1', 'q3', 'Bolt', { sources: [{ n: BigInt(7) }] as unknown as never });
        await expect(store.putResponses([aResponse('r1', 'q3', 'Ace'), broken])).rejects.toThrow();
        expect(await store.getResponse('r1', 'q3', 'Ace')).toBeNull();
      });

      test("responseStatuses: these copilots' keys and statuses in this run, no texts", async () => {
        await store.putResponses([
          aResponse('r1', 'q1', 'Ace'),
          aResponse('r1', 'q1', 'Bolt', {
            status: 'missing',
            text: null,
            errorKind: 'missing',
            errorMessage: 'no row',
          }),
          aResponse('r1', 'q2', 'Cyan'),
          aResponse('r2', 'q1', 'Ace'),
        ]);
        const statuses = await store.responseStatuses('r1', ['Ace', 'Bolt']);
        expect(statuses.map((r) => `${r.queryId}/${r.copilot}/${r.status}`).sort()).toEqual([
          'q1/Ace/ok',
          'q1/Bolt/missing',
        ]);
        expect(Object.keys(statuses[0]).sort()).toEqual(['copilot', 'queryId', 'status']);
        expect(await store.responseStatuses('r1', [])).toEqual([]);
        expect(await store.responseStatuses('r3', ['Ace'])).toEqual([]);
        // Only the queries asked for (the planner's page of queries), with every copilot asked for.
        await store.putResponses([aResponse('r1', 'q2', 'Ace'), aResponse('r1', 'q3', 'Ace')]);
        const some = await store.responseStatuses('r1', ['Ace', 'Bolt', 'Cyan'], ['q1', 'q3']);
        expect(some.map((r) => `${r.queryId}/${r.copilot}/${r.status}`).sort()).toEqual([
          'q1/Ace/ok',
          'q1/Bolt/missing',
          'q3/Ace/ok',
        ]);
        expect(await store.responseStatuses('r1', ['Ace'], [])).toEqual([]);
      });

      test('round trip of every field; first write wins; ordered by query id then copilot', async () => {
        const first = aResponse('r1', 'q2', 'Bolt');
        await store.putResponse(first);
        await store.putResponse({ ...first, text: 'a retried attempt', status: 'failed' });
        await store.putResponse(
          aResponse('r1', 'q1', 'Bolt', {
            status: 'missing',
            text: null,
            raw: null,
            errorKind: 'missing',
            errorMessage: 'no row',
            latencyMs: null,
            conversationId: null,
          }),
        );
        await store.putResponse(aResponse('r1', 'q1', 'Ace', { html: '<p>x</p>', context: 'ctx' }));
        await store.putResponse(aResponse('r2', 'q1', 'Ace'));
        expect(await store.getResponse('r1', 'q2', 'Bolt')).toEqual(first);
        expect(await store.getResponse('r1', 'q2', 'Ace')).toBeNull();
        expect((await store.responses('r1')).map((r) => `${r.queryId}/${r.copilot}/${r.status}`)).toEqual([
          'q1/Ace/ok',
          'q1/Bolt/missing',
          'q2/Bolt/ok',
        ]);
        expect((await store.responses('r1'))[0]).toEqual(
          aResponse('r1', 'q1', 'Ace', { html: '<p>x</p>', context: 'ctx' }),
        );
        // A judge's read of one answer: everything but the raw payload and the page.
        expect(await store.getResponse('r1', 'q1', 'Ace', { payloads: false })).toEqual(
          aResponse('r1', 'q1', 'Ace', { html: null, raw: null, context: 'ctx' }),
        );
        expect(await store.getResponse('r1', 'q9', 'Ace', { payloads: false })).toBeNull();
        // A report's read: everything but the raw payload and the page.
        const lean = await store.responses('r1', { payloads: false });
        expect(lean.map((r) => [r.raw, r.html])).toEqual([
          [null, null],
          [null, null],
          [null, null],
        ]);
        expect(lean[0]).toEqual({
          ...aResponse('r1', 'q1', 'Ace', { html: '<p>x</p>', context: 'ctx' }),
          raw: null,
          html: null,
        });
      });

      test('an answer containing U+0000 is stored (PostgreSQL text cannot hold it: it may come back as U+FFFD)', async () => {
        await store.putResponse(
          aResponse('r1', 'q1', 'Ace', { text: 'a\u0000b', raw: '\u0000', errorMessage: 'x\u0000' }),
        );
        await store.putJudgeTurn('r1', 'q1', 'rv1', 1, { m: '\u0000' }, 'ans\u0000');
        const stored = (await store.getResponse('r1', 'q1', 'Ace'))!;
        expect(['a\u0000b', 'a\uFFFDb']).toContain(stored.text);
        expect(['\u0000', '\uFFFD']).toContain(stored.raw);
        expect(await store.judgeTurns('r1', 'q1', 'rv1')).toEqual([
          { turn: 1, request: { m: '\u0000' }, answer: expect.stringMatching(/^ans[\u0000\uFFFD]$/) },
        ]);
      });

      test("adoptResponses copies another run's responses once, keeping what the target already has", async () => {
        await store.putResponse(aResponse('src', 'q1', 'Ace'));
        await store.putResponse(
          aResponse('src', 'q2', 'Ace', { status: 'failed', text: null, errorKind: 'http', errorMessage: '500' }),
        );
        await store.putResponse(aResponse('dst', 'q2', 'Ace', { text: 'already here' }));
        expect(await store.adoptResponses('src', 'dst')).toBe(1);
        expect(await store.adoptResponses('src', 'dst')).toBe(0);
        expect(await store.getResponse('dst', 'q1', 'Ace')).toEqual(aResponse('dst', 'q1', 'Ace'));
        expect((await store.getResponse('dst', 'q2', 'Ace'))!.text).toBe('already here');
        expect(await store.responses('src')).toHaveLength(2);
      });
      test('reopenItems removes exactly the listed failures, verdicts and judge turns, and marks the run running again', async () => {
        await store.createRun(aRun('r1'));
        await store.finishRun('r1', 'completed', '/x/report.json', { n: 1 }, '2026-01-01T00:00:00.000Z');
        await store.putResponse(
          aResponse('r1', 'q1', 'Ace', {
            status: 'failed',
            text: null,
            errorKind: 'network',
            errorMessage: 'ECONNRESET',
          }),
        );
        await store.putResponse(aResponse('r1', 'q1', 'Bolt'));
        await store.putResponse(
          aResponse('r2', 'q1', 'Ace', {
            status: 'failed',
            text: null,
            errorKind: 'network',
            errorMessage: 'ECONNRESET',
          }),
        );
        await store.putJudgment(
          aJudgment('r1', 'q1', 'Ace', {
            status: 'failed',
            total: null,
            scores: null,
            rationales: null,
            error: 'no answer',
          }),
        );
        await store.putJudgment(aJudgment('r1', 'q1', 'Ace', { sample: 1 }));
        await store.putJudgment(aJudgment('r1', 'q1', 'Bolt'));
        await store.putJudgeTurn('r1', 'q1', 'rv1', 1, { m: 1 }, 'a');
        await store.putJudgeTurn('r1', 'q1', 'rv1', 1, { m: 1 }, 'b', { sample: 1, judge: '' });
        await store.reopenItems('r1', {
          responses: [{ queryId: 'q1', copilot: 'Ace' }],
          judgments: [{ queryId: 'q1', copilot: 'Ace', sample: 0, judge: '' }],
          turns: [{ queryId: 'q1', sample: 0, judge: '' }],
        });
        expect((await store.responses('r1')).map((r) => r.copilot)).toEqual(['Bolt']);
        expect(await store.responses('r2')).toHaveLength(1);
        expect((await store.judgments('r1')).map((j) => `${j.copilot}/${j.sample}`)).toEqual(['Ace/1', 'Bolt/0']);
        expect(await store.judgeTurns('r1', 'q1', 'rv1')).toEqual([]);
        expect(await store.judgeTurns('r1', 'q1', 'rv1', { sample: 1, judge: '' })).toHaveLength(1);
        expect(await store.getRun('r1')).toMatchObject({ status: 'running', finishedAt: null });
        // The answer asked again is stored as any first answer is.
        await store.putResponse(aResponse('r1', 'q1', 'Ace'));
        expect((await store.getResponse('r1', 'q1', 'Ace'))!.status).toBe('ok');
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
        await store.putJudgeUnits(
          'r1',
          units.slice(0, 1).map((u) => ({ ...u, copilots: ['Other'] })),
          { seed: 'other' },
        );
        expect(await store.judgeUnits('r1')).toEqual(units);
        expect(await store.judgeUnits('r1', 1, 2)).toEqual([units[1]]);
        expect(await store.judgeUnits('r1', 2)).toEqual([units[2]]);
        expect(await store.runPlan('r1')).toEqual(plan);
        await store.putJudgeUnits('r2', units);
        expect(await store.runPlan('r2')).toBeUndefined();
        expect(await store.judgeUnits('r2')).toHaveLength(3);
      });

      test('appended units: each unit once, after the ones already stored, in order; the count is returned', async () => {
        expect(await store.appendJudgeUnits('r1', units.slice(0, 2))).toBe(2);
        expect(await store.appendJudgeUnits('r1', [units[1], units[2], units[0]])).toBe(3);
        expect(await store.appendJudgeUnits('r1', [])).toBe(3);
        expect(await store.judgeUnits('r1')).toEqual(units);
        expect(await store.judgeUnits('r1', 2, 3)).toEqual([units[2]]);
        // The same query with its copilots in another order is another unit.
        expect(await store.appendJudgeUnits('r1', [{ queryId: 'q1', copilots: ['Ace', 'Bolt'] }])).toBe(4);
        expect(await store.appendJudgeUnits('r2', [units[2]])).toBe(1);
      });

      test('units appended after those put with a plan follow them, and the count stays right with several runs stored', async () => {
        await store.putJudgeUnits('r1', units.slice(0, 2), { plan: 1 });
        await store.appendJudgeUnits('r0', [units[0], units[1], units[2]]);
        expect(await store.appendJudgeUnits('r1', [units[2]])).toBe(3);
        expect(await store.judgeUnits('r1', 2, 3)).toEqual([units[2]]);
        expect(await store.appendJudgeUnits('r0', [])).toBe(3);
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
        const failed = aJudgment('r1', 'q2', 'Ace', {
          rubricVersion: 'rv2',
          status: 'failed',
          scores: null,
          rationales: null,
          total: null,
          rank: null,
          position: null,
          error: 'invalid answer',
          attempts: 3,
        });
        await store.putJudgment(failed);
        await store.putJudgment(aJudgment('r1', 'q1', 'Bolt'));
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv1')).toEqual(first);
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv2')).toEqual(failed);
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv3')).toBeNull();
        expect((await store.judgments('r1', 'rv1')).map((j) => `${j.queryId}/${j.copilot}`)).toEqual([
          'q1/Bolt',
          'q2/Ace',
        ]);
        expect(await store.judgments('r1', 'rv2')).toEqual([failed]);
        expect(await store.judgments('r1')).toHaveLength(3);
        expect(await store.judgments('r9')).toEqual([]);
      });

      test('judgments without rationales, and the rationales of a page of queries apart (issue 35)', async () => {
        const ace = aJudgment('r1', 'q1', 'Ace', { rationales: { d1: 'clear', d2: 'thin' } });
        const second = aJudgment('r1', 'q1', 'Ace', { rationales: { d1: 'second sample' }, sample: 1 });
        const bolt = aJudgment('r1', 'q2', 'Bolt', { rationales: { d1: 'Bolt on q2' }, judgeName: 'panel-b' });
        const failed = aJudgment('r1', 'q3', 'Ace', { status: 'failed', scores: null, rationales: null, total: null });
        const otherVersion = aJudgment('r1', 'q1', 'Bolt', { rubricVersion: 'rv2', rationales: { d1: 'rv2' } });
        for (const j of [ace, second, bolt, failed, otherVersion, aJudgment('r2', 'q1', 'Ace')])
          await store.putJudgment(j);
        // The same rows in the same order, but for their rationales.
        expect(await store.judgments('r1', 'rv1', { rationales: false })).toEqual(
          (await store.judgments('r1', 'rv1')).map((j) => ({ ...j, rationales: null })),
        );
        expect(await store.judgments('r1', 'rv1', { rationales: true })).toEqual(await store.judgments('r1', 'rv1'));
        const key = (v: { queryId: string; copilot: string; sample: number; judgeName: string }) =>
          `${v.queryId}/${v.copilot}/${v.sample}/${v.judgeName}`;
        const read = async (ids: string[]) =>
          (await store.judgmentRationales('r1', 'rv1', ids)).sort((x, y) => key(x).localeCompare(key(y)));
        expect(await read(['q1', 'q3', 'q9'])).toEqual([
          { queryId: 'q1', copilot: 'Ace', sample: 0, judgeName: '', rationales: { d1: 'clear', d2: 'thin' } },
          { queryId: 'q1', copilot: 'Ace', sample: 1, judgeName: '', rationales: { d1: 'second sample' } },
          { queryId: 'q3', copilot: 'Ace', sample: 0, judgeName: '', rationales: null },
        ]);
        expect(await read(['q2'])).toEqual([
          { queryId: 'q2', copilot: 'Bolt', sample: 0, judgeName: 'panel-b', rationales: { d1: 'Bolt on q2' } },
        ]);
        expect(await read([])).toEqual([]);
        expect(await store.judgmentRationales('r1', 'rv2', ['q1'])).toEqual([
          { queryId: 'q1', copilot: 'Bolt', sample: 0, judgeName: '', rationales: { d1: 'rv2' } },
        ]);
      });

      test("putJudgments: all of a unit's verdicts or none; each row first-write-wins", async () => {
        const kept = aJudgment('r1', 'q1', 'Ace', { total: 10 });
        await store.putJudgment(kept);
        await store.putJudgments([
          aJudgment('r1', 'q1', 'Ace', { total: 99 }),
          aJudgment('r1', 'q1', 'Bolt', { rank: 1 }),
        ]);
        expect((await store.getJudgment('r1', 'q1', 'Ace', 'rv1'))!.total).toBe(10);
        expect((await store.getJudgment('r1', 'q1', 'Bolt', 'rv1'))!.rank).toBe(1);
        // A batch whose last row cannot be stored (a score that is not JSON) stores none of its rows.
        const broken = aJudgment('r1', 'q2', 'Bolt', { scores: { d1: BigInt(7) as unknown as number } });
        await expect(store.putJudgments([aJudgment('r1', 'q2', 'Ace'), broken])).rejects.toThrow();
        expect(await store.getJudgment('r1', 'q2', 'Ace', 'rv1')).toBeNull();
      });

      test('every sample of every panel judge is its own verdict and conversation; read back by slot, ordered by judge then sample', async () => {
        const base = aJudgment('r1', 'q1', 'Ace');
        await store.putJudgments([
          { ...base, sample: 1, judgeName: 'panel-b', total: 11 },
          { ...base, sample: 0, judgeName: 'panel-b', total: 10 },
          { ...base, sample: 1, judgeName: '', total: 1 },
        ]);
        await store.putJudgment(base);
        await store.putJudgment({ ...base, sample: 1, judgeName: '', total: 99 }); // first write wins per slot
        expect((await store.judgments('r1')).map((j) => [j.judgeName, j.sample, j.total])).toEqual([
          ['', 0, 55.5],
          ['', 1, 1],
          ['panel-b', 0, 10],
          ['panel-b', 1, 11],
        ]);
        expect((await store.getJudgment('r1', 'q1', 'Ace', 'rv1', { sample: 1, judge: 'panel-b' }))!.total).toBe(11);
        expect(await store.getJudgment('r1', 'q1', 'Ace', 'rv1', { sample: 2, judge: 'panel-b' })).toBeNull();
        await store.putJudgeTurn('r1', 'q1', 'rv1', 1, {}, 'first slot');
        await store.putJudgeTurn('r1', 'q1', 'rv1', 1, {}, 'sample 1 of b', { sample: 1, judge: 'panel-b' });
        expect(await store.judgeTurns('r1', 'q1', 'rv1')).toEqual([{ turn: 1, request: {}, answer: 'first slot' }]);
        expect(await store.judgeTurns('r1', 'q1', 'rv1', { sample: 1, judge: 'panel-b' })).toEqual([
          { turn: 1, request: {}, answer: 'sample 1 of b' },
        ]);
        expect(await store.judgeTurns('r1', 'q1', 'rv1', { sample: 0, judge: 'panel-b' })).toEqual([]);
      });

      test('conversation turns: read back in turn order, first write wins, per rubric version', async () => {
        for (const turn of [3, 1, 1001, 2])
          await store.putJudgeTurn(
            'r1',
            'q1',
            'rv1',
            turn,
            { kind: 'scoring', messages: [{ role: 'user', content: `turn ${turn}` }] },
            `answer ${turn}`,
          );
        await store.putJudgeTurn('r1', 'q1', 'rv1', 2, { stale: true }, 'a stale attempt');
        await store.putJudgeTurn('r1', 'q1', 'rv2', 1, { other: 'version' }, 'v2');
        await store.putJudgeTurn('r1', 'q2', 'rv1', 1, {}, 'other query');
        const turns = await store.judgeTurns('r1', 'q1', 'rv1');
        expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 1001]);
        expect(turns[1]).toEqual({
          turn: 2,
          request: { kind: 'scoring', messages: [{ role: 'user', content: 'turn 2' }] },
          answer: 'answer 2',
        });
        expect(await store.judgeTurns('r1', 'q1', 'rv2')).toEqual([
          { turn: 1, request: { other: 'version' }, answer: 'v2' },
        ]);
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
      const row = (workflowId: string, snapshotId: string, createdAt: string) => ({
        schedule: 'weekly',
        workflowId,
        snapshotId,
        parentId: null,
        createdAt,
        runId: null,
      });
      await store.recordScheduleSnapshot(row('wf-1', 'snap-1', '2025-01-01T00:00:00.000Z'));
      await store.recordScheduleSnapshot({ ...row('wf-2', 'snap-2', '2025-01-08T00:00:00.000Z'), parentId: 'snap-1' });
      await store.recordScheduleSnapshot(row('wf-2', 'snap-other', '2025-02-01T00:00:00.000Z'));
      await store.recordScheduleSnapshot({ ...row('wf-9', 'snap-9', '2025-03-01T00:00:00.000Z'), schedule: 'daily' });
      await store.setScheduleRun('weekly', 'wf-2', 'run-2');
      expect(await store.scheduleSnapshots('weekly')).toEqual([
        {
          schedule: 'weekly',
          workflowId: 'wf-2',
          snapshotId: 'snap-2',
          parentId: 'snap-1',
          createdAt: '2025-01-08T00:00:00.000Z',
          runId: 'run-2',
        },
        {
          schedule: 'weekly',
          workflowId: 'wf-1',
          snapshotId: 'snap-1',
          parentId: null,
          createdAt: '2025-01-01T00:00:00.000Z',
          runId: null,
        },
      ]);
      expect(await store.scheduleSnapshots('none')).toEqual([]);
    });

    test('artefacts: bytes kept exactly, readable from another connection, first write per run and name wins', async () => {
      const other = await another();
      const shot = { runId: 'r1', name: 'Ace-q1.png', contentType: 'image/png', bytes: PNG_BYTES };
      const [id, sameId] = await Promise.all([
        store.putArtefact(shot),
        other.putArtefact({ ...shot, bytes: Buffer.from('a retried attempt') }),
      ]);
      expect(id).toBe(artefactIdOf('r1', 'Ace-q1.png'));
      expect(sameId).toBe(id);
      const stored = (await other.getArtefact(id))!;
      expect(stored).toMatchObject({
        artefactId: id,
        runId: 'r1',
        name: 'Ace-q1.png',
        contentType: 'image/png',
        size: stored.bytes.length,
      });
      expect([PNG_BYTES, Buffer.from('a retried attempt')].some((b) => b.equals(stored.bytes))).toBe(true);
      await other.putArtefact({
        runId: 'r1',
        name: 'Ace-q0.txt',
        contentType: 'text/plain',
        bytes: Buffer.from('log'),
      });
      await other.putArtefact({
        runId: 'r2',
        name: 'Ace-q1.png',
        contentType: 'image/png',
        bytes: Buffer.from('other run'),
      });
      expect((await store.artefacts('r1')).map((a) => [a.name, a.contentType, a.size])).toEqual([
        ['Ace-q0.txt', 'text/plain', 3],
        ['Ace-q1.png', 'image/png', stored.bytes.length],
      ]);
      expect((await store.getArtefact(artefactIdOf('r2', 'Ace-q1.png')))!.bytes.toString()).toBe('other run');
      expect(await store.getArtefact('no-such-id')).toBeNull();
      expect(await store.artefacts('none')).toEqual([]);
    });

    test('grounding checks: the check and its claims together, first write wins, sources kept with the response, adopted with it', async () => {
      const other = await another();
      await store.putResponse(
        aResponse('r1', 'q1', 'Ace', {
          context: 'ctx',
          sources: [{ id: 's1', url: 'https://x.test', title: 'T', text: 'body' }],
        }),
      );
      expect((await other.getResponse('r1', 'q1', 'Ace'))!.sources).toEqual([
        { id: 's1', url: 'https://x.test', title: 'T', text: 'body' },
      ]);
      expect((await other.getResponse('r1', 'q1', 'Ace'))!.context).toBe('ctx');
      await store.putResponse(aResponse('r1', 'q2', 'Ace'));
      expect((await store.getResponse('r1', 'q2', 'Ace'))!.sources).toBeUndefined();
      expect(await store.adoptResponses('r1', 'r9')).toBe(2);
      expect((await store.getResponse('r9', 'q1', 'Ace'))!.sources).toEqual([
        { id: 's1', url: 'https://x.test', title: 'T', text: 'body' },
      ]);

      const check = aGroundingCheck('r1', 'q1', 'Ace');
      await Promise.all([
        store.putGroundingCheck(check),
        other.putGroundingCheck({ ...check, label: 'factual', claims: [check.claims[0]] }),
      ]);
      const stored = (await store.getGroundingCheck('r1', 'q1', 'Ace', 'gv1'))!;
      expect([check, { ...check, label: 'factual', claims: [check.claims[0]] }]).toContainEqual(stored);
      await other.putGroundingCheck(
        aGroundingCheck('r1', 'q1', 'Ace', {
          groundingVersion: 'gv2',
          status: 'no_context',
          label: null,
          claims: [{ ...check.claims[1], status: 'unchecked' }],
        }),
      );
      await other.putGroundingCheck(
        aGroundingCheck('r1', 'q0', 'Bolt', { status: 'failed', label: null, claims: [], error: 'invalid answer' }),
      );
      await other.putGroundingCheck(aGroundingCheck('r1', 'q1', 'Ace', { judgeName: 'panel-b' }));
      expect(
        (await store.groundingChecks('r1')).map((g) => [
          g.queryId,
          g.copilot,
          g.groundingVersion,
          g.judgeName,
          g.status,
          g.claims.length,
        ]),
      ).toEqual([
        ['q0', 'Bolt', 'gv1', '', 'failed', 0],
        ['q1', 'Ace', 'gv1', '', 'ok', stored.claims.length],
        ['q1', 'Ace', 'gv1', 'panel-b', 'ok', 2],
        ['q1', 'Ace', 'gv2', '', 'no_context', 1],
      ]);
      expect((await store.groundingChecks('r1', 'gv2')).map((g) => g.claims)).toEqual([
        [{ ...check.claims[1], status: 'unchecked' }],
      ]);
      expect(await store.getGroundingCheck('r1', 'q1', 'Ace', 'gv1', 'none')).toBeNull();
      expect(await store.groundingChecks('none')).toEqual([]);
    });

    test("two connections writing interleaved: every row once, the first writer wins, each sees the other's writes", async () => {
      const other = await another();
      await store.createRun(aRun('shared'));
      expect(await other.getRun('shared')).toMatchObject({ runId: 'shared', status: 'running' });
      const writes: Array<Promise<void>> = [];
      for (let q = 0; q < 40; q++) {
        const [a, b] = q % 2 ? [store, other] : [other, store];
        writes.push(
          a.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Ace', { text: `first ${q}` })),
        );
        writes.push(
          b.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Ace', { text: `second ${q}` })),
        );
        writes.push(b.putResponse(aResponse('shared', `q${String(q).padStart(2, '0')}`, 'Bolt')));
        writes.push(a.putJudgeTurn('shared', `q${q}`, 'rv1', 1, { by: 'a' }, 'a'));
        writes.push(b.putJudgeTurn('shared', `q${q}`, 'rv1', 1, { by: 'b' }, 'b'));
      }
      await Promise.all(writes);
      for (const s of [store, other]) {
        const rows = await s.responses('shared');
        expect(rows).toHaveLength(80);
        const ace = rows.filter((r) => r.copilot === 'Ace');
        expect(
          ace.every(
            (r) =>
              r.text === `first ${Number(r.queryId.slice(1))}` || r.text === `second ${Number(r.queryId.slice(1))}`,
          ),
        ).toBe(true);
        expect(await s.judgeTurns('shared', 'q7', 'rv1')).toHaveLength(1);
      }
      // Both connections agree on which write won.
      expect(await other.responses('shared')).toEqual(await store.responses('shared'));
      await other.finishRun('shared', 'completed', '/r.json', { Ace: 1 }, '2025-01-02T00:00:00.000Z');
      expect((await store.getRun('shared'))!.status).toBe('completed');
    });

    test('text is ordered by code point (as SQLite), whatever the database locale', async () => {
      for (const copilot of ['ace', 'Bolt', 'b', 'Zed', '_x']) await store.putResponse(aResponse('r1', 'q1', copilot));
      for (const q of ['q-b', 'Q-a', 'q_a']) await store.putJudgment(aJudgment('r1', q, 'Ace'));
      expect((await store.responses('r1')).map((r) => r.copilot)).toEqual(['Bolt', 'Zed', '_x', 'ace', 'b']);
      expect((await store.judgments('r1')).map((j) => j.queryId)).toEqual(['Q-a', 'q-b', 'q_a']);
      await store.createRun(aRun('run-a', { startedAt: '2025-01-01T00:00:00.000Z' }));
      await store.createRun(aRun('RUN-b', { startedAt: '2025-01-01T00:00:00.000Z' }));
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['run-a', 'RUN-b']);
    });

    test('LLM calls: every call kept (a retry really was sent), per run, in time order, every field', async () => {
      const late = aCall('r1', '2025-01-01T00:00:09.000Z', {
        queryId: null,
        model: null,
        role: 'copilot',
        name: 'Ace',
      });
      const failed = aCall('r1', '2025-01-01T00:00:01.000Z', {
        ok: false,
        errorKind: 'rate_limit',
        promptTokens: null,
        completionTokens: null,
        cachedTokens: null,
        latencyMs: 0.5,
      });
      await store.putLlmCall(late);
      await store.putLlmCall(failed);
      await store.putLlmCall(failed);
      await store.putLlmCall(aCall('r2', '2025-01-01T00:00:00.000Z'));
      // A call's request and reply sizes (migration 7) come back; absent ones stay absent.
      const sized = aCall('r3', '2025-01-01T00:00:00.000Z', {
        promptTokens: null,
        completionTokens: null,
        cachedTokens: null,
        requestChars: 1234,
        replyChars: 0,
      });
      await store.putLlmCall(sized);
      expect(await store.llmCalls('r3')).toEqual([sized]);
      // An answer reused from the store (migration 10) keeps its mark; a call sent has none.
      const reused = aCall('r4', '2025-01-01T00:00:00.000Z', {
        promptTokens: null,
        completionTokens: null,
        cachedTokens: null,
        latencyMs: 0,
        requestChars: 900,
        replyChars: 80,
        reused: true,
      });
      await store.putLlmCall(reused);
      await store.putLlmCall(aCall('r4', '2025-01-01T00:00:01.000Z'));
      expect((await store.llmCalls('r4')).map((c) => c.reused ?? false)).toEqual([true, false]);
      expect((await store.llmCalls('r4'))[0]).toEqual(reused);
      expect(await store.llmCalls('r1')).toEqual([failed, failed, late]);
      expect(await store.llmCalls('r2')).toHaveLength(1);
      expect(await store.llmCalls('none')).toEqual([]);
    });

    test('LLM calls after a cursor: in the order recorded (not by time), each once, paged, per run', async () => {
      expect(await store.llmCallsAfter('r1', 0)).toEqual({ calls: [], cursor: 0 });
      const late = aCall('r1', '2025-01-01T00:00:09.000Z', { name: 'late' });
      const early = aCall('r1', '2025-01-01T00:00:01.000Z', { name: 'early' });
      await store.putLlmCall(late);
      await store.putLlmCall(aCall('r2', '2025-01-01T00:00:00.000Z'));
      await store.putLlmCall(early);
      const first = await store.llmCallsAfter('r1', 0, 1);
      expect(first.calls).toEqual([late]);
      const rest = await store.llmCallsAfter('r1', first.cursor);
      expect(rest.calls).toEqual([early]);
      expect(await store.llmCallsAfter('r1', rest.cursor)).toEqual({ calls: [], cursor: rest.cursor });
      // A call recorded after, with an earlier time than both, is still after the cursor.
      const earliest = aCall('r1', '2024-12-31T00:00:00.000Z', { name: 'earliest' });
      await store.putLlmCall(earliest);
      expect((await store.llmCallsAfter('r1', rest.cursor)).calls).toEqual([earliest]);
      // Calls recorded while looks run (concurrent inserts on PostgreSQL): the looks together see each exactly once.
      const seen: string[] = [];
      let cursor = (await store.llmCallsAfter('r3', 0)).cursor;
      const look = async () => {
        const page = await store.llmCallsAfter('r3', cursor);
        cursor = page.cursor;
        seen.push(...page.calls.map((c) => c.queryId!));
      };
      const ids = Array.from({ length: 60 }, (_, i) => `q${i}`);
      let looking = true;
      const looks = (async () => {
        while (looking) await look();
      })();
      await Promise.all(ids.map((q) => store.putLlmCall(aCall('r3', '2025-01-01T00:00:00.000Z', { queryId: q }))));
      looking = false;
      await looks;
      await look();
      expect([...seen].sort()).toEqual([...ids].sort());
    });

    test('judge batches: first record wins, lines settle once with their call, the batch flag of a call is kept', async () => {
      const batch = {
        runId: 'r1',
        key: 'judge/1',
        batchId: null,
        api: 'openai' as const,
        endpoint: { baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'JUDGE_KEY', timeoutMs: 1000, model: 'judge-model' },
        state: 'preparing',
        counts: { total: 2, succeeded: 0, failed: 0, pending: 2 },
        lines: 2,
        createdAt: '2025-01-01T00:00:00.000Z',
      };
      const line = (customId: string) => ({ customId, queryId: 'q1', callName: 'judge-model' });
      await store.putJudgeBatch(batch, [line('j0_a'), line('j1_b')]);
      await store.putJudgeBatch({ ...batch, api: 'anthropic', lines: 9 }, [line('j9_z')]);
      expect(await store.judgeBatches('r1')).toEqual([batch]);
      expect(await store.batchLine('r1', 'j9_z')).toBeNull();
      expect(await store.batchLine('r1', 'j0_a')).toEqual({
        ...line('j0_a'),
        batchKey: 'judge/1',
        status: 'submitted',
        body: null,
        error: null,
      });
      await store.updateJudgeBatch('r1', 'judge/1', {
        batchId: 'batch_1',
        state: 'completed',
        counts: { total: 2, succeeded: 1, failed: 1, pending: 0 },
      });
      expect((await store.judgeBatches('r1'))[0]).toMatchObject({
        batchId: 'batch_1',
        state: 'completed',
        counts: { succeeded: 1, failed: 1 },
      });
      const call = { ...aCall('r1', '2025-01-01T00:00:05.000Z'), batch: true };
      const results = [
        {
          customId: 'j0_a',
          status: 'ok' as const,
          body: { choices: [{ message: { content: '{"x":1}' } }] },
          error: null,
          call,
        },
        { customId: 'j1_b', status: 'expired' as const, body: null, error: 'the batch expired first', call: null },
      ];
      expect(await store.settleBatchLines('r1', results)).toBe(2);
      expect(await store.settleBatchLines('r1', results)).toBe(0); // an ingest retried: nothing settled or counted twice
      expect(await store.batchLine('r1', 'j0_a')).toEqual({
        ...line('j0_a'),
        batchKey: 'judge/1',
        status: 'ok',
        body: results[0].body,
        error: null,
      });
      expect((await store.batchLines('r1', 'judge/1')).map((l) => [l.customId, l.status])).toEqual([
        ['j0_a', 'ok'],
        ['j1_b', 'expired'],
      ]);
      expect((await store.batchLine('r1', 'j1_b'))!.status).toBe('expired');
      expect(await store.llmCalls('r1')).toEqual([call]);
      expect(await store.batchLine('r2', 'j0_a')).toBeNull();
      // A later batch carrying a line still waiting takes it over; a settled line stays where it was.
      await store.putJudgeBatch({ ...batch, runId: 'r3', key: 'a' }, [line('w'), line('s')]);
      await store.settleBatchLines('r3', [{ customId: 's', status: 'ok', body: {}, error: null, call: null }]);
      await store.putJudgeBatch({ ...batch, runId: 'r3', key: 'b' }, [line('w'), line('s')]);
      expect((await store.batchLines('r3', 'b')).map((l) => l.customId)).toEqual(['w']);
      expect((await store.batchLines('r3', 'a')).map((l) => [l.customId, l.status])).toEqual([['s', 'ok']]);
    });

    describe('studies', () => {
      test('a study, its items and assignments, annotators dealt their queues', async () => {
        await makeStudy(store);
        expect(await store.studies.getStudy('pilot')).toEqual(aStudy('pilot'));
        expect(await store.studies.getStudy('nope')).toBeNull();
        await store.studies.createStudy(aStudy('later', { createdAt: '2025-03-01T00:00:00.000Z' }), [], []);
        expect((await store.studies.listStudies()).map((s) => s.name)).toEqual(['later', 'pilot']);
        expect((await store.studies.studyItems('pilot')).map((i) => i.itemId)).toEqual(['pilot-i1', 'pilot-i2']);
        expect(
          (await store.studies.studyAssignments('pilot')).map((a) => [a.assignmentId, a.annotatorId, a.order]),
        ).toEqual([
          ['pilot-a1', 'pilot-ann-1', 0],
          ['pilot-a2', 'pilot-ann-2', 0],
          ['pilot-a3', 'pilot-ann-1', 1],
          ['pilot-a4', 'pilot-ann-2', 1],
        ]);
        expect(await store.studies.annotators('pilot')).toEqual([
          { annotatorId: 'pilot-ann-1', study: 'pilot', label: 'alice', source: 'app' },
          { annotatorId: 'pilot-ann-2', study: 'pilot', label: 'bob', source: 'app' },
        ]);
        expect(await store.studies.annotatorByTokenHash('th-pilot-2')).toMatchObject({ annotatorId: 'pilot-ann-2' });
        expect(await store.studies.annotatorByTokenHash('th-none')).toBeNull();
        expect(await store.studies.getAssignment('pilot-a3')).toEqual({
          assignmentId: 'pilot-a3',
          study: 'pilot',
          itemId: 'pilot-i2',
          slot: 2,
          left: 'Ace',
          right: 'Bolt',
          annotatorId: 'pilot-ann-1',
          order: 1,
        });
        expect((await store.studies.annotatorQueue('pilot-ann-1')).map((a) => [a.assignmentId, a.answer])).toEqual([
          ['pilot-a1', null],
          ['pilot-a3', null],
        ]);
      });

      test('submissions: stored once per id, recorded idempotently, the last received counts, rejected ones never do', async () => {
        await makeStudy(store);
        const first = await store.studies.putSubmission(
          submission('pilot', 'sub-1', 'pilot-a1', 'pilot-ann-1', answer('A'), '2025-02-02T00:00:00.000Z'),
        );
        expect(first).toMatchObject({ submissionId: 'sub-1', status: 'pending', note: null, answer: answer('A') });
        expect(
          await store.studies.putSubmission(
            submission('pilot', 'sub-1', 'pilot-a1', 'pilot-ann-1', answer('B'), '2025-02-02T00:09:00.000Z'),
          ),
        ).toEqual(first);
        await store.studies.putSubmission(
          submission('pilot', 'sub-2', 'pilot-a1', 'pilot-ann-1', answer('B'), '2025-02-02T00:01:00.000Z'),
        );
        await store.studies.putSubmission(
          submission('pilot', 'sub-bad', 'pilot-a3', 'pilot-ann-1', answer('tie'), '2025-02-02T00:02:00.000Z'),
        );
        expect((await store.studies.pendingSubmissions(10)).map((s) => s.submissionId)).toEqual([
          'sub-1',
          'sub-2',
          'sub-bad',
        ]);
        expect((await store.studies.pendingSubmissions(1)).map((s) => s.submissionId)).toEqual(['sub-1']);
        expect((await store.studies.annotatorQueue('pilot-ann-1')).map((a) => a.answer?.choice ?? null)).toEqual([
          'B',
          'tie',
        ]);
        // Recorded out of order: the later submission still wins.
        expect(await store.studies.recordSubmission('sub-2')).toEqual({ recorded: true, revision: 1 });
        expect(await store.studies.recordSubmission('sub-1')).toEqual({ recorded: true, revision: 1 });
        expect(await store.studies.recordSubmission('sub-2')).toEqual({ recorded: true, revision: 2 });
        expect(await store.studies.recordSubmission('sub-none')).toBeNull();
        await store.studies.rejectSubmission('sub-bad', 'not an annotator of this item');
        expect(await store.studies.recordSubmission('sub-bad')).toEqual({ recorded: false, revision: 0 });
        expect(await store.studies.getSubmission('sub-bad')).toMatchObject({
          status: 'rejected',
          note: 'not an annotator of this item',
        });
        const annotations = await store.studies.annotations('pilot');
        expect(annotations.map((a) => [a.assignmentId, a.answer.choice, a.revision, a.submittedAt, a.source])).toEqual([
          ['pilot-a1', 'B', 2, '2025-02-02T00:01:00.000Z', 'app'],
        ]);
        expect((await store.studies.submissions('pilot')).map((s) => [s.submissionId, s.status])).toEqual([
          ['sub-1', 'recorded'],
          ['sub-2', 'recorded'],
          ['sub-bad', 'rejected'],
        ]);
      });

      test('closing records what is pending, then refuses answers; imported annotations and events', async () => {
        await makeStudy(store);
        await store.studies.putSubmission(
          submission('pilot', 'sub-1', 'pilot-a2', 'pilot-ann-2', answer('A'), '2025-02-02T00:00:00.000Z'),
        );
        expect(await store.studies.closeStudy('pilot', '2025-02-05T00:00:00.000Z')).toEqual({ recorded: 1 });
        expect(await store.studies.closeStudy('pilot', '2025-02-06T00:00:00.000Z')).toEqual({ recorded: 0 });
        expect(await store.studies.getStudy('pilot')).toMatchObject({
          status: 'closed',
          closedAt: '2025-02-05T00:00:00.000Z',
        });
        expect(
          await store.studies.putSubmission(
            submission('pilot', 'sub-2', 'pilot-a4', 'pilot-ann-2', answer('B'), '2025-02-07T00:00:00.000Z'),
          ),
        ).toBeNull();
        expect(await store.studies.getSubmission('sub-2')).toBeNull();
        expect(
          await store.studies.importAnnotations('pilot', [
            {
              annotator: 'carol',
              itemId: 'pilot-i1',
              left: 'Bolt',
              right: 'Ace',
              answer: answer('B'),
              submittedAt: '2025-01-01T00:00:00.000Z',
            },
            {
              annotator: 'carol',
              itemId: 'pilot-i2',
              left: 'Ace',
              right: 'Bolt',
              answer: answer('tie', null),
              submittedAt: '2025-01-01T00:00:00.000Z',
            },
          ]),
        ).toBe(2);
        const annotations = await store.studies.annotations('pilot');
        expect(annotations.map((a) => [a.annotatorId, a.left, a.answer.choice, a.source])).toEqual([
          ['import:pilot:carol', 'Bolt', 'B', 'import'],
          ['import:pilot:carol', 'Ace', 'tie', 'import'],
          ['pilot-ann-2', 'Bolt', 'A', 'app'],
        ]);
        expect((await store.studies.annotators('pilot')).map((a) => [a.label, a.source])).toContainEqual([
          'carol',
          'import',
        ]);
        await store.studies.addStudyEvent('pilot', 'reminder', { pending: ['bob'] });
        await store.studies.addStudyEvent('pilot', 'closed', { by: 'deadline' });
        expect((await store.studies.studyEvents('pilot')).map((e) => [e.kind, e.detail])).toEqual([
          ['reminder', { pending: ['bob'] }],
          ['closed', { by: 'deadline' }],
        ]);
      });

      test('an answer racing the close from another connection is either recorded by the close or refused', async () => {
        const other = await another();
        await makeStudy(store);
        const puts = Array.from({ length: 12 }, (_, i) =>
          other.studies.putSubmission(
            submission(
              'pilot',
              `race-${i}`,
              `pilot-a${(i % 4) + 1}`,
              'pilot-ann-1',
              answer('A'),
              `2025-02-02T00:00:${String(i).padStart(2, '0')}.000Z`,
            ),
          ),
        );
        const [closed, ...stored] = await Promise.all([
          store.studies.closeStudy('pilot', '2025-02-05T00:00:00.000Z'),
          ...puts,
        ]);
        const accepted = stored.filter(Boolean).length;
        const all = await store.studies.submissions('pilot');
        expect(all).toHaveLength(accepted);
        expect(all.every((s) => s.status === 'recorded')).toBe(true); // nothing stored and left pending after the close
        expect(closed.recorded).toBe(accepted);
      });
    });

    describe('agent trajectories and world recordings', () => {
      const modelStep = (seq: number, text: string | null) => ({
        kind: 'model' as const,
        seq,
        turn: 1,
        text,
        toolCalls: [{ id: 'c1', name: 'get_price', arguments: { symbol: 'BTC' } }],
        usage: { promptTokens: 10, completionTokens: 5, cachedTokens: null },
        latencyMs: 12,
        startedAt: 't0',
        finishedAt: 't1',
      });
      test('steps are kept per item in seq order, and the first write of a seq wins', async () => {
        await store.putAgentStep({
          runId: 'r1',
          queryId: 'q1',
          copilot: 'Ace',
          step: {
            kind: 'tool',
            seq: 1,
            turn: 1,
            callId: 'c1',
            tool: 'get_price',
            arguments: { symbol: 'BTC' },
            result: '{"price":1}',
            isError: false,
            origin: 'live',
            latencyMs: 3,
            startedAt: 't1',
            finishedAt: 't2',
          },
        });
        await store.putAgentStep({ runId: 'r1', queryId: 'q1', copilot: 'Ace', step: modelStep(0, 'first') });
        await store.putAgentStep({ runId: 'r1', queryId: 'q1', copilot: 'Ace', step: modelStep(0, 'second write') });
        await store.putAgentStep({ runId: 'r1', queryId: 'q1', copilot: 'Bolt', step: modelStep(0, 'other copilot') });
        const steps = await (await another()).agentSteps('r1', 'q1', 'Ace');
        expect(steps.map((s) => [s.step.seq, s.step.kind])).toEqual([
          [0, 'model'],
          [1, 'tool'],
        ]);
        expect(steps[0].step).toEqual(modelStep(0, 'first'));
        expect(await store.agentSteps('r1', 'q2', 'Ace')).toEqual([]);
        expect((await store.runAgentSteps('r1')).map((s) => `${s.copilot}/${s.step.seq}`)).toEqual([
          'Ace/0',
          'Ace/1',
          'Bolt/0',
        ]);
      });
      test("adoptResponses brings an agent answer's steps along, once, leaving the target's own steps as they are", async () => {
        await store.putResponse(aResponse('src', 'q1', 'Ace'));
        await store.putAgentStep({ runId: 'src', queryId: 'q1', copilot: 'Ace', step: modelStep(0, 'turn one') });
        await store.putAgentStep({ runId: 'src', queryId: 'q1', copilot: 'Ace', step: modelStep(1, null) });
        await store.putAgentStep({ runId: 'dst', queryId: 'q1', copilot: 'Ace', step: modelStep(1, 'own') });
        expect(await store.adoptResponses('src', 'dst')).toBe(1);
        expect(await store.adoptResponses('src', 'dst')).toBe(0);
        expect((await store.agentSteps('dst', 'q1', 'Ace')).map((s) => s.step)).toEqual([
          modelStep(0, 'turn one'),
          modelStep(1, 'own'),
        ]);
        expect(await store.runAgentSteps('src')).toHaveLength(2);
      });
      test("reopenItems (retry --failed) removes a reopened answer's steps, so it is asked afresh; other items keep theirs", async () => {
        for (const [queryId, copilot] of [
          ['q1', 'Ace'],
          ['q1', 'Bolt'],
          ['q2', 'Ace'],
        ]) {
          await store.putResponse(
            aResponse('r1', queryId, copilot, { status: 'failed', text: null, errorKind: 'tool' }),
          );
          await store.putAgentStep({ runId: 'r1', queryId, copilot, step: modelStep(0, 'turn one') });
        }
        await store.reopenItems('r1', { responses: [{ queryId: 'q1', copilot: 'Ace' }], judgments: [], turns: [] });
        expect(await store.agentSteps('r1', 'q1', 'Ace')).toEqual([]);
        expect((await store.runAgentSteps('r1')).map((s) => `${s.queryId}/${s.copilot}`)).toEqual([
          'q1/Bolt',
          'q2/Ace',
        ]);
      });
      test('a recording keeps each key once (first write wins), and recordings are listed with their sizes', async () => {
        const call = (key: string, result: string, isError = false) => ({
          key,
          tool: 'get_price',
          arguments: `{"symbol":"${key}"}`,
          result,
          isError,
          recordedAt: `2025-01-01T00:00:0${key.length}.000Z`,
        });
        await store.putWorldCalls('run-a', [call('BTC', '1'), call('ETH', '2', true)]);
        await store.putWorldCalls('run-a', [call('BTC', 'changed')]);
        await store.putWorldCalls('run-b', [call('SOL', '3')]);
        expect(await (await another()).worldCalls('run-a')).toEqual([call('BTC', '1'), call('ETH', '2', true)]);
        expect(await store.worldCalls('none')).toEqual([]);
        expect(await store.worldCalls('run-a', 'ETH')).toEqual([call('ETH', '2', true)]);
        expect(await store.worldCalls('run-a', 'SOL')).toEqual([]);
        expect((await store.worldRecordings()).map((r) => [r.recording, r.calls])).toEqual([
          ['run-a', 2],
          ['run-b', 1],
        ]);
      });
    });

    describe('several connections at once', () => {
      test('the same keys written concurrently from two connections: one row each', async () => {
        const other = await another();
        const both = <T>(fn: (s: ResultsStore, who: string) => Promise<T>) =>
          Promise.all([fn(store, 'a'), fn(other, 'b')]);
        await both((s, who) => s.createRun(aRun('race', { protocol: who })));
        await both((s, who) => s.putJudgeUnits('race', [{ queryId: 'q1', copilots: [who] }], { by: who }));
        await both((s, who) =>
          s.putJudgments([
            aJudgment('race', 'q1', 'Ace', { error: who }),
            aJudgment('race', 'q1', 'Bolt', { error: who }),
          ]),
        );
        await both((s, who) =>
          s.putSnapshot(
            { snapshotId: 'snap-race', createdAt: '2025-01-01T00:00:00.000Z', parentId: null, meta: { by: who } },
            queries,
          ),
        );
        await both((s, who) => s.putRubric('rv-race', who, {}));
        await both((s, who) => s.cacheAnswer('race-key', who));
        await both((s, who) => s.putWork('job', 'k', who));
        expect(await store.listRuns()).toHaveLength(1);
        expect(await other.judgeUnits('race')).toHaveLength(1);
        expect(await store.judgments('race')).toHaveLength(2);
        expect(await store.snapshotQueries('snap-race')).toEqual(queries);
        expect((await store.getRun('race'))!.protocol).toBe((await other.getRun('race'))!.protocol);
        expect(await store.cachedAnswer('race-key')).toBe(await other.cachedAnswer('race-key'));
      });

      test('send slots: late calls claimed at once from two connections get distinct slots one spacing apart', async () => {
        const other = await another();
        const late = 1_700_000_000_000; // every call picked up late: its earliest time is the same moment
        const claims = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).claimSendSlot('paced', 'judge', late, 25)),
        );
        expect([...claims].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => late + 25 * i));
        // A call due after the next free slot keeps its own time; the next one is spaced from it.
        expect(await other.claimSendSlot('paced', 'judge', late + 10_000, 25)).toBe(late + 10_000);
        expect(await store.claimSendSlot('paced', 'judge', late + 10_001, 25)).toBe(late + 10_025);
        // Each run and endpoint has its own slot; a fractional spacing is kept exactly enough to space calls.
        expect(await store.claimSendSlot('paced', 'copilot:Ace', late, 23.75)).toBe(late);
        expect(await other.claimSendSlot('paced', 'copilot:Ace', late, 23.75)).toBeCloseTo(late + 23.75, 3);
        expect(await other.claimSendSlot('other-run', 'judge', late, 25)).toBe(late);
      });

      test('run priorities: the highest priority of the runs noted lately, from any connection', async () => {
        const other = await another();
        const t = 1_700_000_000_000;
        expect(await store.notePriority('sweep', 5, t, 1_000)).toBe(5); // alone
        expect(await other.notePriority('gate', 1, t + 100, 1_000)).toBe(1);
        expect(await store.notePriority('sweep', 5, t + 200, 1_000)).toBe(1); // the gate run, noted by another worker
        expect(await store.notePriority('other', 3, t + 300, 1_000)).toBe(1);
        // Once the gate run has not been noted for longer than the window, the next highest counts.
        expect(await store.notePriority('sweep', 5, t + 1_200, 1_000)).toBe(3);
        expect(await other.notePriority('sweep', 5, t + 5_000, 1_000)).toBe(5);
        // A run noted again at another priority (resumed with --priority) counts at its new one.
        expect(await other.notePriority('other', 4, t + 5_100, 1_000)).toBe(4);
      });

      test('store id: two connections asking first at the same time agree', async () => {
        const other = await another();
        const [a, b] = await Promise.all([store.storeId(), other.storeId()]);
        expect(a).toBe(b);
      });
    });

    describe('copying (exportRecords / importRecords)', () => {
      test('everything is carried over intact, and a second copy adds nothing', async () => {
        await fillEverything(store);
        const target = await makeStore();
        const copy = await target.open();
        try {
          const counts = await copyAll(store, copy);
          expect(counts).toEqual({
            snapshot: 1,
            rubric: 1,
            run: 2,
            response: 6,
            judgeUnits: 3,
            judgment: 4,
            judgeTurn: 3,
            llmCalls: 3,
            cachedAnswer: 1,
            work: 1,
            scheduleSnapshot: 2,
            artefact: 1,
            study: 1,
            groundingCheck: 1,
            agentStep: 2,
            worldCall: 1,
          });
          expect(await everything(copy)).toEqual(await everything(store));
          expect(Object.values(await copyAll(store, copy)).every((n) => n === 0)).toBe(true);
          expect(await everything(copy)).toEqual(await everything(store));
          // The copy is a store of its own: it keeps its own identity (the default task queue is derived from it).
          expect(await copy.storeId()).not.toBe(await store.storeId());
        } finally {
          await copy.close();
          await target.dispose?.();
        }
      });
    });

    test('migrate says the schema is current and applies nothing more', async () => {
      const report = await store.migrate();
      expect(report.version).toBeGreaterThanOrEqual(1);
      expect((await store.migrate()).version).toBe(report.version);
      expect((await (await another()).migrate()).applied).toEqual([]);
    });
  });
}
