import { simServersForFile } from '../../support/sims';
import { expectNoKeyLeak, expectScoresFromJudge, providerRun, QUERIES } from './run';

/**
 * A small LATTICE run per judge behaviour family, configured only with `provider:` (or nothing: openai-compatible for an
 * unknown host): every response judged, the scores equal the judge's answers, no key in any history.
 */
const sim = simServersForFile({ judge: {}, copilots: {} });
const copilots = () => [{ name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'sim-thorough' }];

test.each([
  ['gemini', { provider: 'gemini', model: 'sim-gemini' }],
  ['mistral', { provider: 'mistral', model: 'sim-mistral', maxTokens: 900, maxTokensParam: undefined }],
  ['deepseek', { provider: 'deepseek', model: 'sim-deepseek' }],
  ['noschema (unknown host)', { model: 'sim-noschema' }],
  ['think (vllm)', { provider: 'vllm', model: 'sim-think' }],
  ['think (unknown host)', { model: 'sim-think' }],
  ['refusal (openai)', { provider: 'openai', model: 'sim-refusal' }],
  ['openrouter 200 with an error', { provider: 'openrouter', model: 'sim-openrouter-200error' }],
  ['groq json_validate_failed', { provider: 'groq', model: 'sim-groq-jsonfail' }],
  // An unknown model refusing temperature and max_tokens (OpenAI's wording): both dropped once, then answered.
  ['an unknown reasoning model', { model: 'sim-reasoning-9', maxTokens: 900 }],
  // A known provider with a gateway in front that refuses seed the Gemini way: learnt, then answered.
  ['gemini behind an unknown host', { model: 'sim-gemini' }],
])(
  "%s: every response judged, scores are the judge's answers",
  async (name, judge) => {
    const run = await providerRun(name.replace(/\W+/g, '-'), {
      judge: { baseURL: sim.judge.url, ...judge },
      copilots: copilots(),
    });
    expect(run.status).toBe('completed');
    expect(run.judgments.map((j) => [j.queryId, j.status, j.error])).toEqual(QUERIES.map((q) => [q.id, 'ok', null]));
    expectScoresFromJudge(run, sim.judge);
    expectNoKeyLeak(run, [sim.judge]);
  },
  120_000,
);

test('a refused parameter is recorded once in llm_calls, then left out', async () => {
  const before = sim.judge.requests.length;
  const run = await providerRun('dropped-note', {
    judge: { baseURL: sim.judge.url, model: 'sim-reasoning-7' },
    copilots: copilots(),
  });
  expect(run.llmCalls.filter((c) => c.errorKind?.startsWith('dropped:'))).toEqual([
    { role: 'judge', ok: false, errorKind: 'dropped:temperature' },
  ]);
  const bodies = sim.judge.requests
    .slice(before)
    .filter((r) => r.model === 'sim-reasoning-7')
    .map((r) => r.body);
  // Calls already in flight when the first refusal came back are refused too (then asked again); none after.
  const refused = bodies.filter((b) => 'temperature' in b).length;
  expect(run.llmCalls.filter((c) => !c.ok).length).toBe(refused);
  expect(bodies.length - refused).toBe(QUERIES.length);
  expect(run.judgments.every((j) => j.status === 'ok')).toBe(true);
}, 120_000);

test('a refusal is re-asked with its reason and another seed, never byte-identically', async () => {
  const before = sim.judge.requests.length;
  await providerRun('refusal-reask', {
    judge: { baseURL: sim.judge.url, provider: 'openai', model: 'sim-refusal-2' },
    copilots: copilots(),
    queries: QUERIES.slice(0, 1),
  });
  const [first, second] = sim.judge.requests.slice(before).filter((r) => r.model === 'sim-refusal-2');
  expect(second.body.seed).not.toBe(first.body.seed);
  expect(JSON.stringify(second.body.messages)).toContain(
    "That answer was invalid: refused: I'm sorry, I cannot assist with that request.",
  );
}, 120_000);

test('a truncated judge answer is named as such, within seconds', async () => {
  const run = await providerRun('truncate', {
    judge: { baseURL: sim.judge.url, model: 'sim-truncate' },
    copilots: copilots(),
    queries: QUERIES.slice(0, 2),
  });
  expect(run.status).toBe('completed');
  for (const j of run.judgments) {
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/cut off at the token limit \(finish_reason "length"/);
  }
  expect(run.elapsedMs).toBeLessThan(30_000);
}, 120_000);

test('a FastAPI-style error reaches results.csv in its own words', async () => {
  const run = await providerRun('fastapi', {
    judge: { baseURL: sim.judge.url, model: 'sim-fastapi-error' },
    copilots: copilots(),
    queries: QUERIES.slice(0, 2),
  });
  expect(run.status).toBe('completed');
  const header = run.csv[0];
  const reasons = run.csv.slice(1).map((row) => row[header.indexOf('failure_reason')]);
  expect(reasons).toHaveLength(2);
  for (const reason of reasons)
    expect(reason).toContain('messages: prompt exceeds the 512-token limit of this deployment (value_error)');
  expect(run.elapsedMs).toBeLessThan(30_000);
}, 120_000);

test('an out-of-credit judge pauses the run at its first quota failure: asked at most a dozen times, the run says "quota" in the provider\'s words', async () => {
  const before = sim.judge.requests.length;
  const queries = [...QUERIES, { id: 't4-c4', text: 'Is staking ETH on Lido safe?', task: 'T4', category: 'C4' }];
  const run = await providerRun('quota-judge', {
    judge: { baseURL: sim.judge.url, model: 'sim-quota', maxAttempts: 8 },
    copilots: [...copilots(), { name: 'B', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' }],
    queries,
  });
  const asked = sim.judge.requests.slice(before).filter((r) => r.model === 'sim-quota').length;
  expect(asked).toBeGreaterThan(0);
  expect(asked).toBeLessThanOrEqual(12);
  expect(run.paused).toMatchObject({
    by: 'breaker',
    reason: expect.stringMatching(/^the judge out of quota or credit: .*You exceeded your current quota/),
  });
  expect(run.judgments.length).toBeGreaterThan(0);
  expect(run.judgments.length).toBeLessThanOrEqual(8);
  for (const j of run.judgments) {
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/quota.*You exceeded your current quota/);
  }
  expect(run.llmCalls.filter((c) => c.role === 'judge').map((c) => c.errorKind)).toEqual(Array(asked).fill('quota'));
  expect(run.elapsedMs).toBeLessThan(30_000);
}, 120_000);

test('an Anthropic judge out of credit (a 400 invalid_request_error, "Your credit balance is too low") pauses the run at its first failure, in Anthropic\'s words', async () => {
  const before = sim.judge.requests.length;
  const run = await providerRun('credit-anthropic-judge', {
    judge: { baseURL: sim.judge.url, provider: 'anthropic', model: 'fault-credit:claude-sim', maxAttempts: 8 },
    copilots: copilots(),
  });
  const asked = sim.judge.requests.slice(before).filter((r) => r.path === '/v1/messages').length;
  expect(asked).toBeGreaterThan(0);
  // Paused at the first (a few more may have been in flight), not after five http_4xx failures.
  expect(asked).toBeLessThan(5);
  expect(run.paused).toMatchObject({
    by: 'breaker',
    reason: expect.stringMatching(
      /^the judge out of quota or credit: .*Your credit balance is too low to access the Anthropic API/,
    ),
  });
  expect(run.llmCalls.filter((c) => c.role === 'judge').map((c) => c.errorKind)).toEqual(Array(asked).fill('quota'));
}, 120_000);

test('an OpenRouter HTTP 200 carrying an error is retried like a 5xx and recorded in llm_calls (issue 22 item 7)', async () => {
  const run = await providerRun('openrouter-calls', {
    judge: { baseURL: sim.judge.url, provider: 'openrouter', model: 'sim-openrouter-200error-2' },
    copilots: copilots(),
    queries: QUERIES.slice(0, 2),
  });
  expect(run.judgments.map((j) => j.status)).toEqual(['ok', 'ok']);
  const judgeCalls = run.llmCalls.filter((c) => c.role === 'judge');
  expect(judgeCalls.filter((c) => !c.ok).map((c) => c.errorKind)).toEqual(['http_5xx', 'http_5xx']);
  expect(judgeCalls.filter((c) => c.ok)).toHaveLength(2);
}, 120_000);
