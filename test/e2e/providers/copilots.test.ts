import { simServersForFile } from '../../support/sims';
import { expectNoKeyLeak, providerRun, QUERIES } from './run';

/** Copilots behind provider quirks in a whole run: think blocks, out of credit; and a judge whose reply stalls. */
const sim = simServersForFile({ judge: {}, copilots: {} });

test('an R1-style copilot is judged on its answer, not its <think> block, which stays in raw', async () => {
  const before = sim.judge.requests.length;
  const run = await providerRun('think-copilot', {
    judge: { baseURL: sim.judge.url, model: 'sim-judge' },
    copilots: [
      {
        name: 'R1',
        type: 'openai',
        provider: 'together',
        baseURL: sim.copilots.url,
        model: 'sim-think',
        apiKeyEnv: 'PROVIDER_KEY',
      },
    ],
  });
  expect(run.judgments.map((j) => j.status)).toEqual(QUERIES.map(() => 'ok'));
  for (const r of run.responses) {
    expect(r.status).toBe('ok');
    expect(r.text).not.toContain('<think>');
    expect(r.raw).toContain('<think>');
  }
  expect(sim.judge.requests.slice(before).some((r) => JSON.stringify(r.body.messages).includes('<think>'))).toBe(false);
  expectNoKeyLeak(run, [sim.copilots]);
}, 120_000);

test('an out-of-credit copilot pauses the run at its first quota failure (asked at most a dozen times, the reason in its words); empty answers are never judged', async () => {
  const before = sim.copilots.requests.length;
  const queries = [...QUERIES, { id: 't4-c4', text: 'Is staking ETH on Lido safe?', task: 'T4', category: 'C4' }];
  const run = await providerRun('quota-copilot', {
    judge: { baseURL: sim.judge.url, model: 'sim-judge' },
    copilots: [
      {
        name: 'Broke',
        type: 'openai',
        baseURL: sim.copilots.url,
        model: 'sim-quota',
        retry: { maxAttempts: 8, initialIntervalMs: 50 },
      },
      { name: 'Empty', type: 'openai', baseURL: sim.copilots.url, model: 'sim-empty' },
    ],
    queries,
  });
  expect(run.paused).toMatchObject({
    by: 'breaker',
    reason: expect.stringMatching(/^copilot Broke out of quota or credit: .*You exceeded your current quota/),
  });
  const asked = sim.copilots.requests.slice(before).filter((r) => r.model === 'sim-quota').length;
  expect(asked).toBeGreaterThan(0);
  expect(asked).toBeLessThanOrEqual(12);
  const broke = run.responses.filter((r) => r.copilot === 'Broke');
  expect(broke.length).toBeGreaterThan(0);
  expect(broke.map((r) => [r.status, r.errorKind])).toEqual(broke.map(() => ['failed', 'quota']));
  expect(broke[0].errorMessage).toMatch(/quota.*You exceeded your current quota/);
  expect(run.responses.filter((r) => r.copilot === 'Empty').every((r) => r.status === 'failed')).toBe(true);
  expect(run.judgments).toEqual([]);
  expect(run.elapsedMs).toBeLessThan(30_000);
}, 120_000);

test('a judge whose reply stalls after its headers fails its units at timeoutMs (issue 22 item 6)', async () => {
  const run = await providerRun('stall-judge', {
    judge: { baseURL: sim.judge.url, model: 'sim-stall', timeoutMs: 1500, maxAttempts: 2 },
    copilots: [{ name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' }],
    queries: QUERIES.slice(0, 2),
  });
  expect(run.judgments.map((j) => j.status)).toEqual(['failed', 'failed']);
  expect(run.judgments[0].error).toMatch(/timeout of 1500 ms/);
  expect(run.elapsedMs).toBeLessThan(20_000);
}, 120_000);
