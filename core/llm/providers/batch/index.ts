/**
 * judgeflow's client of the providers' Batch APIs (pure core layer: fetch over HTTP, no Temporal): OpenAI's protocol
 * (openai.ts; also Groq's and any OpenAI-compatible host's) and Anthropic's Message Batches (anthropic.ts).
 */
import { InputError } from '../../../model/inputError';
import { inferProvider, PROFILES } from '../index';
import type { ProviderId } from '../profile';
import { anthropicBatchClient } from './anthropic';
import { openaiBatchClient } from './openai';
import type { BatchClient, BatchEndpoint } from './types';

export type { BatchClient, BatchEndpoint, BatchLine, BatchLineResult, BatchState, BatchStatus } from './types';

/**
 * The Batch API an endpoint's provider serves (its profile's `batchApi`), the provider named or inferred from the host;
 * null when it has none judgeflow supports. An unknown host is `openai-compatible`, whose profile says 'openai'.
 */
export function batchApiOf(endpoint: { baseURL: string; provider?: ProviderId }): 'openai' | 'anthropic' | null {
  return PROFILES[endpoint.provider ?? inferProvider(endpoint.baseURL)]?.batchApi ?? null;
}

/** The client for the endpoint's Batch API; the key is read from `env[apiKeyEnv]` here and never leaves the client. */
export function batchClient(endpoint: BatchEndpoint, env: NodeJS.ProcessEnv): BatchClient {
  const api = batchApiOf(endpoint);
  const provider = endpoint.provider ?? inferProvider(endpoint.baseURL);
  if (!api)
    throw new InputError(
      `provider "${provider}" (${endpoint.baseURL}) has no Batch API judgeflow supports (only OpenAI's protocol and Anthropic's Message Batches: see \`judgeflow providers\`); judge it live (judge.batch: false)`,
    );
  const apiKey = (endpoint.apiKeyEnv && env[endpoint.apiKeyEnv]) || undefined;
  return api === 'anthropic'
    ? anthropicBatchClient(endpoint.baseURL, apiKey, endpoint.timeoutMs)
    : openaiBatchClient(endpoint.baseURL, apiKey, endpoint.timeoutMs);
}
