import { openaiReasoningModel, type ProviderProfile } from '../profile';

/** Any other OpenAI-compatible endpoint (the default when the host is not recognised): assume little, read everything. */
export const profile: ProviderProfile = {
  id: 'openai-compatible',
  label: 'any other OpenAI-compatible endpoint (the default for an unknown host)',
  transport: 'openai-chat',
  hosts: [],
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  reasoningModel: openaiReasoningModel,
  responseFormat: 'json_schema',
  // Anthropic's OpenAI SDK compatibility layer documents response_format as ignored, many local servers do the same.
  schemaEnforced: false,
  strict: true,
  errors: 'any: {"error": …}, [{"error": …}], {"detail": …}, {"message": …}',
  // An unknown host (a gateway, a local server, judgeflow's simulator at 127.0.0.1) is taken to serve OpenAI's Batch API
  // when batch judging is asked for: tests run against the simulator's; an endpoint without one answers 404 at submit.
  batchApi: 'openai',
  notes: [
    'the schema also in the prompt; answers extracted from prose, fences, <think> blocks',
    'a 400 naming an unsupported parameter or value drops it for the rest of the run, then asks again',
  ],
  hooks: {
    // Wordings no one provider owns: HTTP 402 is Payment Required by its definition (RFC 9110); billing and spend codes
    // and "insufficient credits/balance" on a 429 are how gateways and resellers say an account ran dry.
    classifyError: (error) =>
      error.status === 402 ||
      error.codes.some((c) =>
        /insufficient_quota|credit_balance_exhausted|spend_limit_exceeded|usage_limit_exceeded|billing/i.test(c),
      ) ||
      (error.status === 429 && /insufficient (credits|balance|quota)|out of credits/i.test(error.message ?? ''))
        ? { kind: 'quota' }
        : null,
  },
};
