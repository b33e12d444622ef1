import { InputError } from '../../../../core/model/inputError';
import {
  batchApiOf,
  batchClient,
  type BatchClient,
  type BatchLine,
  type BatchStatus,
} from '../../../../core/llm/providers/batch';
import { ProviderHttpError } from '../../../../core/llm/providers/httpError';
import { anthropicReplyOf, anthropicRequestBody } from '../../../../core/llm/providers/anthropicMessages';
import type { SimServer } from '../../../../sim/server';
import { simServerPerTest } from '../../../support/sims';

/** The batch client against the simulator's Batch APIs over HTTP. */
const sim = simServerPerTest({ batchSeconds: 0.3 });
const env = { SIM_KEY: 'sk-test-secret' };
const openai = (server: SimServer) => batchClient({ baseURL: server.url, timeoutMs: 5000 }, env);
const anthropic = (server: SimServer) =>
  batchClient({ baseURL: server.url, provider: 'anthropic', apiKeyEnv: 'SIM_KEY', timeoutMs: 5000 }, env);

const schema = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 1, maximum: 10 } },
  required: ['score'],
  additionalProperties: false,
};
const chatLine = (customId: string, extra: object = {}): BatchLine => ({
  customId,
  body: {
    model: 'sim-judge',
    messages: [{ role: 'user', content: `Rate answer ${customId}.` }],
    response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema } },
    ...extra,
  },
});
const messagesLine = (customId: string, extra: object = {}): BatchLine => ({
  customId,
  body: {
    ...anthropicRequestBody({
      model: 'claude-sim',
      messages: [{ role: 'user', content: `Rate answer ${customId}.` }],
      maxTokens: 200,
      jsonSchema: { name: 'verdict', schema },
    }),
    ...extra,
  },
});

async function untilEnded(client: BatchClient, id: string): Promise<BatchStatus[]> {
  const seen: BatchStatus[] = [];
  for (let i = 0; i < 300; i++) {
    const status = await client.status(id);
    seen.push(status);
    if (status.ended) return seen;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`batch ${id} did not end`);
}

describe('OpenAI protocol', () => {
  test('submit → status → results: every line from the batch, none live, counts normalised', async () => {
    // In progress with lines pending for 1.6 s of its 2 s window: a poll finds it there even on a loaded machine.
    const server = await sim({ batchSeconds: 2 });
    const client = openai(server);
    const submitted = await client.submit([chatLine('a'), chatLine('b'), chatLine('c')], 'run1:judge:0');
    expect(submitted).toMatchObject({ state: 'validating', ended: false });
    const seen = await untilEnded(client, submitted.id);
    expect(seen.some((s) => s.state === 'in_progress' && s.counts.total === 3 && s.counts.pending > 0)).toBe(true);
    expect(seen.at(-1)).toEqual({
      id: submitted.id,
      state: 'completed',
      ended: true,
      counts: { total: 3, succeeded: 3, failed: 0, pending: 0 },
    });
    const results = await client.results(submitted.id, ['a', 'b', 'c']);
    expect(results.map((r) => [r.customId, r.ok]).sort()).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    for (const r of results)
      if (r.ok) expect(JSON.parse((r.body as any).choices[0].message.content).score).toBeGreaterThanOrEqual(1);
    expect(server.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
    expect(server.requests.filter((r) => r.batch)).toHaveLength(3);
  });

  test('after a lost create reply, find returns the batch a tag made (by metadata, else by its input file name); another tag finds nothing', async () => {
    const server = await sim();
    const since = Date.now();
    const first = await openai(server).submit([chatLine('a')], 'run2:judge:0');
    const found = await openai(server).find([chatLine('a')], 'run2:judge:0', since);
    expect(found.map((b) => b.id)).toEqual([first.id]);
    const batch = await (await fetch(`${server.url}/batches/${first.id}`)).json();
    expect(batch.metadata).toEqual({ judgeflow_tag: 'run2:judge:0' });
    expect(await openai(server).find([chatLine('a')], 'run2:judge:1', since)).toEqual([]);
    expect((await openai(server).submit([chatLine('a')], 'run2:judge:1')).id).not.toBe(first.id);
  });

  test('a host whose batch list leaves metadata out: find matches by the input file named after the tag; a submit reuses an uploaded file', async () => {
    const server = await sim({ batchListOmitsMetadata: true });
    const since = Date.now();
    const first = await openai(server).submit([chatLine('a')], 'run9/judge/1');
    expect((await (await fetch(`${server.url}/batches?limit=100`)).json()).data[0].metadata).toBeUndefined();
    expect((await openai(server).find([chatLine('a')], 'run9/judge/1', since)).map((b) => b.id)).toEqual([first.id]);
    // The file is there already (a worker died between upload and create): the next submit creates on it, uploads nothing.
    await openai(server).submit([chatLine('a')], 'run9/judge/1');
    const files = (await (await fetch(`${server.url}/files?purpose=batch`)).json()).data;
    expect(files).toHaveLength(1);
    // Both batches are found, oldest first: the second is the duplicate the caller cancels.
    expect((await openai(server).find([chatLine('a')], 'run9/judge/1', since)).map((b) => b.id)[0]).toBe(first.id);
  });

  test('failed, refused and expired lines: kind and the provider words; unreported expected ids come back expired', async () => {
    const server = await sim({ batchFailLines: 2, batchExpireAfterLines: 3 });
    const client = openai(server);
    const { messages: _m, ...noMessages } = chatLine('refused').body;
    const submitted = await client.submit(
      [chatLine('a'), chatLine('fails'), { customId: 'refused', body: noMessages }, chatLine('late')],
      'run3',
    );
    const final = (await untilEnded(client, submitted.id)).at(-1)!;
    expect(final).toMatchObject({ state: 'expired', counts: { total: 4, succeeded: 1, failed: 3, pending: 0 } });
    const byId = Object.fromEntries(
      (await client.results(submitted.id, ['a', 'fails', 'refused', 'late', 'never-sent'])).map((r) => [r.customId, r]),
    );
    expect(byId.a.ok).toBe(true);
    expect(byId.fails).toEqual({
      customId: 'fails',
      ok: false,
      kind: 'errored',
      error: 'HTTP 500: The server had an error while processing your request. Sorry about that!',
    });
    expect(byId.refused).toEqual({
      customId: 'refused',
      ok: false,
      kind: 'errored',
      error: 'HTTP 400: Request must include a string "model" and a "messages" array.',
    });
    expect(byId.late).toEqual({
      customId: 'late',
      ok: false,
      kind: 'expired',
      error: 'batch_expired: This request could not be executed before the completion window expired.',
    });
    expect(byId['never-sent']).toMatchObject({ ok: false, kind: 'expired' });
  });

  test('cancel: cancelling, then cancelled; lines that never ran are canceled when expected; cancel of an ended batch is its status', async () => {
    const server = await sim({ batchSeconds: 2 });
    const client = openai(server);
    const lines = Array.from({ length: 8 }, (_, i) => chatLine(`l${i}`));
    const submitted = await client.submit(lines, 'run4');
    await new Promise((r) => setTimeout(r, 600));
    expect((await client.cancel(submitted.id)).state).toBe('cancelling');
    const final = (await untilEnded(client, submitted.id)).at(-1)!;
    expect(final.state).toBe('cancelled');
    expect(final.counts.succeeded + final.counts.failed).toBe(8);
    const results = await client.results(
      submitted.id,
      lines.map((l) => l.customId),
    );
    expect(results).toHaveLength(8);
    expect(results.filter((r) => r.ok)).toHaveLength(final.counts.succeeded);
    expect(results.filter((r) => !r.ok && r.kind === 'canceled')).toHaveLength(8 - final.counts.succeeded);
    expect(await client.cancel(submitted.id)).toEqual(final);
  });

  test('a batch failing validation says why in OpenAI words; results before the end refuse', async () => {
    // Validating for the window's first tenth: 0.5 s, so the results asked right after the submit find it there even on
    // a loaded machine (at the file's 0.3 s window, 30 ms, a loaded run found it failed already).
    const server = await sim({ batchSeconds: 5 });
    const client = openai(server);
    const failed = await client.submit([chatLine('x'), chatLine('x')], 'dup');
    await expect(client.results(failed.id)).rejects.toThrow(/has not ended \(state validating\)/);
    expect((await untilEnded(client, failed.id)).at(-1)).toMatchObject({
      state: 'failed',
      ended: true,
      error: expect.stringContaining('line 2: duplicate_custom_id: The custom_id for this request is a duplicate'),
    });
  });

  test('HTTP errors carry the provider words and the body, never the key', async () => {
    const server = await sim();
    const client = batchClient({ baseURL: server.url, apiKeyEnv: 'SIM_KEY', timeoutMs: 5000 }, env);
    const error = await client.status('batch_nope').catch((e) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect(error).toMatchObject({
      status: 404,
      message: 'HTTP 404 from GET /v1/batches/batch_nope: No such Batch object: batch_nope',
    });
    expect(JSON.parse(error.body).error.param).toBe('batch_id');
    expect(String(error.message)).not.toContain('sk-test-secret');
  });
});

describe("Anthropic's Message Batches", () => {
  test('submit → status → results: Messages the live code reads with anthropicReplyOf; an invalid request is errored in Anthropic words', async () => {
    const server = await sim();
    const client = anthropic(server);
    const { max_tokens: _t, ...noMax } = messagesLine('bad').body;
    const submitted = await client.submit(
      [messagesLine('a'), messagesLine('b'), { customId: 'bad', body: noMax }],
      'ignored-tag',
    );
    expect(submitted).toMatchObject({ state: 'in_progress', ended: false, counts: { total: 3, pending: 3 } });
    const final = (await untilEnded(client, submitted.id)).at(-1)!;
    expect(final).toEqual({
      id: submitted.id,
      state: 'completed',
      ended: true,
      counts: { total: 3, succeeded: 2, failed: 1, pending: 0 },
    });
    const byId = Object.fromEntries((await client.results(submitted.id)).map((r) => [r.customId, r]));
    expect(byId.bad).toEqual({
      customId: 'bad',
      ok: false,
      kind: 'errored',
      error: 'invalid_request_error: max_tokens: Field required',
    });
    expect(byId.a.ok).toBe(true);
    if (!byId.a.ok) return;
    const reply = anthropicReplyOf(byId.a.body, { name: 'verdict' });
    expect(reply.stopReason).toBe('tool_use');
    expect(JSON.parse(reply.content!).score).toBeGreaterThanOrEqual(1);
    expect(reply.usage.promptTokens).toBeGreaterThan(0);
    expect(server.requests.filter((r) => r.batch).every((r) => r.path === '/v1/messages/batches')).toBe(true);
    // The key went only as x-api-key, never into the logged line bodies.
    expect(JSON.stringify(server.requests)).not.toContain('sk-test-secret');
  });

  test('expired and canceled requests, and cancel', async () => {
    const expiring = await sim({ batchExpireAfterLines: 1 });
    const client = anthropic(expiring);
    const submitted = await client.submit([messagesLine('a'), messagesLine('b')], 't');
    expect((await untilEnded(client, submitted.id)).at(-1)).toMatchObject({
      state: 'expired',
      counts: { succeeded: 1, failed: 1 },
    });
    expect((await client.results(submitted.id)).find((r) => r.customId === 'b')).toMatchObject({
      ok: false,
      kind: 'expired',
    });

    const slow = await sim({ batchSeconds: 2 });
    const slowClient = anthropic(slow);
    const long = await slowClient.submit(
      Array.from({ length: 8 }, (_, i) => messagesLine(`r${i}`)),
      't',
    );
    await new Promise((r) => setTimeout(r, 500));
    expect((await slowClient.cancel(long.id)).state).toBe('cancelling');
    const final = (await untilEnded(slowClient, long.id)).at(-1)!;
    expect(final.state).toBe('cancelled');
    const canceled = (await slowClient.results(long.id)).filter((r) => !r.ok && r.kind === 'canceled');
    expect(canceled.length).toBeGreaterThan(0);
    expect(final.counts.failed).toBe(canceled.length);
  });

  test('find after a lost create reply: the batches created since then with as many requests, oldest first; the list pages with after_id and before_id', async () => {
    const server = await sim();
    const before = await anthropic(server).submit([messagesLine('x')], 't');
    await new Promise((r) => setTimeout(r, 1_100)); // the earlier batch a second before `since`
    const since = Date.now();
    const mine = await anthropic(server).submit([messagesLine('a'), messagesLine('b')], 't');
    await anthropic(server).submit([messagesLine('c')], 't'); // another size
    const found = await anthropic(server).find([messagesLine('a'), messagesLine('b')], 't', since);
    expect(found.map((b) => b.id)).toEqual([mine.id]);
    // The earlier one is within the minute of clock skew, but of another size: not ours.
    expect(found.map((b) => b.id)).not.toContain(before.id);
    const headers = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sim-key' };
    const page1 = await (await fetch(`${server.url}/messages/batches?limit=2`, { headers })).json();
    expect(page1).toMatchObject({ has_more: true });
    const page2 = await (
      await fetch(`${server.url}/messages/batches?limit=2&after_id=${page1.last_id}`, { headers })
    ).json();
    expect(page2.data.map((b: { id: string }) => b.id)).toEqual([before.id]);
    const back = await (
      await fetch(`${server.url}/messages/batches?limit=2&before_id=${page2.first_id}`, { headers })
    ).json();
    expect(back.data.map((b: { id: string }) => b.id)).toEqual(page1.data.map((b: { id: string }) => b.id));
    expect(back.has_more).toBe(false);
  });

  test('HTTP errors in Anthropic words: no key is a 401, a bad custom_id a 400', async () => {
    const server = await sim();
    const noKey = batchClient(
      { baseURL: server.url, provider: 'anthropic', apiKeyEnv: 'UNSET_KEY', timeoutMs: 5000 },
      env,
    );
    await expect(noKey.submit([messagesLine('a')], 't')).rejects.toMatchObject({
      status: 401,
      message: 'HTTP 401 from POST /v1/messages/batches: x-api-key header is required',
    });
    await expect(anthropic(server).submit([messagesLine('not ok')], 't')).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    });
  });
});

test('batchApiOf and batchClient: a provider without a supported Batch API is an InputError naming it', () => {
  expect(batchApiOf({ baseURL: 'https://api.openai.com/v1' })).toBe('openai');
  expect(batchApiOf({ baseURL: 'https://api.anthropic.com' })).toBe('anthropic');
  expect(batchApiOf({ baseURL: 'https://api.groq.com/openai/v1' })).toBe('openai');
  expect(batchApiOf({ baseURL: 'http://127.0.0.1:8000/v1' })).toBe('openai');
  expect(batchApiOf({ baseURL: 'https://api.together.xyz/v1' })).toBeNull();
  expect(batchApiOf({ baseURL: 'http://127.0.0.1:8000/v1', provider: 'mistral' })).toBeNull();
  const make = () =>
    batchClient({ baseURL: 'https://generativelanguage.googleapis.com/v1beta/openai', timeoutMs: 1000 }, {});
  expect(make).toThrow(InputError);
  expect(make).toThrow(/provider "gemini" .* has no Batch API judgeflow supports/);
});
