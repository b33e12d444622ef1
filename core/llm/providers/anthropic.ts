import type { ProviderProfile } from './profile';

export const anthropic: ProviderProfile = {
  id: 'anthropic',
  label: "Anthropic's native Messages API (api.anthropic.com/v1/messages)",
  // The transport is core/llm/providers/anthropicMessages.ts (x-api-key and anthropic-version headers, max_tokens required,
  // the system prompt apart, structured output through the JSON-schema output format or a forced tool call).
  transport: 'anthropic-messages',
  hosts: [/(^|\.)api\.anthropic\.com$/],
  // Anthropic docs, "OpenAI SDK compatibility": `seed` and `response_format` are ignored; the Messages API has no seed.
  seedParam: null,
  seedHonoured: false,
  maxTokensParam: 'max_tokens',
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '{"type": "error", "error": {"type", "message"}}',
  // Anthropic API reference, "Message Batches" (https://platform.claude.com/docs/en/api/creating-message-batches).
  batchApi: 'anthropic',
  notes: ['Messages API: non-empty alternating turns, max_tokens required (Anthropic API reference, Messages)', 'no seed: repeated samples at temperature 0 are near-identical'],
};
