import type { SimServer } from '../../sim/server';
import { simServerPerTest } from '../support/sims';

/** The simulator's OpenAI Batch API over HTTP: files, batches, states, output and error files, validation. */
const sim = simServerPerTest({ batchSeconds: 0.3 });

const schema = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 1, maximum: 10 }, rationale: { type: 'string' } },
  required: ['score', 'rationale'],
  additionalProperties: false,
};
const judgeBody = (question: string, model = 'sim-judge') => ({
  model,
  messages: [
    { role: 'system', content: 'You are a judge.' },
    { role: 'user', content: `Rate this answer about ${question}.` },
  ],
  response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema } },
});
const line = (customId: string, body: unknown, url = '/v1/chat/completions') =>
  JSON.stringify({ custom_id: customId, method: 'POST', url, body });

async function upload(server: SimServer, jsonl: string, purpose = 'batch'): Promise<any> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([jsonl]), 'input.jsonl');
  const res = await fetch(`${server.url}/files`, { method: 'POST', body: form });
  return { status: res.status, body: await res.json() };
}
async function call(
  server: SimServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
async function submit(server: SimServer, jsonl: string, metadata?: Record<string, string>): Promise<any> {
  const file = await upload(server, jsonl);
  expect(file.status).toBe(200);
  const created = await call(server, 'POST', '/batches', {
    input_file_id: file.body.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    ...(metadata ? { metadata } : {}),
  });
  expect(created.status).toBe(200);
  return created.body;
}
async function untilEnded(server: SimServer, id: string): Promise<{ batch: any; seen: string[] }> {
  const seen: string[] = [];
  for (let i = 0; i < 200; i++) {
    const { body } = await call(server, 'GET', `/batches/${id}`);
    if (seen.at(-1) !== body.status) seen.push(body.status);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(body.status)) return { batch: body, seen };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`batch ${id} did not end`);
}
async function fileLines(server: SimServer, id: string | null): Promise<any[]> {
  if (!id) return [];
  const text = await (await fetch(`${server.url}/files/${id}/content`)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

test('upload → create → validating, in_progress, finalizing, completed; the output file answers every line as the live endpoint does', async () => {
  const server = await sim({ batchSeconds: 1 });
  const file = await upload(server, [line('q1', judgeBody('BTC')), line('q2', judgeBody('ETH'))].join('\n'));
  expect(file.body).toMatchObject({
    object: 'file',
    purpose: 'batch',
    filename: 'input.jsonl',
    bytes: expect.any(Number),
  });
  expect((await call(server, 'GET', `/files/${file.body.id}`)).body).toEqual(file.body);
  const created = await call(server, 'POST', '/batches', {
    input_file_id: file.body.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { judgeflow_tag: 't1' },
  });
  expect(created.body).toMatchObject({
    object: 'batch',
    status: 'validating',
    endpoint: '/v1/chat/completions',
    input_file_id: file.body.id,
    metadata: { judgeflow_tag: 't1' },
    output_file_id: null,
    errors: null,
  });

  const { batch, seen } = await untilEnded(server, created.body.id);
  // Polled every 20 ms, a busy machine may miss a phase; the timestamps show each one happened, in order.
  const order = ['validating', 'in_progress', 'finalizing', 'completed'];
  expect([seen[0], seen.at(-1)]).toEqual(['validating', 'completed']);
  expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort());
  expect(
    batch.created_at <= batch.in_progress_at &&
      batch.in_progress_at <= batch.finalizing_at &&
      batch.finalizing_at <= batch.completed_at,
  ).toBe(true);
  expect(batch).toMatchObject({
    request_counts: { total: 2, completed: 2, failed: 0 },
    error_file_id: null,
    completed_at: expect.any(Number),
    in_progress_at: expect.any(Number),
    finalizing_at: expect.any(Number),
  });
  const output = await fileLines(server, batch.output_file_id);
  expect(output.map((l) => l.custom_id).sort()).toEqual(['q1', 'q2']);
  for (const l of output) {
    expect(l).toEqual({
      id: expect.stringMatching(/^batch_req_/),
      custom_id: l.custom_id,
      response: {
        status_code: 200,
        request_id: expect.any(String),
        body: expect.objectContaining({ object: 'chat.completion' }),
      },
      error: null,
    });
    const verdict = JSON.parse(l.response.body.choices[0].message.content);
    expect(verdict.score).toBeGreaterThanOrEqual(1);
    expect(verdict.score).toBeLessThanOrEqual(10);
  }
  // Each processed line is logged as a batch line, never under the live path.
  expect(server.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
  expect(server.requests.filter((r) => r.batch?.id === batch.id).map((r) => [r.path, r.batch!.customId])).toEqual([
    ['/v1/batches', 'q1'],
    ['/v1/batches', 'q2'],
  ]);
  expect(server.requests.find((r) => r.batch?.customId === 'q1')!.usage).toEqual(
    output.find((l) => l.custom_id === 'q1').response.body.usage,
  );
});

test('a line the live endpoint refuses is a failed line in the error file, and batchFailLines fails every Nth line with a 500; the batch still completes', async () => {
  const server = await sim({ batchFailLines: 3 });
  const server2 = await sim();
  const reasoning = (id: string, extra: object) => line(id, { ...judgeBody('SOL', 'sim-reasoning-judge'), ...extra });
  const refused = await untilEnded(
    server2,
    (await submit(server2, [reasoning('ok', {}), reasoning('refused', { temperature: 0 })].join('\n'))).id,
  );
  expect(refused.batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
  expect((await fileLines(server2, refused.batch.error_file_id))[0]).toMatchObject({
    custom_id: 'refused',
    response: {
      status_code: 400,
      body: { error: { type: 'invalid_request_error', code: 'unsupported_value', param: 'temperature' } },
    },
    error: null,
  });

  const { messages: _dropped, ...noMessages } = judgeBody('SOL');
  const lines = [
    line('ok1', judgeBody('SOL')),
    line('refused', noMessages),
    line('fails', judgeBody('ADA')),
    line('ok2', judgeBody('XRP')),
  ];
  const { batch } = await untilEnded(server, (await submit(server, lines.join('\n'))).id);
  expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 4, completed: 2, failed: 2 } });
  const errors = await fileLines(server, batch.error_file_id);
  const byId = Object.fromEntries(errors.map((l) => [l.custom_id, l]));
  expect(byId.refused.response).toMatchObject({
    status_code: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        message: 'Request must include a string "model" and a "messages" array.',
      },
    },
  });
  expect(byId.fails.response).toMatchObject({ status_code: 500, body: { error: { type: 'server_error' } } });
  expect((await fileLines(server, batch.output_file_id)).map((l) => l.custom_id).sort()).toEqual(['ok1', 'ok2']);
});

test('expiry: only the first lines are answered, the others are in the error file as batch_expired', async () => {
  const server = await sim({ batchExpireAfterLines: 1 });
  const { batch } = await untilEnded(
    server,
    (
      await submit(
        server,
        [line('a', judgeBody('BTC')), line('b', judgeBody('ETH')), line('c', judgeBody('SOL'))].join('\n'),
      )
    ).id,
  );
  expect(batch).toMatchObject({
    status: 'expired',
    expired_at: expect.any(Number),
    request_counts: { total: 3, completed: 1, failed: 2 },
  });
  expect((await fileLines(server, batch.output_file_id)).map((l) => l.custom_id)).toEqual(['a']);
  expect(await fileLines(server, batch.error_file_id)).toEqual(
    ['b', 'c'].map((id) => ({
      id: expect.any(String),
      custom_id: id,
      response: null,
      error: {
        code: 'batch_expired',
        message: 'This request could not be executed before the completion window expired.',
      },
    })),
  );
  expect(server.requests.filter((r) => r.batch)).toHaveLength(1);
});

test('cancel: cancelling, then cancelled with the lines answered so far; cancelling an ended batch is a 409', async () => {
  const server = await sim({ batchSeconds: 2 });
  const jsonl = Array.from({ length: 8 }, (_, i) => line(`l${i}`, judgeBody(`coin ${i}`))).join('\n');
  const created = await submit(server, jsonl);
  // Cancelled once a line is answered (a fixed 700 ms, against the batch's own 200 + 200 ms timers, could come first
  // when those fired late under load), long before the eighth.
  for (let i = 0; i < 1_000; i++) {
    if ((await call(server, 'GET', `/batches/${created.id}`)).body.request_counts.completed > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const cancelling = await call(server, 'POST', `/batches/${created.id}/cancel`);
  expect(cancelling.body).toMatchObject({ status: 'cancelling', cancelling_at: expect.any(Number) });
  const { batch } = await untilEnded(server, created.id);
  expect(batch.status).toBe('cancelled');
  const answered = await fileLines(server, batch.output_file_id);
  expect(answered.length).toBeGreaterThan(0);
  expect(answered.length).toBeLessThan(8);
  expect(server.requests.filter((r) => r.batch)).toHaveLength(answered.length);
  expect(await call(server, 'POST', `/batches/${created.id}/cancel`)).toMatchObject({
    status: 409,
    body: { error: { message: "Cannot cancel a batch with status 'cancelled'." } },
  });
});

test.each([
  [
    'a duplicate custom_id',
    [line('x', judgeBody('BTC')), line('x', judgeBody('ETH'))].join('\n'),
    { code: 'duplicate_custom_id', line: 2, param: 'custom_id' },
  ],
  [
    'a url other than the endpoint',
    line('x', judgeBody('BTC'), '/v1/embeddings'),
    { code: 'invalid_url', line: 1, param: 'url' },
  ],
  [
    'a line that is not JSON',
    `${line('x', judgeBody('BTC'))}\n{"custom_id": "y", "method": "POST"`,
    { code: 'invalid_json_line', line: 2, message: 'This line is not parseable as valid JSON.' },
  ],
  [
    'two models in one file',
    [line('x', judgeBody('BTC')), line('y', judgeBody('ETH', 'sim-judge-2'))].join('\n'),
    { code: 'mismatched_model', line: 2 },
  ],
  ['an empty file', '\n', { code: 'empty_file' }],
])('validation: %s fails the batch with errors naming the line', async (_what, jsonl, error) => {
  const server = await sim();
  const { batch, seen } = await untilEnded(server, (await submit(server, jsonl)).id);
  expect(seen).toEqual(['validating', 'failed']);
  expect(batch).toMatchObject({
    status: 'failed',
    failed_at: expect.any(Number),
    output_file_id: null,
    error_file_id: null,
    errors: { object: 'list', data: [expect.objectContaining(error)] },
  });
  expect(server.requests.filter((r) => r.batch)).toHaveLength(0);
});

test('requests refused at once: upload without purpose, a batch of an unknown or non-batch file, an unsupported window; unknown ids are 404s', async () => {
  const server = await sim();
  const form = new FormData();
  form.append('file', new Blob(['{}']), 'a.jsonl');
  expect(await (await fetch(`${server.url}/files`, { method: 'POST', body: form })).json()).toMatchObject({
    error: { param: 'purpose', code: 'missing_required_parameter' },
  });
  expect(
    await call(server, 'POST', '/batches', {
      input_file_id: 'file-nope',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    }),
  ).toMatchObject({
    status: 400,
    body: { error: { message: 'No such File object: file-nope', param: 'input_file_id' } },
  });
  const notBatch = await upload(server, line('x', judgeBody('BTC')), 'fine-tune');
  expect(
    (
      await call(server, 'POST', '/batches', {
        input_file_id: notBatch.body.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      })
    ).status,
  ).toBe(400);
  const good = await upload(server, line('x', judgeBody('BTC')));
  expect(
    await call(server, 'POST', '/batches', {
      input_file_id: good.body.id,
      endpoint: '/v1/chat/completions',
      completion_window: '1h',
    }),
  ).toMatchObject({ status: 400, body: { error: { param: 'completion_window' } } });
  expect(
    await call(server, 'POST', '/batches', {
      input_file_id: good.body.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { k: 5 },
    }),
  ).toMatchObject({ status: 400, body: { error: { param: 'metadata' } } });
  expect((await call(server, 'GET', '/batches/batch_nope')).status).toBe(404);
  expect((await call(server, 'GET', '/files/file-nope')).status).toBe(404);
});

test('list: newest first, limit and after page through them', async () => {
  const server = await sim();
  const ids: string[] = [];
  for (const tag of ['a', 'b', 'c'])
    ids.push((await submit(server, line('x', judgeBody(tag)), { judgeflow_tag: tag })).id);
  const first = await call(server, 'GET', '/batches?limit=2');
  expect(first.body).toMatchObject({ object: 'list', has_more: true, first_id: ids[2], last_id: ids[1] });
  expect(first.body.data.map((b: any) => b.metadata.judgeflow_tag)).toEqual(['c', 'b']);
  const next = await call(server, 'GET', `/batches?limit=2&after=${first.body.last_id}`);
  expect(next.body).toMatchObject({ has_more: false, data: [{ id: ids[0] }] });
});
