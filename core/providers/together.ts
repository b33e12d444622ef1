import type { ProviderProfile } from './profile';

export const together: ProviderProfile = {
  id: 'together',
  label: 'Together AI (api.together.xyz/v1)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.together\.(xyz|ai)$/],
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  responseFormat: 'json_schema',
  schemaEnforced: false,
  strict: false,
  errors: '{"error": {"message", "type", "code"}}',
  batchApi: true,
  notes: ['R1-style models answer <think>…</think> first: stripped before parsing and judging', 'json_schema not enforced on every model: the schema also in the prompt'],
};
