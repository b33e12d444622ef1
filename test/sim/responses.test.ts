import { simServersForFile } from '../support/sims';

/**
 * The simulator's /v1/responses: the LATTICE reference harness's judge request (scoring/batch.py: `instructions`, one
 * user message in its [Task]/[Category]/[Query]/[Agent Answers] layout, `text.format` json_schema with a free `agent`
 * string) is answered in the Responses shape, one result per [Agent] block under the name shown.
 */
const sim = simServersForFile({ judge: { latencyMs: 0 } });

const dimension = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 0, maximum: 10 }, reason: { type: 'string' } },
  required: ['score', 'reason'],
  additionalProperties: false,
};
const dims = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'];
const schema = {
  type: 'object',
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          agent: { type: 'string' },
          dimensions: {
            type: 'object',
            properties: Object.fromEntries(dims.map((d) => [d, dimension])),
            required: dims,
            additionalProperties: false,
          },
        },
        required: ['agent', 'dimensions'],
        additionalProperties: false,
      },
      minItems: 1,
    },
  },
  required: ['results'],
  additionalProperties: false,
};
const agents = [
  [
    'sorin',
    'Aave liquidates a position once its health factor falls below 1: collateral value times the liquidation threshold, over the debt. A liquidator repays part of the debt and takes collateral at a bonus.',
  ],
  ['elsa', 'I cannot help with that.'],
  ['newcomer', 'Liquidation thresholds differ per asset; watch the health factor.'],
];
const user = [
  '[Task]\n<<<\nT1 Protocol Mechanism Interpretation\n>>>',
  '[Category]\n<<<\nC1 Basic\n>>>',
  '[Query]\n<<<\nHow does Aave decide when a loan is liquidated?\n>>>',
  `[Agent Answers]\n<<<\n${agents.map(([name, answer]) => `[Agent]\nname: ${name}\nanswer:\n<<<\n${answer}\n>>>`).join('\n\n')}\n>>>`,
].join('\n\n');

async function post(body: unknown) {
  const res = await fetch(`${sim.judge.url}/responses`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-sim', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('the reference judge request: a Responses answer whose output_text holds one result per agent, named as shown, in the schema', async () => {
  const res = await post({
    model: 'sim-judge',
    instructions: 'Score each agent on D1–D6.',
    input: [{ role: 'user', content: user }],
    text: { format: { type: 'json_schema', name: 'scoring_result', strict: true, schema } },
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    object: 'response',
    status: 'completed',
    model: 'sim-judge',
    usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
  });
  expect(res.body.usage.input_tokens).toBeGreaterThan(50);
  const [message] = res.body.output;
  expect(message).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] });
  const verdict = JSON.parse(message.content[0].text);
  expect(verdict.results.map((r: { agent: string }) => r.agent)).toEqual(['sorin', 'elsa', 'newcomer']);
  for (const r of verdict.results) {
    expect(Object.keys(r.dimensions).sort()).toEqual(dims);
    for (const d of dims) expect(r.dimensions[d].score).toEqual(expect.any(Number));
  }
  // Scored by each answer's text, as the chat judge scores it: the thorough answer above the refusal.
  const mean = (r: { dimensions: Record<string, { score: number }> }) =>
    dims.reduce((s, d) => s + r.dimensions[d].score, 0) / dims.length;
  expect(mean(verdict.results[0])).toBeGreaterThan(mean(verdict.results[1]));
  // Logged like a chat request, with the answer it gave.
  const logged = sim.judge.requests.at(-1)!;
  expect(logged.path).toBe('/v1/responses');
  expect(JSON.parse(logged.content!)).toEqual(verdict);
});

test("a request without input is a 400 invalid_request_error in OpenAI's error shape", async () => {
  const res = await post({ model: 'sim-judge', instructions: 'x' });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
});
