import type { SimProfile } from './types';

/**
 * Structured-output refusals (OpenAI structured outputs guide): `content: null` with `message.refusal`. The first ask
 * of a judgment is refused; a re-ask that says why it is asked again is answered.
 */
export const refusal: SimProfile = (body, ctx) => {
  if (!body.response_format) return undefined;
  const text = (body.messages ?? []).map((m: any) => (typeof m?.content === 'string' ? m.content : '')).join('\n');
  if (/answer was invalid: refused/i.test(text)) return undefined;
  return { message: { content: null, refusal: "I'm sorry, I cannot assist with that request." } };
};
