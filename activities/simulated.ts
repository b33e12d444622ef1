import type { StoredRunConfig } from './deps';

/** Set by judgeflow's simulator on every response (sim/server.ts SIMULATED_HEADER; repeated here: activities do not load sim/). */
const SIMULATED_HEADER = 'x-judgeflow-simulated';

/**
 * Whether any judge or OpenAI-compatible copilot of the run is judgeflow's simulator: each distinct endpoint is asked
 * GET <baseURL>/models (no credentials sent; a real provider answers 401 and learns nothing) and the simulator's header
 * looked for. A run it serves is then reported as SIMULATED in every format, even from a user's own config.
 */
export async function servedBySimulator(
  config: Pick<StoredRunConfig, 'judge' | 'judges' | 'copilots'>,
  timeoutMs = 2_000,
): Promise<boolean> {
  const urls = new Set<string>();
  for (const j of config.judges ?? (config.judge ? [config.judge] : [])) urls.add(j.baseURL);
  // Agent copilots on Chat Completions too (an anthropic one's base URL has no /models of that shape).
  for (const c of config.copilots)
    if (
      (c.type === 'openai' || (c.type === 'agent' && c.provider !== 'anthropic')) &&
      'baseURL' in c &&
      typeof c.baseURL === 'string'
    )
      urls.add(c.baseURL);
  const probes = [...urls].map(async (base) => {
    try {
      const res = await fetch(new URL('models', base.endsWith('/') ? base : `${base}/`), {
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      await res.body?.cancel();
      return res.headers.get(SIMULATED_HEADER) === '1';
    } catch {
      return false; // unreachable now: that is for the run's calls to report, not this check
    }
  });
  return (await Promise.all(probes)).some(Boolean);
}
