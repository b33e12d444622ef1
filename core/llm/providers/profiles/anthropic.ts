import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
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
  notes: [
    'Messages API: non-empty alternating turns, max_tokens required (Anthropic API reference, Messages)',
    'no seed: repeated samples at temperature 0 are near-identical',
  ],
  hooks: {
    // Anthropic answers an account out of credit with a 400 invalid_request_error, the type it uses for malformed
    // requests, so only the message tells it apart: "Your credit balance is too low to access the Anthropic API…"
    // (anthropics/claude-code#4684 and #66314, anthropics/claude-quickstarts#229). A spend limit the organisation or
    // workspace set is a 400 too, "You have reached your specified (workspace) API usage limits…" (Anthropic API docs,
    // "Errors"); the API's 402 type is `billing_error`.
    classifyError: (error) =>
      error.codes.includes('billing_error') ||
      (error.status === 400 &&
        /credit balance is too low|reached your specified (workspace )?API usage limits/i.test(error.message ?? ''))
        ? { kind: 'quota' }
        : null,
  },
};
