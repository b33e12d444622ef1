import OpenAI from 'openai';
import { z } from 'zod';
import { wordCount } from '../../core/stats/lengthBias';
import { answerForSchema, defaultCopilotAnswer, startSimServer, type SimServer } from '../../sim/server';
import { parseSimArgs, runSimCli } from '../../sim/main';

const question = 'Should I stake my ETH on Lido or Rocket Pool given the slashing risk?';
const ask = (content: string) => [{ role: 'user' as const, content }];

/** A judge-style schema exercising $defs/$ref, enum, const, anyOf, numbers, booleans and a ranking. */
const labels = ['A', 'B', 'C', 'D'];
const judgeSchema = {
  type: 'object',
  $defs: {
    Dim: {
      type: 'object',
      properties: { score: { type: 'integer', minimum: 1, maximum: 10 }, rationale: { type: 'string' } },
      required: ['score', 'rationale'],
      additionalProperties: false,
    },
  },
  properties: {
    accuracy: { $ref: '#/$defs/Dim' },
    depth: { $ref: '#/$defs/Dim' },
    verdict: { type: 'string', enum: ['pass', 'fail'] },
    protocol: { const: 'lattice' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    safe: { type: 'boolean' },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    ranking: { type: 'array', items: { type: 'string', enum: labels }, minItems: 4, maxItems: 4 },
  },
  required: ['accuracy', 'depth', 'verdict', 'protocol', 'confidence', 'safe', 'note', 'ranking'],
  additionalProperties: false,
};
const dim = z.object({ score: z.number().int().min(1).max(10), rationale: z.string().min(1) }).strict();
const judgeZod = z
  .object({
    accuracy: dim,
    depth: dim,
    verdict: z.enum(['pass', 'fail']),
    protocol: z.literal('lattice'),
    confidence: z.number().min(0).max(1),
    safe: z.boolean(),
    note: z.string().nullable(),
    ranking: z.array(z.enum(['A', 'B', 'C', 'D'])).length(4),
  })
  .strict();

const responseFormat = {
  type: 'json_schema' as const,
  json_schema: { name: 'verdict', strict: true, schema: judgeSchema },
};

function client(sim: SimServer, maxRetries = 0): OpenAI {
  return new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries });
}

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected an APIError');
}

describe('sim server', () => {
  let sim: SimServer;
  let openai: OpenAI;
  beforeAll(async () => {
    sim = await startSimServer();
    openai = client(sim);
  });
  afterAll(() => sim.close());

  test('plain completion has the OpenAI shape and mentions the question', async () => {
    const completion = await openai.chat.completions.create({ model: 'sim-copilot', messages: ask(question) });
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'sim-copilot',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant' } }],
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(typeof completion.created).toBe('number');
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    const content = completion.choices[0]!.message.content!;
    expect(content).toContain('ETH');
    expect(content).toContain('Lido');
    expect(content).toBe(defaultCopilotAnswer('sim-copilot', ask(question)));
  });

  test('copilot style depends on the model name', async () => {
    const answer = async (model: string) =>
      (await openai.chat.completions.create({ model, messages: ask(question) })).choices[0]!.message.content!;
    const [terse, thorough, refuser] = await Promise.all([
      answer('sim-terse'),
      answer('sim-thorough'),
      answer('sim-refuser'),
    ]);
    expect(terse.split(/[.!?](\s|$)/).filter((s) => s.trim()).length).toBeLessThanOrEqual(2);
    expect(thorough).toMatch(/^- /m);
    expect(thorough).toMatch(/risk/i);
    expect(thorough).toMatch(/\d+%/);
    expect(thorough.length).toBeGreaterThan(terse.length * 3);
    expect(refuser).toMatch(/can't provide/);
    const other = await openai.chat.completions.create({
      model: 'sim-terse',
      messages: ask('What is the outlook for SOL memecoins?'),
    });
    expect(other.choices[0]!.message.content).toContain('SOL');
    expect(other.choices[0]!.message.content).not.toBe(terse);
  });

  test('streaming sends chat.completion.chunk events that join to the full answer', async () => {
    const stream = await openai.chat.completions.create({
      model: 'sim-thorough',
      messages: ask(question),
      stream: true,
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      pieces.push(chunk.choices[0]?.delta?.content ?? '');
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.filter(Boolean).length).toBeGreaterThan(20); // word by word
    expect(pieces.join('')).toBe(defaultCopilotAnswer('sim-thorough', ask(question)));
    expect(finish).toBe('stop');
  });

  test('json_schema answers validate against an equivalent zod schema', async () => {
    const completion = await openai.chat.completions.create({
      model: 'sim-judge',
      messages: ask('grade this'),
      response_format: responseFormat,
    });
    const parsed = judgeZod.parse(JSON.parse(completion.choices[0]!.message.content!));
    expect(parsed.protocol).toBe('lattice');
  });

  test('fixed-length enum arrays are permutations (rankings), and they vary by input', () => {
    const rankings = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const answer = judgeZod.parse(answerForSchema(judgeSchema, `seed-${i}`));
      expect([...answer.ranking].sort()).toEqual(labels);
      rankings.add(answer.ranking.join(''));
    }
    expect(rankings.size).toBeGreaterThan(5);
  });

  test('answerForSchema handles definitions, oneOf, defaults and array lengths', () => {
    const schema = {
      definitions: { Item: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: '#/definitions/Item' } },
        three: { type: 'array', items: { type: 'string' }, minItems: 3 },
        choice: { oneOf: [{ type: 'integer', minimum: 5, maximum: 5 }, { type: 'string' }] },
      },
    };
    const value = answerForSchema(schema, 'x') as any;
    expect(value.items).toHaveLength(1);
    expect(value.items[0].n).toBeGreaterThanOrEqual(0);
    expect(value.items[0].n).toBeLessThanOrEqual(10);
    expect(value.three).toHaveLength(3);
    expect(value.choice).toBe(5);
  });

  test('answers are deterministic and depend on the messages', async () => {
    const judge = (content: string) =>
      openai.chat.completions
        .create({ model: 'sim-judge', messages: ask(content), response_format: responseFormat })
        .then((c) => c.choices[0]!.message.content);
    expect(await judge('same')).toBe(await judge('same'));
    const variants = new Set(await Promise.all(['a', 'b', 'c', 'd', 'e'].map(judge)));
    expect(variants.size).toBeGreaterThan(1);
    expect(answerForSchema(judgeSchema, 'k')).toEqual(answerForSchema(judgeSchema, 'k'));
    expect(defaultCopilotAnswer('m', ask('q about BTC'))).toBe(defaultCopilotAnswer('m', ask('q about BTC')));
  });

  test('judge scores favour longer, structured responses', async () => {
    const schema = {
      type: 'object',
      properties: { accuracy: judgeSchema.$defs.Dim, depth: judgeSchema.$defs.Dim },
      required: ['accuracy', 'depth'],
    };
    const meanScore = async (model: string) => {
      let total = 0;
      for (let i = 0; i < 8; i++) {
        const q = `${question} (variant ${i})`;
        const prompt = `User query:\n<<<\n${q}\n>>>\n\nCopilot response:\n<<<\n${defaultCopilotAnswer(model, ask(q))}\n>>>`;
        const c = await openai.chat.completions.create({
          model: 'sim-judge',
          messages: ask(prompt),
          response_format: { type: 'json_schema', json_schema: { name: 's', schema } },
        });
        const v = JSON.parse(c.choices[0]!.message.content!);
        total += v.accuracy.score + v.depth.score;
      }
      return total / 16;
    };
    const [refuser, terse, thorough] = [
      await meanScore('sim-refuser'),
      await meanScore('sim-terse'),
      await meanScore('sim-thorough'),
    ];
    expect(thorough).toBeGreaterThan(terse + 2);
    expect(terse).toBeGreaterThanOrEqual(refuser);
  });

  test('GET /v1/models lists simulated models', async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toContain('sim-judge');
  });

  test('fault-429 answers 429 with Retry-After visible on APIError.headers', async () => {
    const error = await apiError(
      openai.chat.completions.create({ model: 'fault-429:sim-copilot', messages: ask('hi') }),
    );
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.headers?.get('retry-after')).toBe('1');
    expect((error.error as any)?.code).toBe('rate_limit_exceeded');
  });

  test('fault-500 answers 500 in the OpenAI error shape', async () => {
    const error = await apiError(
      openai.chat.completions.create({ model: 'fault-500:sim-copilot', messages: ask('hi') }),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.error).toMatchObject({ type: 'server_error', message: expect.any(String) });
  });

  test('fault-malformed answers 200 with a body that is not JSON', async () => {
    // Matched by name: under jest the JSON SyntaxError comes from another realm, so instanceof fails.
    await expect(
      openai.chat.completions.create({ model: 'fault-malformed:sim-copilot', messages: ask('hi') }),
    ).rejects.toMatchObject({ name: 'SyntaxError' });
    const res = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fault-malformed:x', messages: ask('hi') }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
  });

  test('fault-badjson answers a valid completion whose content is not JSON', async () => {
    const completion = await openai.chat.completions.create({
      model: 'fault-badjson:sim-judge',
      messages: ask('grade'),
      response_format: responseFormat,
    });
    expect(() => JSON.parse(completion.choices[0]!.message.content!)).toThrow();
  });

  test('fault-once-429 fails only the first request for given content, then behaves as the inner model', async () => {
    const request = { model: 'fault-once-429:sim-terse', messages: ask('once about BTC') };
    expect((await apiError(openai.chat.completions.create(request))).status).toBe(429);
    const ok = await openai.chat.completions.create(request);
    expect(ok.choices[0]!.message.content).toBe(defaultCopilotAnswer('sim-terse', request.messages));
    expect(
      (await apiError(openai.chat.completions.create({ ...request, messages: ask('once about ETH') }))).status,
    ).toBe(429);
    // With SDK retries on, the Retry-After is honoured and the retry succeeds.
    const retrying = await client(sim, 1).chat.completions.create({ ...request, messages: ask('once about SOL') });
    expect(retrying.choices[0]!.message.content).toContain('SOL');
  });

  test('unknown path → 404, bad JSON → 400, both in the OpenAI error shape', async () => {
    const missing = await fetch(`${sim.url}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      error: { message: expect.any(String), type: 'invalid_request_error', code: 'unknown_url' },
    });
    const bad = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });
  });

  test('request log records chat requests, in memory and at GET /_sim/requests', async () => {
    const before = sim.requests.length;
    await openai.chat.completions.create(
      { model: 'sim-log', messages: ask('log me') },
      { headers: { 'x-trace': 't1' } },
    );
    const entry = sim.requests[before]!;
    expect(entry).toMatchObject({ path: '/v1/chat/completions', model: 'sim-log', body: { messages: ask('log me') } });
    expect(entry.headers['x-trace']).toBe('t1');
    expect(entry.headers.authorization).toBe('Bearer sim');
    const remote = (await (await fetch(sim.url.replace('/v1', '/_sim/requests'))).json()) as unknown[];
    expect(remote).toHaveLength(sim.requests.length);
    expect(remote[before]).toMatchObject({ model: 'sim-log' });
  });
});

describe('sim server options', () => {
  const servers: SimServer[] = [];
  const start = async (...args: Parameters<typeof startSimServer>) => {
    const s = await startSimServer(...args);
    servers.push(s);
    return s;
  };
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  test('judge profiles over HTTP: noise varies call to call, leniency shifts, favour rewards the matching text', async () => {
    const server = await start({
      judges: {
        noisy: { noise: 2, seed: 1 },
        lenient: { leniency: 3 },
        fan: { favour: { contains: 'MAGIC', bonus: 4 } },
      },
    });
    const schema = {
      type: 'object',
      properties: {
        D1: {
          type: 'object',
          properties: { score: { type: 'integer', minimum: 0, maximum: 10 }, rationale: { type: 'string' } },
          required: ['score', 'rationale'],
        },
      },
      required: ['D1'],
    };
    const score = async (model: string, text: string) => {
      const r = await client(server).chat.completions.create({
        model,
        messages: ask(`Copilot response:\n<<<\n${text}\n>>>`),
        response_format: { type: 'json_schema', json_schema: { name: 'j', schema } },
      });
      return JSON.parse(r.choices[0].message.content!).D1.score as number;
    };
    const plain = 'A short answer.';
    const steady = await Promise.all([1, 2, 3, 4, 5, 6].map(() => score('steady', plain)));
    expect(new Set(steady).size).toBe(1);
    const noisy = await Promise.all([1, 2, 3, 4, 5, 6].map(() => score('noisy', plain)));
    expect(new Set(noisy).size).toBeGreaterThan(1);
    expect(await score('lenient', plain)).toBe(Math.min(10, steady[0] + 3));
    expect(await score('fan', `${plain} MAGIC`)).toBeGreaterThan(await score('steady', `${plain} MAGIC`));
    expect(await score('fan', plain)).toBe(steady[0]);

    // setJudgeProfile: from the next request on the judge is harsher on the matching text, and can be reset.
    const magic = await score('steady', `${plain} MAGIC`);
    server.setJudgeProfile('steady', { favour: { contains: 'MAGIC', bonus: -2 } });
    expect(await score('steady', `${plain} MAGIC`)).toBe(Math.max(0, magic - 2));
    expect(await score('steady', plain)).toBe(steady[0]);
    server.setJudgeProfile('steady', undefined);
    expect(await score('steady', `${plain} MAGIC`)).toBe(magic);
  });

  test('a custom handler can answer, send raw bodies, or fall back to the default', async () => {
    const sim = await start({
      handler: (body, { requestIndex }) => {
        if (body.model === 'custom') return `custom #${requestIndex}`;
        if (body.model === 'raw')
          return {
            status: 503,
            headers: { 'x-sim': 'yes' },
            body: '{"error":{"message":"down","type":"server_error","code":null}}',
          };
        return undefined;
      },
    });
    const c = client(sim);
    expect((await c.chat.completions.create({ model: 'custom', messages: ask('x') })).choices[0]!.message.content).toBe(
      'custom #0',
    );
    const error = await apiError(c.chat.completions.create({ model: 'raw', messages: ask('x') }));
    expect(error.status).toBe(503);
    expect(error.headers?.get('x-sim')).toBe('yes');
    expect(
      (await c.chat.completions.create({ model: 'sim-terse', messages: ask('fallback') })).choices[0]!.message.content,
    ).toBe(defaultCopilotAnswer('sim-terse', ask('fallback')));
  });

  test('fault rates are deterministic by request index and seed', async () => {
    const outcomes = async (seed: number) => {
      const sim = await start({ faults: { rate429: 0.25, rate500: 0.25, retryAfterSeconds: 7, seed } });
      const c = client(sim);
      const out: Array<number | string> = [];
      for (let i = 0; i < 40; i++) {
        try {
          await c.chat.completions.create({ model: 'sim-terse', messages: ask(`q${i}`) });
          out.push('ok');
        } catch (error) {
          if (!(error instanceof OpenAI.APIError)) throw error;
          out.push(error.status ?? 0);
          if (error.status === 429) expect(error.headers?.get('retry-after')).toBe('7');
        }
      }
      return out;
    };
    const first = await outcomes(1);
    expect(await outcomes(1)).toEqual(first);
    expect(await outcomes(2)).not.toEqual(first);
    const count = (v: number | string) => first.filter((x) => x === v).length;
    expect(count(429)).toBeGreaterThan(3);
    expect(count(500)).toBeGreaterThan(3);
    expect(count('ok')).toBeGreaterThan(10);
  });

  test('rateMalformed 1 makes every reply unparseable; latency delays replies', async () => {
    const broken = await start({ faults: { rateMalformed: 1 } });
    await expect(client(broken).chat.completions.create({ model: 'm', messages: ask('x') })).rejects.toMatchObject({
      name: 'SyntaxError',
    });
    const slow = await start({ latencyMs: 150 });
    const t0 = Date.now();
    await client(slow).chat.completions.create({ model: 'm', messages: ask('x') });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });
});

describe('sim CLI', () => {
  test('parses flags in both --flag value and --flag=value forms', () => {
    expect(
      parseSimArgs([
        '--port',
        '9001',
        '--latency-ms=20',
        '--rate-429',
        '0.1',
        '--rate-500=0.2',
        '--rate-malformed',
        '0.05',
      ]),
    ).toEqual({
      options: { port: 9001, latencyMs: 20, faults: { rate429: 0.1, rate500: 0.2, rateMalformed: 0.05 } },
      quiet: false,
      help: false,
    });
    expect(() => parseSimArgs(['--rate-429', '2'])).toThrow(/between 0 and 1/);
    expect(() => parseSimArgs(['--bogus'])).toThrow(/unknown option/);
    expect(
      parseSimArgs(['--judge', 'noisy:noise=1.5,seed=3', '--judge=fan:favour=Here is a,bonus=2,leniency=-1']).options
        .judges,
    ).toEqual({
      noisy: { noise: 1.5, seed: 3 },
      fan: { favour: { contains: 'Here is a', bonus: 2 }, leniency: -1 },
    });
    expect(() => parseSimArgs(['--judge', 'noisy'])).toThrow(/MODEL:SPEC/);
    expect(() => parseSimArgs(['--judge', 'x:loud=2'])).toThrow(/unknown setting "loud"/);
  });

  test('--help prints usage and exits 0; bad flags exit 2', async () => {
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await runSimCli(['--help'])).toBe(0);
      expect(String(out.mock.calls[0]?.[0])).toContain('judgeflow sim');
      expect(await runSimCli(['--port', 'x'])).toBe(2);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });
});

describe('sim usage counts', () => {
  test('wordCount counts words as text.split(/\\s+/).filter(Boolean) does, Unicode spaces included', () => {
    const texts = [
      '',
      '   ',
      'one',
      ' two  words ',
      'tabs\tand\nnew\r\nlines\u000bvt\u000cff',
      'no\u00a0break\u2003em\u3000ideographic\u2028line\ufeffbom\u1680ogham',
      'émojis 🚀 and ü-umlauts, punctuation: yes!',
      'x'.repeat(50) + ' \n\n ' + 'y',
    ];
    for (const text of texts) expect(wordCount(text)).toBe(text.split(/\s+/).filter(Boolean).length);
  });
});

describe('sim latency', () => {
  afterEach(() => jest.useRealTimers());

  test('a call takes the latency, not the latency plus the answer: twelve joint judge calls at once are built while it runs', async () => {
    const sim = await startSimServer({ latencyMs: 300 });
    // The sim's clock is jest's: the answers are looked at before the latency is over (comparing wall-clock delays with
    // the sim's CPU time flipped under load, where a timer fires tens of ms late).
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const answer = (k: number) =>
        Array.from(
          { length: 400 },
          (_, i) => `- Point ${i} on risk ${k}: liquidity ${i % 7}% because volatility.`,
        ).join('\n');
      const score = { type: 'object', properties: { score: { type: 'integer', minimum: 0, maximum: 10 } } };
      const body = (q: number) => ({
        model: 'sim-judge',
        messages: [
          { role: 'system', content: 'Judge each response. '.repeat(500) },
          {
            role: 'user',
            content: `Query ${q}\n${[1, 2, 3, 4].map((k) => `<response id="${k}">\n${answer(q * 10 + k)}\n</response>`).join('\n')}`,
          },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'joint',
            strict: true,
            schema: {
              type: 'object',
              properties: { results: { type: 'array', minItems: 4, maxItems: 4, items: score } },
            },
          },
        },
      });
      const replies = Promise.all(
        Array.from({ length: 12 }, (_, q) =>
          fetch(`${sim.url}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body(q)),
          }).then((r) => r.json()),
        ),
      );
      // All twelve arrive and are answered (entry.content) with no time passing on the sim's clock.
      const built = () => sim.requests.length === 12 && sim.requests.every((r) => r.content !== undefined);
      const giveUp = jest.getRealSystemTime() + 30_000;
      while (!built() && jest.getRealSystemTime() < giveUp) await new Promise((r) => setImmediate(r));
      expect(sim.requests.map((r) => r.content !== undefined)).toEqual(Array(12).fill(true));
      // …and sent only once the latency is over, all of them at its end.
      await jest.advanceTimersByTimeAsync(299);
      expect(sim.requests.filter((r) => r.answeredAt !== undefined)).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect((await replies).every((r) => r.choices[0].message.content)).toBe(true);
      await new Promise((r) => setImmediate(r)); // the last 'finish' events
      expect(sim.requests.map((r) => r.answeredAt! - r.at)).toEqual(Array(12).fill(300));
    } finally {
      jest.useRealTimers();
      await sim.close();
    }
  });
});
