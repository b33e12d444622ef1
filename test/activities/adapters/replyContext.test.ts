import { httpAdapter } from '../../../activities/adapters/http';
import { contextText, replyContext, sourceList } from '../../../activities/adapters/replyContext';
import { getPath } from '../../../activities/adapters/http';
import { groundedReply } from '../../../sim/groundedCopilot';
import { startSimServer, type SimServer } from '../../../sim/server';

let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({});
});
afterAll(() => sim.close());

const config = (over: Record<string, unknown>) =>
  httpAdapter.configSchema.parse({
    name: 'G',
    type: 'http',
    url: `${sim.url.replace(/\/v1$/, '')}/_sim/grounded?claims=3&fabricated=1`,
    body: { query: '{{query}}' },
    answerPath: 'answer',
    ...over,
  });

test('an http copilot’s reply: context at contextPath (an array joined), sources at sourcesPath, over real HTTP', async () => {
  const adapter = httpAdapter.create(config({ contextPath: 'context', sourcesPath: 'sources' }), { env: {} });
  const got = await adapter.collect({
    query: { id: 'q', text: 'How big is Aave?' },
    signal: new AbortController().signal,
  });
  const expected = groundedReply('How big is Aave?', { claims: 3, derivable: 0, fabricated: 1, contradicted: 0 });
  expect(got.text).toBe(expected.answer);
  expect(got.context).toBe(expected.context.join('\n\n'));
  expect(got.sources).toEqual(expected.sources);
  // Without the paths: nothing is read.
  const plain = await httpAdapter
    .create(config({}), { env: {} })
    .collect({ query: { id: 'q', text: 'How big is Aave?' }, signal: new AbortController().signal });
  expect(plain.context).toBeUndefined();
  expect(plain.sources).toBeUndefined();
});

test('context as a string, objects as JSON, empty values as none', () => {
  expect(contextText('tool said x')).toBe('tool said x');
  expect(contextText(['a', { tool: 'price', value: 3 }, null])).toBe(
    `a\n\n${JSON.stringify({ tool: 'price', value: 3 }, null, 2)}`,
  );
  expect(contextText('  ')).toBeUndefined();
  expect(contextText([])).toBeUndefined();
  expect(contextText(undefined)).toBeUndefined();
  expect(
    replyContext({ data: { docs: ['d1'] } }, { contextPath: 'data.docs', sourcesPath: 'data.refs' }, getPath),
  ).toEqual({ context: 'd1' });
});

test('sources in the shapes APIs send: id/url/title/text under their usual names, bare URLs, numbered from 1 when unnamed', () => {
  expect(
    sourceList([
      { index: 7, link: 'https://a.test', name: 'A', snippet: 'TVL $3B' },
      'https://b.test',
      { url: 'https://c.test', title: 'C', content: 'body' },
      'plain text source',
      42,
    ]),
  ).toEqual([
    { id: '7', url: 'https://a.test', title: 'A', text: 'TVL $3B' },
    { id: '2', url: 'https://b.test' },
    { id: '3', url: 'https://c.test', title: 'C', text: 'body' },
    { id: '4', text: 'plain text source' },
  ]);
  expect(sourceList({ not: 'a list' })).toBeUndefined();
});

test('config: the paths are checked when the config loads, and apply only to a non-streamed reply', () => {
  expect(() => config({ contextPath: 'a..b' })).toThrow(/not understood/);
  expect(() => config({ answerPath: undefined, stream: 'sse', contextPath: 'context' })).toThrow(
    /contextPath reads the JSON reply of stream/,
  );
});
