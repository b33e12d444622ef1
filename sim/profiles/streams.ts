import type { SimProfile } from './types';

/** Stream chunks in OpenAI's shape. */
function chunks(model: string, text: string, finish: string | null): string {
  const event = (delta: object, reason: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-sim-stream', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: reason }] })}\n\n`;
  return [
    event({ role: 'assistant', content: '' }, null),
    ...text.split(/(?<=\s)(?=\S)/).map((w) => event({ content: w }, null)),
    finish ? event({}, finish) : '',
  ].join('');
}

/** A stream cut off mid-answer: no finish_reason, no `[DONE]` (a dropped connection or proxy). */
export const streamCut: SimProfile = (body, ctx) =>
  body.stream ? { stream: chunks(body.model, ctx.plainAnswer(body).slice(0, 40), null) } : undefined;

/** A stream that ends with finish_reason "length" (the answer was cut at the token limit), then `[DONE]`. */
export const streamLength: SimProfile = (body, ctx) =>
  body.stream
    ? { stream: chunks(body.model, ctx.plainAnswer(body).slice(0, 40), 'length') + 'data: [DONE]\n\n' }
    : undefined;

/** A stream that reports an error part-way: an `event: error` carrying the provider's message. */
export const streamError: SimProfile = (body, ctx) =>
  body.stream
    ? {
        stream:
          chunks(body.model, ctx.plainAnswer(body).slice(0, 40), null) +
          `event: error\ndata: ${JSON.stringify({ error: { message: 'stream interrupted: upstream reset', type: 'server_error' } })}\n\n`,
      }
    : undefined;
