import { openaiReasoningModel, type ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'openrouter',
  label: 'OpenRouter (openrouter.ai/api/v1)',
  transport: 'openai-chat',
  hosts: [/(^|\.)openrouter\.ai$/],
  seedParam: 'seed',
  seedHonoured: false,
  maxTokensParam: 'max_tokens',
  reasoningModel: openaiReasoningModel,
  // openrouter.ai docs, "Provider routing": parameters a routed provider does not support are dropped unless
  // `provider.require_parameters` is set — so the schema is not known to be enforced (set it through extraBody).
  responseFormat: 'json_schema',
  schemaEnforced: false,
  strict: true,
  // openrouter.ai docs, "Errors": "Otherwise, the returned HTTP response status will be 200 and any error occurred while
  // the LLM is producing the output will be emitted in the response body or as an SSE data event." — treated as a 5xx.
  errors:
    '{"error": {"code", "message", "metadata"}}; errors during generation as HTTP 200 with that body, or an SSE data: event; 402 when out of credits',
  notes: [
    'HTTP 200 with {"error": …} retried like a 5xx and recorded (OpenRouter docs, Errors)',
    '402 "insufficient credits" is quota, not retried',
    'response_format not enforced without provider.require_parameters (extraBody)',
  ],
  hooks: {
    // openrouter.ai docs, "Errors": an error during generation comes back with status 200 and `{"error": {"code",
    // "message"}}` in place of choices — the error it names (its code when that is an HTTP status, else a 5xx: the
    // upstream failed mid-answer, so another attempt may help).
    errorInReply(reply) {
      if (!reply.error || Array.isArray(reply.choices)) return null;
      const code = Number((reply.error as { code?: unknown }).code);
      return Number.isInteger(code) && code >= 400 && code < 600 ? code : 502;
    },
    // openrouter.ai docs, "Errors": 402 "Your account or API key has insufficient credits" (also the HTTP status's own
    // meaning, Payment Required, which openai-compatible.ts reads for every endpoint).
    classifyError: (error) => (error.status === 402 ? { kind: 'quota' } : null),
  },
};
