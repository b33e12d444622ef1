import { browserAdapter, closeSharedBrowser } from '../../activities/adapters/browser';
import { simServersForFile } from '../support/sims';

jest.setTimeout(60_000);

const sims = simServersForFile({ sim: {} });
afterAll(() => closeSharedBrowser());

// The browser copilot of the README's quick start, against the simulator's own chat page.
const config = (model: string) =>
  browserAdapter.configSchema.parse({
    name: 'SimPage',
    type: 'browser',
    url: `${sims.sim.url.replace(/\/v1$/, '')}/chat?model=${model}`,
    selectors: { input: '#prompt', send: '#send', answer: '.answer' },
    done: { selector: '.answer-done' },
    timeoutMs: 30_000,
  });

test("a browser copilot reads the simulator's chat page: the answer is what the simulated model replied", async () => {
  const question = 'Should I stake my ETH with Lido or run my own validator?';
  const adapter = browserAdapter.create(config('sim-terse'), { env: {} });
  const response = await adapter.collect({ query: { id: 'q1', text: question }, signal: AbortSignal.timeout(30_000) });
  const asked = sims.sim.requests.filter((r) => r.path === '/v1/chat/completions');
  expect(asked).toHaveLength(1);
  expect(asked[0].model).toBe('sim-terse');
  expect(asked[0].body.messages.at(-1).content).toBe(question);
  expect(response.text.trim()).toBe(asked[0].content?.trim());
  expect(response.text.length).toBeGreaterThan(10);
});
