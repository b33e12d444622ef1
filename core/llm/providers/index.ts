import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../model/inputError';
import { providerErrorCodes, providerErrorMessage } from './errorBody';
import type { ProviderErrorClass, ProviderErrorView, ProviderId, ProviderProfile } from './profile';

export type { ProviderId, ProviderProfile } from './profile';

/** The profile of a host no profile claims: it assumes little and reads everything. */
export const FALLBACK_PROVIDER = 'openai-compatible';

/** Where the profiles are: every module in this folder exports one `profile`. */
const PROFILES_DIR = 'profiles';

/**
 * The profiles, found by listing profiles/ beside this module — so adding a provider is adding its file there, with no
 * list to extend. Listed from `__filename`'s folder: from the sources (tsx, jest) that is core/llm/providers/, from the
 * compiled CLI dist/core/llm/providers/ (scripts/build.js compiles every source file, a new profile included).
 * Sorted by id, the fallback last, so `judgeflow providers` and the config reference do not depend on the file system.
 */
function discoverProfiles(): ProviderProfile[] {
  const dir = path.join(path.dirname(__filename), PROFILES_DIR);
  const modules = fs
    .readdirSync(dir)
    .filter((name) => /\.(ts|js)$/.test(name) && !name.endsWith('.d.ts'))
    .map((name) => name.replace(/\.(ts|js)$/, ''));
  const found = new Map<string, ProviderProfile>();
  for (const name of [...new Set(modules)]) {
    const loaded = require(`./${PROFILES_DIR}/${name}`) as { profile?: ProviderProfile };
    const profile = loaded.profile;
    if (!profile || typeof profile.id !== 'string' || !profile.id)
      throw new Error(
        `core/llm/providers/${PROFILES_DIR}/${name}: exports no \`profile\` with an id (every module in ${PROFILES_DIR}/ is a provider profile; see profile.ts)`,
      );
    const taken = found.get(profile.id);
    if (taken)
      throw new Error(
        `core/llm/providers/${PROFILES_DIR}/${name}: provider id "${profile.id}" is already taken by another profile file`,
      );
    found.set(profile.id, profile);
  }
  if (!found.has(FALLBACK_PROVIDER))
    throw new Error(
      `core/llm/providers/${PROFILES_DIR}/ has no "${FALLBACK_PROVIDER}" profile (the one an unknown host uses)`,
    );
  return [...found.values()].sort(
    (a, b) => Number(a.id === FALLBACK_PROVIDER) - Number(b.id === FALLBACK_PROVIDER) || a.id.localeCompare(b.id),
  );
}

const DISCOVERED = discoverProfiles();

/** Every provider id, the fallback last (a tuple, so config schemas can take it as an enum). */
export const PROVIDER_IDS = DISCOVERED.map((p) => p.id) as [ProviderId, ...ProviderId[]];

export const PROFILES: Readonly<Record<ProviderId, ProviderProfile>> = Object.fromEntries(
  DISCOVERED.map((p) => [p.id, p]),
);

/** The provider a base URL's host belongs to; `openai-compatible` when no profile claims it. */
export function inferProvider(baseURL: string): ProviderId {
  let host: string;
  try {
    host = new URL(baseURL).host.toLowerCase();
  } catch {
    return FALLBACK_PROVIDER;
  }
  const hostname = host.replace(/:\d+$/, '');
  for (const profile of DISCOVERED)
    if (profile.hosts.some((pattern) => pattern.test(host) || pattern.test(hostname))) return profile.id;
  return FALLBACK_PROVIDER;
}

/** The profile a judge or copilot uses: the one it names, else the one its host implies. */
export function profileOf(endpoint: { provider?: string | null; baseURL: string }): ProviderProfile {
  if (endpoint.provider) {
    const profile = PROFILES[endpoint.provider];
    if (!profile)
      throw new InputError(`unknown provider "${endpoint.provider}"; use one of: ${PROVIDER_IDS.join(', ')}`);
    return profile;
  }
  return PROFILES[inferProvider(endpoint.baseURL)];
}

// The readers: every profile's hooks are asked about every error and reply (profile.ts, ProviderHooks, says why).

/** Parameters judgeflow sends only as options, so it can leave them out when an endpoint refuses them. */
export const OPTIONAL_PARAMETERS = [
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'random_seed',
  'top_p',
  'response_format',
  'presence_penalty',
  'frequency_penalty',
] as const;

/** The optional request parameter a 400/422's text refuses, in any provider's wording (each profile's refusedParameter); null when none. */
export function refusedParameter(text: string): string | null {
  for (const profile of DISCOVERED) {
    const parameter = profile.hooks?.refusedParameter?.(text, OPTIONAL_PARAMETERS);
    if (parameter && (OPTIONAL_PARAMETERS as readonly string[]).includes(parameter)) return parameter;
  }
  return null;
}

/** An HTTP error's meaning beyond its status, as the first profile that recognises its words says; null when none does. */
export function classifyProviderError(status: number, body: string): ProviderErrorClass | null {
  const view: ProviderErrorView = {
    status,
    body,
    message: providerErrorMessage(body),
    codes: providerErrorCodes(body),
  };
  for (const profile of DISCOVERED) {
    const meaning = profile.hooks?.classifyError?.(view);
    if (meaning) return meaning;
  }
  return null;
}

/** Out of credit or quota rather than rate limited or refused, in any provider's words. */
export function isQuotaError(status: number, body: string): boolean {
  return classifyProviderError(status, body)?.kind === 'quota';
}

/** The HTTP status an error inside a 2xx reply stands for (each profile's errorInReply); null when the reply is no error. */
export function errorInReply(reply: Record<string, unknown>): number | null {
  for (const profile of DISCOVERED) {
    const status = profile.hooks?.errorInReply?.(reply);
    if (status) return status;
  }
  return null;
}
