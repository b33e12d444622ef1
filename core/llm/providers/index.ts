import { InputError } from '../../model/inputError';
import { anthropic } from './anthropic';
import { deepseek } from './deepseek';
import { fireworks } from './fireworks';
import { gemini } from './gemini';
import { groq } from './groq';
import { mistral } from './mistral';
import { ollama } from './ollama';
import { openai } from './openai';
import { openaiCompatible } from './openaiCompatible';
import { openrouter } from './openrouter';
import { PROVIDER_IDS, type ProviderId, type ProviderProfile } from './profile';
import { together } from './together';
import { vllm } from './vllm';

export { PROVIDER_IDS, type ProviderId, type ProviderProfile } from './profile';

export const PROFILES: Record<ProviderId, ProviderProfile> = {
  openai,
  anthropic,
  gemini,
  deepseek,
  mistral,
  groq,
  openrouter,
  together,
  fireworks,
  vllm,
  ollama,
  'openai-compatible': openaiCompatible,
};

/** The provider a base URL's host belongs to; `openai-compatible` when no profile claims it. */
export function inferProvider(baseURL: string): ProviderId {
  let host: string;
  try {
    host = new URL(baseURL).host.toLowerCase();
  } catch {
    return 'openai-compatible';
  }
  const hostname = host.replace(/:\d+$/, '');
  for (const id of PROVIDER_IDS) if (PROFILES[id].hosts.some((pattern) => pattern.test(host) || pattern.test(hostname))) return id;
  return 'openai-compatible';
}

/** The profile a judge or copilot uses: the one it names, else the one its host implies. */
export function profileOf(endpoint: { provider?: string | null; baseURL: string }): ProviderProfile {
  if (endpoint.provider) {
    const profile = PROFILES[endpoint.provider as ProviderId];
    if (!profile) throw new InputError(`unknown provider "${endpoint.provider}"; use one of: ${PROVIDER_IDS.join(', ')}`);
    return profile;
  }
  return PROFILES[inferProvider(endpoint.baseURL)];
}
