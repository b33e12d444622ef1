import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'deepseek',
  label: 'DeepSeek (api.deepseek.com)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.deepseek\.com$/],
  seedParam: null,
  seedHonoured: false,
  maxTokensParam: 'max_tokens',
  // llm-exe issue #662: json_schema is rejected with `{"error":{"message":"This response_format type is unavailable
  // now",…}}`; DeepSeek API docs, "JSON Output": only `{"type": "json_object"}`, and the prompt must contain the word
  // "json" and an example of the wanted format — so the schema goes into the prompt.
  responseFormat: 'json_object',
  schemaEnforced: false,
  strict: false,
  errors: '{"error": {"message", "type", "code"}}',
  notes: [
    'JSON mode only, the schema in the prompt ("This response_format type is unavailable now" — llm-exe #662; DeepSeek docs, JSON Output)',
    'deepseek-reasoner: <think> blocks stripped',
  ],
  hooks: {
    // llm-exe issue #662 (LiteLLM PR #31466): json_schema, asked of a DeepSeek endpoint configured with it anyway, is
    // refused as "This response_format type is unavailable now": response_format steps down to JSON mode.
    refusedParameter: (text) => (/response_format type is unavailable/i.test(text) ? 'response_format' : null),
  },
};
