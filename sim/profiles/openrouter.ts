import type { SimProfile } from './types';

/**
 * OpenRouter: an error during generation comes back as HTTP 200 with `{"error": …}` (or as an SSE `data:` event)
 * (openrouter.ai docs, "Errors"). The first ask of each request fails so; asked again, it is answered.
 */
export const openrouter200error: SimProfile = (body, ctx) => {
  if (ctx.seenBefore(['openrouter', body.model, body.messages])) return undefined;
  const error = JSON.stringify({
    error: {
      code: 502,
      message: 'Provider returned error: upstream model overloaded',
      metadata: { provider_name: 'SimCloud' },
    },
  });
  return body.stream ? { stream: `: OPENROUTER PROCESSING\n\ndata: ${error}\n\n` } : { status: 200, body: error };
};
