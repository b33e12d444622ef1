import type { SimServer } from '../../sim/server';
import { simServerPerTest } from '../support/sims';

/** The simulator's Anthropic Message Batches over HTTP: create, retrieve, results_url, cancel, expiry, validation. */
const sim = simServerPerTest({ batchSeconds: 0.3 });
const headers = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const schema = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 1, maximum: 5 } },
  required: ['score'],
};
const params = (question: string, extra: object = {}) => ({
  model: 'claude-sim',
  max_tokens: 200,
  messages: [{ role: 'user', content: `Rate this answer about ${question}.` }],
  tools: [{ name: 'verdict', description: 'd', input_schema: schema }],
  tool_choice: { type: 'tool', name: 'verdict' },
  ...extra,
});

async function call(
  server: SimServer,
  method: string,
  path: string,
  body?: unknown,
  sendHeaders: Record<string, string> = headers,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: sendHeaders,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
async function create(server: SimServer, requests: unknown[]): Promise<any> {
  const res = await call(server, 'POST', '/messages/batches', { requests });
  expect(res.status).toBe(200);
  return res.body;
}
async function untilEnded(server: SimServer, id: string): Promise<{ batch: any; seen: string[] }> {
  const seen: string[] = [];
  for (let i = 0; i < 200; i++) {
    const { body } = await call(server, 'GET', `/messages/batches/${id}`);
    if (seen.at(-1) !== body.processing_status) seen.push(body.processing_status);
    if (body.processing_status === 'ended') return { batch: body, seen };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`batch ${id} did not end`);
}
async function results(url: string): Promise<any[]> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

test('create → in_progress → ended; results_url gives each request the Message the live /v1/messages would answer, errored ones its error', async () => {
  const server = await sim();
  const created = await create(server, [
    { custom_id: 'q-1', params: params('BTC') },
    { custom_id: 'q_2', params: params('ETH') },
    { custom_id: 'no-max-tokens', params: { ...params('SOL'), max_tokens: undefined } },
  ]);
  expect(created).toMatchObject({
    id: expect.stringMatching(/^msgbatch_/),
    type: 'message_batch',
    processing_status: 'in_progress',
    request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    results_url: null,
    ended_at: null,
  });
  const { batch, seen } = await untilEnded(server, created.id);
  expect(seen).toEqual(['in_progress', 'ended']);
  expect(batch).toMatchObject({
    request_counts: { processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 },
    ended_at: expect.any(String),
    results_url: `${server.url}/messages/batches/${created.id}/results`,
  });
  const lines = await results(batch.results_url);
  const byId = Object.fromEntries(lines.map((l) => [l.custom_id, l.result]));
  for (const id of ['q-1', 'q_2']) {
    expect(byId[id]).toMatchObject({
      type: 'succeeded',
      message: {
        type: 'message',
        role: 'assistant',
        stop_reason: 'tool_use',
        content: [{ type: 'tool_use', name: 'verdict', input: { score: expect.any(Number) } }],
      },
    });
  }
  expect(byId['no-max-tokens']).toEqual({
    type: 'errored',
    error: {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
      request_id: expect.any(String),
    },
  });
  expect(server.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(0);
  expect(server.requests.filter((r) => r.batch).map((r) => [r.path, r.batch!.customId])).toEqual([
    ['/v1/messages/batches', 'q-1'],
    ['/v1/messages/batches', 'q_2'],
    ['/v1/messages/batches', 'no-max-tokens'],
  ]);
});

test('batchFailLines: every Nth request errors with api_error; model-name faults error their request the same way', async () => {
  const server = await sim({ batchFailLines: 2 });
  const { id } = await create(server, [
    { custom_id: 'a', params: params('BTC') },
    { custom_id: 'b', params: params('ETH') },
    { custom_id: 'c', params: params('SOL', { model: 'fault-529:claude-sim' }) },
  ]);
  const { batch } = await untilEnded(server, id);
  expect(batch.request_counts).toMatchObject({ succeeded: 1, errored: 2 });
  const byId = Object.fromEntries((await results(batch.results_url)).map((l) => [l.custom_id, l.result]));
  expect(byId.b).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'api_error' } } });
  expect(byId.c).toMatchObject({
    type: 'errored',
    error: { error: { type: 'overloaded_error', message: 'Overloaded' } },
  });
});

test('expiry: requests not processed in time end as expired', async () => {
  const server = await sim({ batchExpireAfterLines: 2 });
  const { id } = await create(
    server,
    ['a', 'b', 'c', 'd'].map((c) => ({ custom_id: c, params: params(c) })),
  );
  const { batch } = await untilEnded(server, id);
  expect(batch.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 2 });
  expect((await results(batch.results_url)).filter((l) => l.result.type === 'expired').map((l) => l.custom_id)).toEqual(
    ['c', 'd'],
  );
});

test('cancel: canceling, then ended with the unprocessed requests canceled; an ended batch stays as it is', async () => {
  const server = await sim({ batchSeconds: 2 });
  const { id } = await create(
    server,
    Array.from({ length: 8 }, (_, i) => ({ custom_id: `r${i}`, params: params(`coin ${i}`) })),
  );
  await new Promise((r) => setTimeout(r, 500));
  const canceling = await call(server, 'POST', `/messages/batches/${id}/cancel`);
  expect(canceling.body).toMatchObject({ processing_status: 'canceling', cancel_initiated_at: expect.any(String) });
  const { batch } = await untilEnded(server, id);
  expect(batch.request_counts.canceled).toBeGreaterThan(0);
  expect(batch.request_counts.succeeded + batch.request_counts.canceled).toBe(8);
  const lines = await results(batch.results_url);
  expect(lines.filter((l) => l.result.type === 'canceled')).toHaveLength(batch.request_counts.canceled);
  expect((await call(server, 'POST', `/messages/batches/${id}/cancel`)).body).toMatchObject({
    processing_status: 'ended',
    request_counts: batch.request_counts,
  });
});

test.each([
  ['no requests', { requests: [] }, 'requests: List should have at least 1 item after validation, not 0'],
  [
    'a custom_id outside the pattern',
    { requests: [{ custom_id: 'has space', params: params('x') }] },
    "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
  ],
  [
    'a custom_id longer than 64',
    { requests: [{ custom_id: 'x'.repeat(65), params: params('x') }] },
    "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
  ],
  [
    'a duplicate custom_id',
    {
      requests: [
        { custom_id: 'x', params: params('x') },
        { custom_id: 'x', params: params('y') },
      ],
    },
    expect.stringMatching(/^requests\.1\.custom_id: Duplicate custom_id "x"/),
  ],
])('create refuses %s with a 400 invalid_request_error', async (_what, body, message) => {
  const server = await sim();
  expect(await call(server, 'POST', '/messages/batches', body)).toEqual({
    status: 400,
    body: { type: 'error', error: { type: 'invalid_request_error', message }, request_id: expect.any(String) },
  });
});

test('headers are required as on /v1/messages; unknown ids are not_found_error; results before the end are refused; list is newest first', async () => {
  const server = await sim({ batchSeconds: 1 });
  const { 'x-api-key': _key, ...noKey } = headers;
  expect(
    await call(server, 'POST', '/messages/batches', { requests: [{ custom_id: 'a', params: params('a') }] }, noKey),
  ).toMatchObject({ status: 401, body: { error: { type: 'authentication_error' } } });
  const { 'anthropic-version': _v, ...noVersion } = headers;
  expect((await call(server, 'GET', '/messages/batches/msgbatch_nope', undefined, noVersion)).status).toBe(400);
  expect(await call(server, 'GET', '/messages/batches/msgbatch_nope')).toMatchObject({
    status: 404,
    body: { error: { type: 'not_found_error' } },
  });
  const first = await create(server, [{ custom_id: 'a', params: params('a') }]);
  const second = await create(server, [{ custom_id: 'a', params: params('b') }]);
  expect((await call(server, 'GET', `/messages/batches/${first.id}/results`)).status).toBe(400);
  const list = await call(server, 'GET', '/messages/batches?limit=1');
  expect(list.body).toMatchObject({
    data: [{ id: second.id }],
    has_more: true,
    first_id: second.id,
    last_id: second.id,
  });
  expect((await call(server, 'GET', `/messages/batches?limit=5&after_id=${second.id}`)).body).toMatchObject({
    data: [{ id: first.id }],
    has_more: false,
  });
});
