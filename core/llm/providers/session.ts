import { providerErrorMessage } from './errorBody';
import { ProviderHttpError } from './httpError';
import { refusedParameter } from './index';
import { dropKey } from './request';

/**
 * What this worker process learnt about each endpoint during its runs (keyed by base URL, model and key variable): parameters it
 * refused (left out from then on, so one 400 is paid once, not per call) and whether it is out of quota (then it is not
 * asked again for a while: every further call fails at once with the provider's words).
 */
const dropped = new Map<string, Set<string>>();
const exhausted = new Map<string, { error: ProviderHttpError; until: number }>();

/** How long an out-of-quota endpoint is not asked (a run's items fail at once; a later run asks again). */
const QUOTA_PAUSE_MS = 2 * 60_000;

/** One endpoint: base URL, model and the key's variable name (two accounts on one host are two endpoints). */
export function endpointKey(endpoint: { baseURL: string; model: string; apiKeyEnv?: string }): string {
  return `${endpoint.baseURL.replace(/\/+$/, '')}\u0000${endpoint.model}\u0000${endpoint.apiKeyEnv ?? ''}`;
}

export function droppedParameters(key: string): Set<string> {
  let set = dropped.get(key);
  if (!set) dropped.set(key, (set = new Set()));
  return set;
}

export function quotaExhausted(key: string, now = Date.now()): ProviderHttpError | null {
  const entry = exhausted.get(key);
  if (!entry) return null;
  if (entry.until > now) return entry.error;
  exhausted.delete(key);
  return null;
}

export function markQuotaExhausted(key: string, error: ProviderHttpError, now = Date.now()): void {
  exhausted.set(key, { error, until: now + QUOTA_PAUSE_MS });
}

/** For tests: forget what was learnt. */
export function resetProviderSession(): void {
  dropped.clear();
  exhausted.clear();
}

/**
 * When `error` is a 400/422 refusing a parameter `body` sent, remember it for the endpoint and return it; `learnt` is
 * false when a concurrent call learnt it meanwhile (this body was built before). The caller asks again.
 */
export function learnRefusedParameter(
  error: unknown,
  body: Record<string, unknown>,
  dropped: Set<string>,
): { parameter: string; learnt: boolean } | null {
  if (!(error instanceof ProviderHttpError) || (error.status !== 400 && error.status !== 422)) return null;
  const refused = refusedParameter(`${providerErrorMessage(error.body) ?? ''} ${error.body}`);
  const parameter = refused ? dropKey(refused, body) : null;
  if (!parameter) return null;
  const learnt = !dropped.has(parameter);
  dropped.add(parameter);
  return { parameter, learnt };
}
