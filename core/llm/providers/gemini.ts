import type { ProviderProfile } from './profile';

export const gemini: ProviderProfile = {
  id: 'gemini',
  label: "Google Gemini's OpenAI compatibility layer (generativelanguage.googleapis.com/v1beta/openai)",
  transport: 'openai-chat',
  hosts: [/(^|\.)generativelanguage\.googleapis\.com$/],
  // ChatterUI issue #227 and mcpchecker PR #188: sending seed fails with `[{"error": {"code": 400, "message": "Invalid JSON
  // payload received. Unknown name \"seed\": Cannot find field."}}]` — an array-wrapped error body.
  seedParam: null,
  seedHonoured: false,
  maxTokensParam: 'max_tokens',
  // Google's "OpenAI compatibility" page: structured output through response_format json_schema.
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: 'array-wrapped: [{"error": {"code", "message", "status": "INVALID_ARGUMENT", "details"}}]',
  notes: ['no seed (Unknown name "seed": Cannot find field — ChatterUI #227, mcpchecker #188)', 'error bodies wrapped in an array'],
};
