import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'ollama',
  label: "Ollama's OpenAI compatibility (localhost:11434/v1)",
  transport: 'openai-chat',
  hosts: [/^(localhost|127\.0\.0\.1|\[::1\]|::1):11434$/],
  // docs.ollama.com, "OpenAI compatibility": supported fields include seed, temperature, max_tokens and response_format.
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  responseFormat: 'json_schema',
  // Older Ollama versions take only JSON mode; the schema in the prompt costs little and keeps them working.
  schemaEnforced: false,
  strict: false,
  errors: '{"error": {"message", "type"}}',
  notes: ['R1-style <think> blocks stripped', 'the schema also in the prompt (older versions ignore json_schema)'],
};
