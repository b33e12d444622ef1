import type { SimProfile } from './types';

/**
 * Gemini's OpenAI layer: `seed` (and frequency_penalty) are unknown fields, refused with an array-wrapped error body
 * (ChatterUI issue #227); everything else answered normally.
 */
export const gemini: SimProfile = (body) => {
  const unknown = ['seed', 'frequency_penalty'].filter((name) => name in body);
  if (!unknown.length) return undefined;
  const message = unknown
    .map((name) => `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`)
    .join('\n');
  return {
    status: 400,
    body: JSON.stringify([
      {
        error: {
          code: 400,
          message,
          status: 'INVALID_ARGUMENT',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.BadRequest',
              fieldViolations: unknown.map((name) => ({
                description: `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`,
              })),
            },
          ],
        },
      },
    ]),
  };
};
