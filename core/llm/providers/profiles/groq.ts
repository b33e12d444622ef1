import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'groq',
  label: 'Groq (api.groq.com/openai/v1)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.groq\.com$/],
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_completion_tokens',
  // console.groq.com docs, "Structured outputs": strict mode "currently only available on select models"; best-effort
  // mode elsewhere, which can fail a request with a 400 `json_validate_failed` — re-asked like an invalid answer.
  responseFormat: 'json_schema',
  schemaEnforced: false,
  strict: false,
  errors: '{"error": {"message", "type", "code"}}; 400 code json_validate_failed when best-effort JSON fails',
  // console.groq.com/docs/batch: the OpenAI protocol — JSONL lines {custom_id, method: "POST", url: "/v1/chat/completions",
  // body} uploaded with purpose "batch" to /openai/v1/files, then /openai/v1/batches with completion_window.
  batchApi: 'openai',
  notes: [
    'best-effort json_schema (strict: false), the schema also in the prompt',
    '400 json_validate_failed re-asked like an invalid answer (Groq docs, Structured outputs)',
  ],
  hooks: {
    // console.groq.com docs, "Structured outputs": best-effort JSON mode fails the request itself with a 400 whose code
    // is json_validate_failed when the model's JSON does not validate — the model's fault, so re-asked like an invalid
    // answer, not failed like a bad request.
    classifyError: (error) =>
      error.status === 400 && error.codes.includes('json_validate_failed')
        ? {
            kind: 'invalid_answer',
            problem: `the provider's JSON validation failed (json_validate_failed): ${error.message ?? error.body}`,
          }
        : null,
  },
};
