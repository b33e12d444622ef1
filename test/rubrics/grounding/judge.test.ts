import path from 'node:path';
import { contentHash } from '../../../core/model/hashing';
import type { ResultsStore } from '../../../core/model/store';
import {
  groundingRubricFromContent,
  judgeGroundingResponse,
  loadGroundingRubric,
  type GroundingJudgeContext,
} from '../../../rubrics/grounding';
import { groundedReply } from '../../../sim/groundedCopilot';
import { startSimServer, type SimServer } from '../../../sim/server';
import { SqliteStore } from '../../../stores/sqlite';
import { tempDir } from '../../support/harness';
import { copyRubric, editOnce } from '../../support/rubricCopy';

const COPILOT = 'SecretCopilotName';
const QUERY = { id: 'q1', text: 'What is happening with DeFi TVL?' };
const reply = groundedReply(QUERY.text, { claims: 4, derivable: 1, fabricated: 1, contradicted: 1 });

let judge: SimServer;
let store: ResultsStore;
beforeAll(async () => {
  judge = await startSimServer({});
});
afterAll(() => judge.close());
beforeEach(async () => {
  store = new SqliteStore(path.join(tempDir(), 'results.db'));
  await store.putSnapshot({ snapshotId: 's', createdAt: 'now', parentId: null, meta: {} }, [QUERY]);
  const base = {
    runId: 'r',
    queryId: 'q1',
    status: 'ok' as const,
    raw: null,
    html: null,
    adapter: 'http',
    startedAt: null,
    finishedAt: null,
    latencyMs: null,
    errorKind: null,
    errorMessage: null,
    conversationId: null,
  };
  await store.putResponse({
    ...base,
    copilot: COPILOT,
    text: reply.answer,
    context: reply.context.join('\n'),
    sources: reply.sources,
  });
  await store.putResponse({ ...base, copilot: 'Bare', text: reply.answer, context: null });
});
afterEach(() => store.close());

const ctx = (over: Partial<GroundingJudgeContext> = {}): GroundingJudgeContext => ({
  store,
  runId: 'r',
  snapshotId: 's',
  rubric: loadGroundingRubric(),
  checks: ['hallucination', 'citations'],
  judge: {
    baseURL: judge.url,
    model: 'judge',
    temperature: 0,
    timeoutMs: 10_000,
    responseFormat: 'json_schema',
    maxTokensParam: 'max_tokens',
    seed: 1,
  },
  judgeName: '',
  env: {},
  ...over,
});

test('the shipped rubric loads; its version is the hash of its data and prompts, and changes with a word of a prompt', () => {
  const rubric = loadGroundingRubric();
  expect(rubric.version).toBe(contentHash(rubric.content));
  expect(groundingRubricFromContent(JSON.parse(JSON.stringify(rubric.content))).version).toBe(rubric.version);
  const dir = copyRubric('grounding');
  expect(loadGroundingRubric(dir).version).toBe(rubric.version);
  editOnce(
    path.join(dir, 'hallucination-system.md'),
    'never against your own knowledge',
    'never ever against your own knowledge',
  );
  expect(loadGroundingRubric(dir).version).not.toBe(rubric.version);
  editOnce(path.join(dir, 'citations-user.md'), '{{claims}}', '{{claim_list}}');
  expect(() => loadGroundingRubric(dir)).toThrow(
    /citations-user|prompts\.citations\.user.*unknown placeholder \{\{claim_list\}\}/,
  );
});

test('one response checked blind: claims with statuses and excerpts, citations, label; the prompts carry its context and no copilot name', async () => {
  const before = judge.requests.length;
  expect(await judgeGroundingResponse('q1', COPILOT, ctx())).toBe('ok');
  const requests = judge.requests.slice(before);
  expect(requests.map((r) => r.body.response_format.json_schema.name)).toEqual([
    'grounding_hallucination',
    'grounding_citations',
  ]);
  for (const r of requests) expect(JSON.stringify(r.body)).not.toContain(COPILOT);
  expect(JSON.stringify(requests[0].body.messages)).toContain(JSON.stringify(reply.context.join('\n')).slice(1, -1));
  const check = (await store.getGroundingCheck('r', 'q1', COPILOT, ctx().rubric.version))!;
  expect(check.claims.map((c) => c.status)).toEqual(['derivable', 'exact', 'fabricated', 'contradicted']);
  expect(check.claims.map((c) => c.citation?.verdict)).toEqual(['derivable', 'direct', 'missing', 'incorrect']);
  expect(check.claims[1].excerpt).toBe(reply.context[1]);
  expect(check.label).toBe('partial');
  // Already stored: nothing is asked again.
  expect(await judgeGroundingResponse('q1', COPILOT, ctx())).toBe('ok');
  expect(judge.requests.length).toBe(before + 2);
});

test('a check retried after its first call finished asks only the second', async () => {
  const before = judge.requests.length;
  // The worker dies as the first answer arrives, before it is stored.
  const dying = ctx({
    recordCall: async (usage) => {
      if (usage.ok) throw new Error('worker died after the first call');
    },
  });
  await expect(judgeGroundingResponse('q1', COPILOT, dying)).rejects.toThrow('worker died');
  // The call's answer was not yet stored as a turn, so it is asked again; once a turn is stored, it is not.
  expect(await judgeGroundingResponse('q1', COPILOT, ctx())).toBe('ok');
  const names = judge.requests.slice(before).map((r) => r.body.response_format.json_schema.name);
  expect(names).toEqual(['grounding_hallucination', 'grounding_hallucination', 'grounding_citations']);
  await store.putResponse({ ...(await store.getResponse('r', 'q1', COPILOT))!, runId: 'r2' });
  const turn = (
    await store.judgeTurns('r', 'q1', `grounding:${ctx().rubric.version}:${COPILOT}`, { sample: 0, judge: '' })
  )[0];
  await store.putJudgeTurn('r2', 'q1', `grounding:${ctx().rubric.version}:${COPILOT}`, 1, turn.request, turn.answer);
  const mark = judge.requests.length;
  expect(await judgeGroundingResponse('q1', COPILOT, ctx({ runId: 'r2' }))).toBe('ok');
  expect(judge.requests.slice(mark).map((r) => r.body.response_format.json_schema.name)).toEqual([
    'grounding_citations',
  ]);
});

test('no context: the claims are only listed (unchecked), the check is "no context"; an answer that stays invalid is a failed check', async () => {
  expect(await judgeGroundingResponse('q1', 'Bare', ctx())).toBe('no_context');
  const check = (await store.getGroundingCheck('r', 'q1', 'Bare', ctx().rubric.version))!;
  expect(check.claims.map((c) => c.status)).toEqual(['unchecked', 'unchecked', 'unchecked', 'unchecked']);
  expect(check.claims[0]).toMatchObject({
    entity: expect.any(String),
    metric: expect.any(String),
    value: expect.any(Number),
  });
  expect(check.label).toBeNull();
  expect(
    await judgeGroundingResponse('q1', COPILOT, ctx({ judge: { ...ctx().judge, model: 'fault-badjson:judge' } })),
  ).toBe('failed');
  expect((await store.getGroundingCheck('r', 'q1', COPILOT, ctx().rubric.version))!).toMatchObject({
    status: 'failed',
    claims: [],
    error: expect.stringMatching(/invalid judge answer after 3 attempts/),
  });
});

test('only the citation check: the claims are listed (not verified) and their citations checked', async () => {
  const before = judge.requests.length;
  expect(await judgeGroundingResponse('q1', COPILOT, ctx({ checks: ['citations'] }))).toBe('ok');
  expect(judge.requests.slice(before).map((r) => r.body.response_format.json_schema.name)).toEqual([
    'grounding_extraction',
    'grounding_citations',
  ]);
  const check = (await store.getGroundingCheck('r', 'q1', COPILOT, ctx().rubric.version))!;
  expect(check.claims.map((c) => [c.status, c.citation?.verdict])).toEqual([
    ['unchecked', 'derivable'],
    ['unchecked', 'direct'],
    ['unchecked', 'missing'],
    ['unchecked', 'incorrect'],
  ]);
  expect(check.label).toBeNull();
});
