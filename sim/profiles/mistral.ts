import type { SimProfile } from './types';

/** Mistral: `seed` and `max_completion_tokens` are extra inputs, refused with a 422 pydantic body (eca issue #231). */
export const mistral: SimProfile = (body) => {
  const extra = ['seed', 'max_completion_tokens'].filter((name) => name in body);
  if (!extra.length) return undefined;
  return {
    status: 422,
    body: JSON.stringify({
      object: 'error',
      message: {
        detail: extra.map((name) => ({
          type: 'extra_forbidden',
          loc: ['body', name],
          msg: 'Extra inputs are not permitted',
          input: body[name],
        })),
      },
      type: 'invalid_request_error',
      param: null,
      code: null,
    }),
  };
};
