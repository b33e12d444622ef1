import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpAdapter } from '../../../activities/adapters/http';
import type { Query } from '../../../core/model/types';
import { adapterFailure } from '../../support/adapterError';

const SECRET = 'sk-test-4f2a9c';
const env = { JUDGEFLOW_TEST_API_KEY: SECRET };
const query: Query = {
  id: 'q1',
  text: 'Is "BTC" outperforming ETH?\nGive numbers, please.',
  history: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'Hello! Ask me about crypto.' },
  ],
};
const SSE_CHUNKS = ['BTC ', 'is up ', '4.2%', ' vs ETH\'s 1.1% — "numbers", ', 'as asked.'];

let server: Server;
let base: string;
const hits = new Map<string, number>();
/** Per path: resolves when the client closes the connection, true if that was before the reply was complete. */
const hangUps = new Map<string, Promise<boolean>>();

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => resolve(body));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const body = await readBody(req);
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  if (req.headers.authorization !== `Bearer ${SECRET}`) return json(401, { error: 'bad key' });

  switch (path) {
    case '/chat': {
      const received = JSON.parse(body);
      return json(200, { data: { answer: `answer to: ${received.question}`, conversation_id: 'conv-42', received } });
    }
    case '/sse': {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"chatcmpl-7","choices":[{"delta":{"role":"assistant"}}]}\n\n');
      res.write(': keep-alive comment\n\n');
      for (const chunk of SSE_CHUNKS) {
        await sleep(30);
        res.write(
          `event: message\ndata: ${JSON.stringify({ id: 'chatcmpl-7', choices: [{ delta: { content: chunk } }] })}\n\n`,
        );
      }
      res.write('data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n');
      res.write('data: [DONE]\n\n');
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'AFTER DONE' } }] })}\n\n`);
      return void res.end();
    }
    case '/sse-plain': {
      // Plain-text events, CRLF line endings, a multi-line event, and no [DONE]: the end of the stream ends the answer.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of ['data: Hello', 'data:  world', 'data: line one\r\ndata: line two']) {
        await sleep(20);
        res.write(`${piece}\r\n\r\n`);
      }
      return void res.end();
    }
    case '/ndjson': {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (const delta of ['{"delta":"a, "}', '{"delta":"b"}', '{"done":true}']) {
        await sleep(10);
        res.write(`${delta}\n`);
      }
      return void res.end();
    }
    case '/sse-forever': {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write('data: more\n\n'), 20);
      res.on('close', () => clearInterval(timer));
      hangUps.set(path, new Promise((resolve) => res.on('close', () => resolve(!res.writableEnded))));
      return;
    }
    case '/flaky':
      if (hits.get(path) === 1) return json(500, { error: 'upstream hiccup' }, { 'retry-after': '2' });
      return json(200, { data: { answer: 'recovered' } });
    case '/limited':
      return json(429, { error: 'slow down' }, { 'retry-after': '7' });
    case '/bad-request':
      return json(400, { error: 'unknown field "question"' });
    case '/no-answer':
      return json(200, { data: { text: 'the answer is elsewhere' }, meta: {} });
    case '/not-json':
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<html>proxy error</html>');
    case '/slow': {
      const timer = setTimeout(() => json(200, { data: { answer: 'too late' } }), 5_000);
      res.on('close', () => clearTimeout(timer)); // the client gave up; do not keep jest alive
      hangUps.set(path, new Promise((resolve) => res.on('close', () => resolve(!res.writableEnded))));
      return;
    }
    default:
      return json(404, { error: 'no route' });
  }
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function configFor(fields: Record<string, unknown>) {
  return httpAdapter.configSchema.parse({
    name: 'TestAPI',
    type: 'http',
    headers: { authorization: 'Bearer ${JUDGEFLOW_TEST_API_KEY}' },
    ...fields,
  });
}

function collect(fields: Record<string, unknown>, signal = AbortSignal.timeout(10_000), q: Query = query) {
  const adapter = httpAdapter.create(configFor(fields), { env });
  return adapter.collect({ query: q, signal });
}

test('plain JSON endpoint: body template, env header, answerPath and conversationIdPath', async () => {
  const fields = {
    url: `${base}/chat`,
    body: {
      question: '{{query}}',
      prompt: 'Q: {{query}}',
      history: '{{history}}',
      conversation: '{{conversationId}}',
      fixed: 3,
    },
    answerPath: 'data.answer',
    conversationIdPath: 'data.conversation_id',
  };
  expect(JSON.stringify(configFor(fields))).not.toContain(SECRET); // the key lives only in the worker's env
  const response = await collect(fields);
  expect(response.text).toBe(`answer to: ${query.text}`);
  expect(response.conversationId).toBe('conv-42');
  const { received } = JSON.parse(response.raw!).data;
  expect(received).toEqual({
    question: query.text,
    prompt: `Q: ${query.text}`,
    history: query.history,
    conversation: expect.stringMatching(/^[0-9a-f-]{36}$/),
    fixed: 3,
  });
});

test('a string body is a raw JSON template whose placeholders are JSON-escaped', async () => {
  const response = await collect({
    url: `${base}/chat`,
    body: '{"question": "{{query}}", "prompt": "Q: {{query}}", "history": {{history}}}',
    answerPath: 'data["answer"]',
  });
  expect(JSON.parse(response.raw!).data.received).toEqual({
    question: query.text,
    prompt: `Q: ${query.text}`,
    history: query.history,
  });
});

test('an unset env var in a header is a config error naming it', () => {
  expect(() => httpAdapter.create(configFor({ url: `${base}/chat`, answerPath: 'a' }), { env: {} })).toThrow(
    /JUDGEFLOW_TEST_API_KEY/,
  );
});

test('SSE stream: chunks picked with chunkPath are concatenated in order, stopping at [DONE]', async () => {
  const response = await collect({
    url: `${base}/sse`,
    body: { q: '{{query}}' },
    stream: 'sse',
    chunkPath: 'choices[0].delta.content',
    conversationIdPath: 'id',
  });
  expect(response.text).toBe(SSE_CHUNKS.join(''));
  expect(response.conversationId).toBe('chatcmpl-7');
  expect(response.raw).toContain('data: [DONE]');
});

test('SSE stream with plain-text events and no [DONE]', async () => {
  const response = await collect({ url: `${base}/sse-plain`, stream: 'sse' });
  expect(response.text).toBe('Hello world' + 'line one\nline two');
});

test('NDJSON stream', async () => {
  const response = await collect({ url: `${base}/ndjson`, stream: 'ndjson', chunkPath: 'delta' });
  expect(response.text).toBe('a, b');
});

test('HTTP 500 is retryable with Retry-After, and the next attempt succeeds', async () => {
  const fields = { url: `${base}/flaky`, body: { q: '{{query}}' }, answerPath: 'data.answer' };
  const first = await adapterFailure(collect(fields));
  expect(first.kind).toBe('http');
  expect(first.retryable).toBe(true);
  expect(first.options.retryAfterMs).toBe(2000);
  expect(first.message).toContain('HTTP 500');
  expect((await collect(fields)).text).toBe('recovered');
});

test('HTTP 429 is rate_limited with retryAfterMs from Retry-After', async () => {
  const error = await adapterFailure(collect({ url: `${base}/limited`, answerPath: 'data.answer' }));
  expect(error.kind).toBe('rate_limited');
  expect(error.retryable).toBe(true);
  expect(error.options.retryAfterMs).toBe(7000);
});

test('other 4xx are not retryable', async () => {
  const error = await adapterFailure(collect({ url: `${base}/bad-request`, answerPath: 'data.answer' }));
  expect(error.kind).toBe('http');
  expect(error.retryable).toBe(false);
  expect(error.message).toContain('unknown field');
});

test('a reply without the answer path is invalid_reply naming the path', async () => {
  const error = await adapterFailure(collect({ url: `${base}/no-answer`, answerPath: 'data.answer' }));
  expect(error.kind).toBe('invalid_reply');
  expect(error.message).toContain('"data.answer"');
  expect(error.options.raw).toContain('the answer is elsewhere');
  const notJson = await adapterFailure(collect({ url: `${base}/not-json`, answerPath: 'data.answer' }));
  expect(notJson.kind).toBe('invalid_reply');
});

test('timeout via AbortSignal, before the reply and in the middle of a stream: the adapter hangs up', async () => {
  // /slow would answer after 5 s and /sse-forever never ends: a timeout error plus the server seeing the client
  // close the connection before its reply was complete shows the abort cut the request short.
  const slow = await adapterFailure(
    collect({ url: `${base}/slow`, answerPath: 'data.answer' }, AbortSignal.timeout(1000)),
  );
  expect(slow.kind).toBe('timeout');
  expect(slow.retryable).toBe(true);
  expect(await hangUps.get('/slow')).toBe(true);
  const streaming = await adapterFailure(
    collect({ url: `${base}/sse-forever`, stream: 'sse' }, AbortSignal.timeout(1000)),
  );
  expect(streaming.kind).toBe('timeout');
  expect(streaming.options.raw).toContain('data: more');
  expect(await hangUps.get('/sse-forever')).toBe(true);
});

test('an unreachable server is a retryable network error', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const error = await adapterFailure(collect({ url: `http://127.0.0.1:${port}/chat`, answerPath: 'a' }));
  expect(error.kind).toBe('network');
  expect(error.retryable).toBe(true);
});

test('config validation explains stream/path mistakes', () => {
  expect(() => configFor({ url: `${base}/chat` })).toThrow(/answerPath is required/);
  expect(() => configFor({ url: `${base}/chat`, stream: 'ndjson' })).toThrow(/chunkPath is required/);
  expect(() => configFor({ url: `${base}/chat`, answerPath: 'a..b' })).toThrow(/not understood/);
  expect(() => configFor({ url: `${base}/chat`, answerPath: 'a', extra: 1 })).toThrow(/extra/);
});
