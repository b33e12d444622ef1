import { openaiError, textOf, type SimProfile } from './types';

/**
 * Groq's best-effort JSON mode: the first ask of each request fails with a 400 json_validate_failed
 * (console.groq.com docs, "Structured outputs"); asked again (a re-ask says why), it is answered.
 */
export const groqJsonfail: SimProfile = (body) => {
  const reasked = (body.messages ?? []).some((m: any) => /answer was invalid/i.test(textOf(m?.content)));
  if (!body.response_format || reasked) return undefined;
  return openaiError(
    400,
    "Failed to generate JSON. Please adjust your prompt. See 'failed_generation' for more details.",
    'json_validate_failed',
  );
};
