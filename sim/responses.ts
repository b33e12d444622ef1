/**
 * The simulator's OpenAI Responses API (`POST /v1/responses`), as much of it as a judge asking for structured output
 * uses: `instructions`, `input` (a string or messages), `text.format` of type json_schema. Each request is answered by
 * the Chat Completions judge (chatAnswer: the same faults, rate limits, profiles and schema filler), so a harness written
 * for the Responses API, such as the LATTICE reference's scoring/batch.py, can be pointed at the simulator with
 * OPENAI_BASE_URL and compared with judgeflow on the same simulated judge (`judgeflow bench --only lattice-files`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { jsonAnswer, writeAnswer, type HttpAnswer } from './http';
import type { ChatContext } from './types';

type ChatAnswer = (body: any, ctx: ChatContext) => Promise<HttpAnswer>;
type AnsweredWithin = (
  options: ChatContext['options'],
  limiter: ChatContext['limiter'],
  answer: () => Promise<HttpAnswer>,
  entry: ChatContext['entry'],
) => Promise<HttpAnswer>;

/** The Responses request as the Chat Completions body the simulated judge answers. */
export function asChatBody(body: any): any {
  const text = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('')
        : '';
  const input =
    typeof body.input === 'string'
      ? [{ role: 'user', content: body.input }]
      : Array.isArray(body.input)
        ? body.input.map((m: any) => ({ role: String(m?.role ?? 'user'), content: text(m?.content) }))
        : [];
  const messages = [
    ...(typeof body.instructions === 'string' && body.instructions
      ? [{ role: 'system', content: body.instructions }]
      : []),
    ...input,
  ];
  const format = body.text?.format;
  const chat: any = { model: body.model, messages };
  if (format?.type === 'json_schema') {
    const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    chat.response_format = {
      type: 'json_schema',
      json_schema: { name: format.name, strict: format.strict, schema: oneEntryPerAgent(format.schema, user) },
    };
  }
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  return chat;
}

/**
 * The reference's answer schema asks for `results[]` with a free `agent` string; a judge following its prompt answers
 * once per `[Agent]` block under the name shown. The simulated judge is told so by an enum of those names, as long as
 * the array (the form its schema filler answers one entry per label, in order).
 */
function oneEntryPerAgent(schema: any, user: string): any {
  const names = [...user.matchAll(/^\[Agent\]\nname: ([^\n]*)\nanswer:/gm)].map((m) => m[1]);
  const agent = schema?.properties?.results?.items?.properties?.agent;
  if (!names.length || !agent || Array.isArray(agent.enum)) return schema;
  const results = schema.properties.results;
  return {
    ...schema,
    properties: {
      ...schema.properties,
      results: {
        ...results,
        minItems: names.length,
        maxItems: names.length,
        items: { ...results.items, properties: { ...results.items.properties, agent: { ...agent, enum: names } } },
      },
    },
  };
}

/** A chat completion's answer as a Responses API answer (an error stays as it is: both APIs share the error shape). */
export function asResponsesAnswer(answer: HttpAnswer, model: string): HttpAnswer {
  if (answer.status >= 400 || answer.stallMs !== undefined) return answer;
  let completion: any;
  try {
    completion = JSON.parse(answer.body);
  } catch {
    return answer; // a malformed body (a fault) is passed on as the fault it is
  }
  const content = String(completion.choices?.[0]?.message?.content ?? '');
  const id = createHash('sha256').update(answer.body).digest('hex').slice(0, 24);
  const usage = completion.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return jsonAnswer(
    answer.status,
    {
      id: `resp_sim_${id}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model,
      output: [
        {
          type: 'message',
          id: `msg_sim_${id}`,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: content, annotations: [] }],
        },
      ],
      usage: {
        input_tokens: usage.prompt_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.total_tokens,
      },
    },
    Object.fromEntries(Object.entries(answer.headers).filter(([k]) => k.toLowerCase() !== 'content-type')),
  );
}

/** POST /v1/responses: received and logged like a chat request, answered by the chat judge, returned in the Responses shape. */
export async function responsesApi(
  req: IncomingMessage,
  res: ServerResponse,
  received: { body: any; ctx: ChatContext },
  chatAnswer: ChatAnswer,
  /** The answer after the simulator's latency (server.ts answeredWithin). */
  answeredWithin: AnsweredWithin,
): Promise<void> {
  const { body, ctx } = received;
  if (
    body === undefined ||
    typeof body.model !== 'string' ||
    (typeof body.input !== 'string' && !Array.isArray(body.input))
  ) {
    return writeAnswer(
      res,
      jsonAnswer(400, {
        error: {
          message: 'Request must include a string "model" and an "input" (a string or a list of messages).',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request',
        },
      }),
    );
  }
  const refused = ctx.limiter?.admit(Date.now());
  if (refused) {
    ctx.entry.rateLimited = true;
    const headers = {
      ...ctx.limiter!.headers(Date.now()),
      'retry-after': String(Math.ceil(refused.retryAfterMs / 1000)),
    };
    return writeAnswer(
      res,
      jsonAnswer(
        429,
        {
          error: {
            message: 'Rate limit reached for requests (simulated).',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
        headers,
      ),
    );
  }
  const answer = await answeredWithin(
    ctx.options,
    ctx.limiter,
    async () => asResponsesAnswer(await chatAnswer(asChatBody(body), ctx), body.model),
    ctx.entry,
  );
  res.once('finish', () => (ctx.entry.answeredAt = Date.now()));
  writeAnswer(res, answer);
}
