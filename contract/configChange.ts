/**
 * What `judgeflow resume RUN_ID --config FILE` may change of a paused run's config: how its endpoints are reached and
 * limited, what its calls cost and when it stops — never what is asked or how it is judged. Shared by the CLI (which
 * refuses with the key), the run's workflow (which checks again and records what changed) and the activity that
 * replaces the stored config. Plain code with no imports: workflows use it.
 */

/** Top-level keys that may change. */
const ENDPOINT_FREE_KEYS = ['pricing', 'budget', 'failFast'];
/**
 * A judge's keys that say how it is reached and limited; every other key (temperature, maxTokens, samples, …) changes
 * what is asked. Its `model` is who judges: a run's verdicts by two models under one rubric version would read as one
 * judge's, so it is refused (JUDGE_IDENTITY_KEYS) and `judgeflow rejudge --judge-model` judges the answers anew.
 */
const JUDGE_ENDPOINT_KEYS = [
  'baseURL',
  'apiKeyEnv',
  'provider',
  'extraBody',
  'timeoutMs',
  'concurrency',
  'requestsPerMinute',
  'tokensPerMinute',
  'maxAttempts',
  'maxTokensParam',
];
const JUDGE_IDENTITY_KEYS: Record<string, string> = { model: 'the model that gives the verdicts' };
/** A copilot's keys that make it another copilot: its name (report columns) and its adapter. */
const COPILOT_IDENTITY_KEYS = ['name', 'type'];
/** Keys the stored run record adds to the config it was started with (not the user's to give). */
const RECORD_ONLY_KEYS = ['simulated', 'reuseJudgments', 'groundingVersion', 'runKey'];

export interface ConfigChanges {
  /** What changes, for the run's history: "copilot MyAPI answerPath", "judge model", "pricing". */
  changed: string[];
  /** Keys that may not change (with why, when it is not plain): the replacement is refused. */
  refused: string[];
  /** The endpoints whose settings change, by limiter key (`copilot:NAME`, `judge`, `judge:LANE`). */
  endpoints: string[];
}

type Config = Record<string, unknown>;
/** Deep equality of JSON values, an absent key and one set to undefined alike. */
function same(a: unknown, b: unknown): boolean {
  if (a === b || (a == null && b == null)) return true;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) !== Array.isArray(b)
  )
    return false;
  return keysOf(a, b).every((k) => same((a as Config)[k], (b as Config)[k]));
}
const keysOf = (...objects: unknown[]) => [...new Set(objects.flatMap((o) => Object.keys((o ?? {}) as object)))].sort();

/** Compare the config a run was started with (`before`) to a replacement (`after`). */
export function compareRunConfigs(before: Config, after: Config): ConfigChanges {
  const out: ConfigChanges = { changed: [], refused: [], endpoints: [] };
  for (const key of keysOf(before, after)) {
    if (RECORD_ONLY_KEYS.includes(key) || same(before[key], after[key])) continue;
    if (ENDPOINT_FREE_KEYS.includes(key)) out.changed.push(key);
    else if (key === 'copilots') compareCopilots(before.copilots as Config[], after.copilots as Config[], out);
    else if (key === 'judge' && before.judge && after.judge)
      compareEndpoint(
        'judge',
        'judge',
        'the judge',
        before.judge as Config,
        after.judge as Config,
        JUDGE_ENDPOINT_KEYS,
        out,
      );
    else if (key === 'judges' && before.judges && after.judges)
      compareJudges(before.judges as Config[], after.judges as Config[], out);
    else out.refused.push(key);
  }
  return out;
}

function compareCopilots(before: Config[] = [], after: Config[] = [], out: ConfigChanges): void {
  const names = (cs: Config[]) => cs.map((c) => String(c.name));
  if (!same(names(before), names(after)))
    return void out.refused.push(`copilots (the set and order of copilot names: ${names(before).join(', ')})`);
  before.forEach((c, i) => {
    const allowed = keysOf(c, after[i]).filter((k) => !COPILOT_IDENTITY_KEYS.includes(k));
    compareEndpoint(`copilot:${c.name}`, `copilots[${i}]`, `copilot ${c.name}`, c, after[i], allowed, out);
  });
}

function compareJudges(before: Config[], after: Config[], out: ConfigChanges): void {
  const names = (js: Config[]) => js.map((j) => String(j.name));
  if (!same(names(before), names(after)))
    return void out.refused.push(`judges (the set and order of panel members: ${names(before).join(', ')})`);
  before.forEach((j, i) =>
    compareEndpoint(`judge:${i}`, `judges[${i}]`, `judge ${j.name}`, j, after[i], JUDGE_ENDPOINT_KEYS, out),
  );
}

function compareEndpoint(
  endpoint: string,
  where: string,
  who: string,
  before: Config,
  after: Config,
  allowed: string[],
  out: ConfigChanges,
): void {
  let changed = false;
  for (const key of keysOf(before, after)) {
    if (same(before[key], after[key])) continue;
    if (!allowed.includes(key))
      out.refused.push(
        `${where}.${key}${allowed === JUDGE_ENDPOINT_KEYS && JUDGE_IDENTITY_KEYS[key] ? ` (${JUDGE_IDENTITY_KEYS[key]}: ${String(before[key])})` : ''}`,
      );
    else {
      out.changed.push(`${who} ${key}`);
      changed = true;
    }
  }
  if (changed) out.endpoints.push(endpoint);
}

/** "copilot MyAPI concurrency 4 → 2" (a limit that was unset: "unset → 60"): a `judgeflow tune` change as status and reports show it. */
export function describeLimitChange(c: { endpoint: string; limit: string; from: number | null; to: number }): string {
  return `${c.endpoint} ${c.limit} ${c.from ?? 'unset'} → ${c.to}`;
}
