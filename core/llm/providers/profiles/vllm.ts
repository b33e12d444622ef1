import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'vllm',
  label: "vLLM's OpenAI-compatible server (self-hosted; name it with provider: vllm)",
  transport: 'openai-chat',
  hosts: [],
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  // vllm issue #16880: guided decoding (xgrammar) rejects some JSON Schema keywords with a 400; json_schema is
  // otherwise enforced by guided decoding, and strict is accepted.
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '{"object": "error", "message", "type", "code"} or FastAPI {"detail": …}',
  notes: [
    'guided decoding enforces json_schema (some keywords rejected — vllm #16880)',
    'R1-style <think> blocks stripped',
  ],
};
