import { openaiReasoningModel, type ProviderProfile } from './profile';

/** Any other OpenAI-compatible endpoint (the default when the host is not recognised): assume little, read everything. */
export const openaiCompatible: ProviderProfile = {
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
  batchApi: false,
  notes: [
    'the schema also in the prompt; answers extracted from prose, fences, <think> blocks',
    'a 400 naming an unsupported parameter or value drops it for the rest of the run, then asks again',
  ],
};
