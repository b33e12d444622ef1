import { openaiError, type SimProfile } from './types';

/**
 * Groq's best-effort JSON mode: the first ask of each request fails with a 400 json_validate_failed
 * (console.groq.com docs, "Structured outputs"); asked again, it is answered.
 */
export const groqJsonfail: SimProfile = (body, ctx) => {
  if (!body.response_format || ctx.seenBefore(['groq', body.model, body.messages, body.seed])) return undefined;
  return openaiError(400, 'Failed to generate JSON. Please adjust your prompt. See \'failed_generation\' for more details.', 'json_validate_failed');
};
