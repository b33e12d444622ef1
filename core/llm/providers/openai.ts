import { openaiReasoningModel, type ProviderProfile } from './profile';

export const openai: ProviderProfile = {
  id: 'openai',
  label: 'OpenAI Chat Completions (api.openai.com)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.openai\.com$/],
  seedParam: 'seed',
  seedHonoured: true,
  // OpenAI API reference (chat): max_tokens is deprecated in favour of max_completion_tokens and "not compatible with
  // o-series models"; every current model accepts max_completion_tokens.
  maxTokensParam: 'max_completion_tokens',
  // OpenAI reasoning models: "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1)
  // value is supported." (vercel/ai issue #5609 quotes the same wording for the search-preview models).
  reasoningModel: openaiReasoningModel,
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '{"error": {"message", "type", "code", "param"}}; 429 with code insufficient_quota when out of credit',
  // OpenAI API reference, "Batch" (https://platform.openai.com/docs/api-reference/batch).
  batchApi: 'openai',
  notes: [
    'o1/o3/o4/gpt-5 families: temperature not sent, max_completion_tokens (OpenAI API reference, reasoning models)',
    '429 insufficient_quota is not retried: "You exceeded your current quota, please check your plan and billing details" (OpenAI error codes guide)',
    'structured-output refusals (message.refusal, content null) recorded as refusals (OpenAI structured outputs guide)',
  ],
};
