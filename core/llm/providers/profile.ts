/**
 * A provider profile: how one family of chat endpoints is asked and how it answers. Profiles are data plus a few hooks,
 * one file per provider in profiles/ (found there by the registry, index.ts); the one request path (core/llm/call.ts)
 * builds every judge and copilot request from them, and `judgeflow providers` prints them.
 */
/** A profile's id, as `provider:` names it (the registry, core/llm/providers/index.ts, lists the ids it found). */
export type ProviderId = string;

/** An HTTP error as the hooks read it: the status, the body as received, and what core/llm/providers/errorBody.ts read from it. */
export interface ProviderErrorView {
  status: number;
  body: string;
  /** The provider's own words, from whatever shape the body has; null when it has none. */
  message: string | null;
  /** Every machine-readable code or type the body carries (insufficient_quota, json_validate_failed…). */
  codes: string[];
}

/** What an HTTP error means beyond its status, when a provider says it in its own way. */
export type ProviderErrorClass =
  /** Out of credit or quota: never retried, and the endpoint is not asked again for a while (session.ts). */
  | { kind: 'quota' }
  /** The request was fine but the model's answer was not: the judge re-asks it like an invalid answer. */
  | { kind: 'invalid_answer'; problem: string };

/**
 * A provider's quirks as code, beside its data. The readers (every hook below) are asked about every endpoint's
 * errors and replies, not only the profile's own: gateways (OpenRouter, LiteLLM), self-hosted servers and the
 * simulator on 127.0.0.1 pass on their upstream's words, and an unknown host reads everything. So a reader must match
 * only what its provider says, never a wording another provider could mean otherwise.
 */
export interface ProviderHooks {
  /**
   * The request parameter a 400/422 refuses, named in this provider's wording (`text`: the error's message and body);
   * null when the text is not such a refusal. Only the `optional` parameters judgeflow may leave out count.
   */
  refusedParameter?(text: string, optional: readonly string[]): string | null;
  /** What an HTTP error means beyond its status (out of quota, an invalid answer); null: nothing special. */
  classifyError?(error: ProviderErrorView): ProviderErrorClass | null;
  /**
   * An error reported inside a reply that arrived with HTTP 2xx (the parsed body): the HTTP status it stands for, or
   * null when the reply is not such an error.
   */
  errorInReply?(reply: Record<string, unknown>): number | null;
}

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
   * The Batch API judgeflow can judge through (core/llm/providers/batch/): OpenAI's (files with purpose `batch` and
   * /v1/batches) or Anthropic's Message Batches; absent when the provider has none judgeflow supports.
   */
  batchApi?: 'openai' | 'anthropic';
  /** Fields sent with every request unless the config's extraBody overrides them. */
  extraBody?: Record<string, unknown>;
  /** The quirks handled, one line each, with where they are documented. */
  notes: string[];
  /** Quirks that are code, not data (read only through the registry, core/llm/providers/index.ts). */
  hooks?: ProviderHooks;
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
  notes: [
    'R1-style models answer <think>…</think> first: stripped before parsing and judging',
    'json_schema not enforced on every model: the schema also in the prompt',
  ],
} as const satisfies Partial<ProviderProfile>;
