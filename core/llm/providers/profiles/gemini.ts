import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
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
  notes: [
    'no seed (Unknown name "seed": Cannot find field — ChatterUI #227, mcpchecker #188)',
    'error bodies wrapped in an array',
  ],
  hooks: {
    // ChatterUI issue #227: a field the layer does not know is refused as `Invalid JSON payload received. Unknown name
    // "seed": Cannot find field.` (the quotes escaped when the message is read from the raw body).
    refusedParameter(text, optional) {
      const named = text.match(/Unknown name \\*"(\w+)\\*"[^.]*Cannot find field/);
      return named && optional.includes(named[1]) ? named[1] : null;
    },
  },
};
