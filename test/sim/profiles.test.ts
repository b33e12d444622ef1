import { startSimServer, type SimServer } from '../../sim/server';

/** The simulator's provider profiles answer with each provider's documented wire shapes; plain model names are untouched. */
let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer();
});
afterAll(() => sim.close());

const schema = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 1, maximum: 5 } },
  required: ['score'],
  additionalProperties: false,
};
const ask = async (body: Record<string, unknown>) => {
  const res = await fetch(`${sim.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'grade it' }], ...body }),
  });
  return { status: res.status, text: await res.text() };
};
const jsonSchema = { type: 'json_schema', json_schema: { name: 'v', strict: true, schema } };

test('gemini: seed refused with an array-wrapped body; without it, answered', async () => {
  const refused = await ask({ model: 'sim-gemini', seed: 1, response_format: jsonSchema });
  expect(refused.status).toBe(400);
  expect(JSON.parse(refused.text)[0].error.message).toBe(
    'Invalid JSON payload received. Unknown name "seed": Cannot find field.',
  );
  expect((await ask({ model: 'sim-gemini', response_format: jsonSchema })).status).toBe(200);
});

test('mistral: seed and max_completion_tokens are extra_forbidden (422)', async () => {
  const refused = await ask({ model: 'sim-mistral', seed: 1, max_completion_tokens: 5 });
  expect(refused.status).toBe(422);
  expect(JSON.parse(refused.text).message.detail.map((d: any) => [d.type, d.loc[1]])).toEqual([
    ['extra_forbidden', 'seed'],
    ['extra_forbidden', 'max_completion_tokens'],
  ]);
});

test('deepseek: json_schema unavailable; JSON mode answers the schema the prompt states', async () => {
  expect(JSON.parse((await ask({ model: 'sim-deepseek', response_format: jsonSchema })).text).error.message).toBe(
    'This response_format type is unavailable now',
  );
  const reply = await ask({
    model: 'sim-deepseek',
    response_format: { type: 'json_object' },
    messages: [
      { role: 'system', content: `Answer as JSON matching:\n${JSON.stringify(schema)}` },
      { role: 'user', content: 'grade it' },
    ],
  });
  expect(Object.keys(JSON.parse(JSON.parse(reply.text).choices[0].message.content))).toEqual(['score']);
});

test('refusal, truncation, quota, tool call, OpenRouter 200-with-error, FastAPI detail', async () => {
  expect(
    JSON.parse((await ask({ model: 'sim-refusal', response_format: jsonSchema })).text).choices[0].message,
  ).toMatchObject({ content: null, refusal: expect.any(String) });
  expect(JSON.parse((await ask({ model: 'sim-truncate' })).text).choices[0].finish_reason).toBe('length');
  const quota = await ask({ model: 'sim-quota' });
  expect([quota.status, JSON.parse(quota.text).error.code]).toEqual([429, 'insufficient_quota']);
  expect(JSON.parse((await ask({ model: 'sim-toolcall' })).text).choices[0].message.tool_calls[0].function.name).toBe(
    'get_price',
  );
  const first = await ask({ model: 'sim-openrouter-200error', messages: [{ role: 'user', content: 'once' }] });
  expect([first.status, JSON.parse(first.text).error.code]).toEqual([200, 502]);
  expect(
    JSON.parse((await ask({ model: 'sim-openrouter-200error', messages: [{ role: 'user', content: 'once' }] })).text)
      .choices,
  ).toHaveLength(1);
  expect(JSON.parse((await ask({ model: 'sim-fastapi-error' })).text).detail[0]).toMatchObject({
    loc: ['body', 'messages'],
    type: 'value_error',
  });
});

test('a plain model name is answered exactly as before', async () => {
  const reply = JSON.parse((await ask({ model: 'sim-thorough', seed: 1, max_completion_tokens: 9 })).text);
  expect(reply.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', refusal: null } });
  expect(reply).not.toHaveProperty('citations');
});
