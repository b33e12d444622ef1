/**
 * A provider profile: how one family of chat endpoints is asked and how it answers. Profiles are data (one small file per
 * provider in this folder); core/llm/client.ts and the `openai` copilot adapter build every request from them, and
 * `judgeflow providers` prints them.
 */
export const PROVIDER_IDS = [
  'openai',
  'anthropic',
  'gemini',
  'deepseek',
  'mistral',
  'groq',
  'openrouter',
  'together',
  'fireworks',
  'vllm',
  'ollama',
  'openai-compatible',
] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface ProviderProfile {
  id: ProviderId;
  /** What it is, for `judgeflow providers`. */
  label: string;
  /** The wire protocol: OpenAI Chat Completions, or Anthropic's native Messages API (core/llm/providers/anthropicMessages.ts). */
  transport: 'openai-chat' | 'anthropic-messages';
  /** Hosts that identify the provider when the config does not name it (`provider:` wins). */
  hosts: RegExp[];
  /** Under which name the sampling seed is sent; null: not sent (the endpoint rejects or ignores it). */
  seedParam: 'seed' | 'random_seed' | null;
  /** Whether a fixed seed at temperature 0 gives different samples a chance to be independent draws (false: near-identical). */
  seedHonoured: boolean;
  /** The token cap's name for ordinary models. */
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  /**
   * Reasoning models of this provider (OpenAI's o-series and gpt-5 family, also when routed): no temperature other than
   * the default, and the cap is max_completion_tokens.
   */
  reasoningModel?: (model: string) => boolean;
  /** What is sent as response_format when a JSON answer is wanted: a JSON schema, JSON mode, or nothing. */
  responseFormat: 'json_schema' | 'json_object' | 'none';
  /** Whether the provider enforces the sent json_schema; when not known, the prompt also carries the schema. */
  schemaEnforced: boolean;
  /** `strict: true` in json_schema (refused by providers that only have best-effort mode on most models). */
  strict: boolean;
  /** How errors come back, for `judgeflow providers` (every shape is read by core/llm/providers/errorBody.ts). */
  errors: string;
  /**
   * The Batch API judgeflow can judge through (core/providers/batch/): OpenAI's (files with purpose `batch` and
   * /v1/batches) or Anthropic's Message Batches; absent when the provider has none judgeflow supports.
   */
  batchApi?: 'openai' | 'anthropic';
  /** Fields sent with every request unless the config's extraBody overrides them. */
  extraBody?: Record<string, unknown>;
  /** The quirks handled, one line each, with where they are documented. */
  notes: string[];
}

/** OpenAI's reasoning families (o1, o3, o4-mini, gpt-5…), bare or routed as `openai/o3`. */
export const openaiReasoningModel = (model: string): boolean => /^(openai\/)?(o\d|gpt-5)(\b|[-.:_])/i.test(model);

/** Hosts of open-weight models (Together, Fireworks): OpenAI-shaped, json_schema best-effort per model, R1-style think blocks. */
export const openWeightsHost = {
  transport: 'openai-chat',
  seedParam: 'seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  responseFormat: 'json_schema',
  schemaEnforced: false,
  strict: false,
  errors: '{"error": {"message", "type", "code"}}',
  notes: ['R1-style models answer <think>…</think> first: stripped before parsing and judging', 'json_schema not enforced on every model: the schema also in the prompt'],
} as const satisfies Partial<ProviderProfile>;
