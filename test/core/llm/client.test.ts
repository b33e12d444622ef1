import { z } from 'zod';
import { askJson, type AnswerCache } from '../../../core/llm/client';

/** A batch line's reply is read exactly as a live reply: <think> stripped, a cut-off answer re-asked (here: deferred to the next batch). */
const spec = {
  name: 'verdict',
  jsonSchema: { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] },
  zodSchema: z.object({ score: z.number().int() }),
};
const settings = { baseURL: 'http://127.0.0.1:9/v1', model: 'sim-judge', temperature: 0, timeoutMs: 1000 };
const completion = (content: string, finish = 'stop') => ({
  choices: [{ message: { role: 'assistant', content }, finish_reason: finish }],
  usage: { prompt_tokens: 10, completion_tokens: 5 },
});

function batchCache(
  replies: Array<Record<string, unknown> | null>,
): AnswerCache & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    lines,
    get: async () => null,
    set: async () => undefined,
    batchReply: async (_key, line) => {
      const reply = replies.shift();
      if (reply) return reply;
      lines.push(line());
      throw new Error('deferred');
    },
  };
}

test('a batch reply with a <think> block is the answer; no call is made and none recorded', async () => {
  const calls: unknown[] = [];
  const answer = await askJson({
    settings,
    messages: [{ role: 'user', content: 'Rate it.' }],
    spec,
    maxInvalidAnswers: 1,
    retryIn: 'fresh',
    env: {},
    cache: batchCache([completion('<think>hmm</think>{"score": 7}')]),
    onCall: (u) => void calls.push(u),
  });
  expect(answer).toMatchObject({ ok: true, value: { score: 7 }, attempts: 1 });
  expect(calls).toEqual([]);
});

test('a cut-off batch reply is re-asked: the re-ask, carrying the reason, becomes the next batch line', async () => {
  const cache = batchCache([completion('{"score": ', 'length')]);
  await expect(
    askJson({
      settings,
      messages: [{ role: 'user', content: 'Rate it.' }],
      spec,
      maxInvalidAnswers: 1,
      retryIn: 'fresh',
      env: {},
      cache,
    }),
  ).rejects.toThrow('deferred');
  expect(cache.lines).toHaveLength(1);
  expect(JSON.stringify(cache.lines[0])).toMatch(/That answer was invalid: .*cut off/);
  // The line asks for the same structured answer a live call would: the verdict's schema, strict.
  expect(cache.lines[0]).toMatchObject({
    model: 'sim-judge',
    response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema: spec.jsonSchema } },
  });
});

test('an Anthropic judge reads its batch reply as a Message: the forced tool call is the answer, the line is Messages params', async () => {
  const anthropic = { ...settings, provider: 'anthropic' as const, baseURL: 'http://127.0.0.1:9' };
  const message = {
    type: 'message',
    role: 'assistant',
    content: [{ type: 'tool_use', name: 'verdict', input: { score: 4 } }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 9, output_tokens: 3 },
  };
  const answer = await askJson({
    settings: anthropic,
    messages: [
      { role: 'system', content: 'Judge.' },
      { role: 'user', content: 'Rate it.' },
    ],
    spec,
    maxInvalidAnswers: 0,
    retryIn: 'fresh',
    env: {},
    cache: batchCache([message]),
  });
  expect(answer).toMatchObject({ ok: true, value: { score: 4 } });
  const cache = batchCache([]);
  await expect(
    askJson({
      settings: anthropic,
      messages: [
        { role: 'system', content: 'Judge.' },
        { role: 'user', content: 'Rate it.' },
      ],
      spec,
      maxInvalidAnswers: 0,
      retryIn: 'fresh',
      env: {},
      cache,
    }),
  ).rejects.toThrow('deferred');
  expect(cache.lines[0]).toMatchObject({
    model: 'sim-judge',
    system: 'Judge.',
    max_tokens: 4096,
    tool_choice: { type: 'tool', name: 'verdict' },
  });
});

test('a paced call waits for its send time (beforeSend) just before each request it sends; a reused or batch answer does not', async () => {
  const { startSimServer } = await import('../../../sim/server');
  const sim = await startSimServer({
    handler: async () => ({ status: 200, body: JSON.stringify(completion('{"score": 4}')) }),
  });
  try {
    const waits: number[] = [];
    const beforeSend = async () => {
      await new Promise((r) => setTimeout(r, 150));
      waits.push(Date.now());
    };
    const ask = (cache?: AnswerCache) =>
      askJson({
        settings: { ...settings, baseURL: sim.url },
        messages: [{ role: 'user', content: 'Rate it.' }],
        spec,
        maxInvalidAnswers: 1,
        retryIn: 'fresh',
        env: {},
        cache,
        beforeSend,
      });
    expect(await ask()).toMatchObject({ ok: true, value: { score: 4 } });
    expect(waits).toHaveLength(1);
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0].at).toBeGreaterThanOrEqual(waits[0]);
    // Answered from the store, or from a batch: nothing is sent, nothing waits.
    await ask({ get: async () => '{"score": 5}', set: async () => undefined });
    await ask(batchCache([completion('{"score": 6}')]));
    expect(waits).toHaveLength(1);
    expect(sim.requests).toHaveLength(1);
  } finally {
    await sim.close();
  }
});
