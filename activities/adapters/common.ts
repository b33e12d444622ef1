import { z } from 'zod';
import { nameSchema } from '../../core/model/names';
import { InputError } from '../../core/model/inputError';

/** Retry policy for one copilot; applied by Temporal to the collect activity. */
export const retrySchema = z
  .object({
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe(
        'Attempts per question, the first included; after the last the failure is recorded and the run goes on.',
      ),
    initialIntervalMs: z
      .number()
      .int()
      .min(1)
      .default(1000)
      .describe('Wait before the second attempt (a Retry-After from the copilot wins).'),
    backoffCoefficient: z.number().min(1).default(2).describe('Each further wait is the previous one times this.'),
    maxIntervalMs: z.number().int().min(1).default(30_000).describe('Longest wait between two attempts.'),
    maxRetryAfterSeconds: z
      .number()
      .int()
      .min(0)
      .default(60)
      .describe(
        'Longest Retry-After honoured: a copilot asking for more (a 503 with Retry-After: 600) is asked again after this many seconds, so one answer cannot hold the run for its whole wait; status shows the wait.',
      ),
  })
  .strict();

export { envNameSchema } from '../../core/llm/judgeConfig';

/** Header values that carry credentials must reference a variable, so the secret never sits in the config or workflow history. */
export const headersSchema = z
  .record(z.string(), z.string())
  .default({})
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      if (/authorization|api[-_]?key|token|secret|cookie/i.test(name) && !/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(value))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `put the credential in an environment variable and write it as \${VAR} (e.g. "Bearer \${MY_KEY}")`,
        });
    }
  });

/** Fields every copilot has, whatever its adapter type. Limits are enforced by the run's workflow, so they hold across all workers. */
export const copilotBaseShape = {
  name: nameSchema('copilot name').describe(
    'Names the copilot in reports, files and CSV columns: letters, digits, "_", ".", "-", at most 64, unique ignoring case.',
  ),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(4)
    .describe('Most questions in flight to this copilot; the adaptive limiter works within it.'),
  requestsPerMinute: z
    .number()
    .positive()
    .optional()
    .describe("Hard cap on requests a minute to this copilot, held across all the run's workers."),
  tokensPerMinute: z
    .number()
    .positive()
    .optional()
    .describe("Hard cap on tokens a minute (the responses' reported usage), held across all the run's workers."),
  timeoutMs: z
    .number()
    .int()
    .min(100)
    .default(120_000)
    .describe('Time one question may take before the attempt counts as failed.'),
  retry: retrySchema
    .default({
      maxAttempts: 3,
      initialIntervalMs: 1000,
      backoffCoefficient: 2,
      maxIntervalMs: 30_000,
      maxRetryAfterSeconds: 60,
    })
    .describe('Retry policy for a failed question, applied by Temporal with backoff.'),
  family: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'Model family (e.g. "openai"): a panel judge of the same family is flagged for possible self-preference.',
    ),
};

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replace `${VAR}` with the variable's value; only ever called inside an activity. Errors name the variable, never its
 * value. They are configuration failures (InputError: kind `config`), the worker's to fix and not the copilot's:
 * `judgeflow retry RUN_ID --failed --kind config` asks those items again once the variable is set.
 */
export function expandEnv(template: string, env: NodeJS.ProcessEnv, where: string): string {
  return template.replace(ENV_REFERENCE, (_, name: string) => {
    const value = env[name];
    if (value === undefined)
      throw new InputError(
        `${where} references \${${name}}, but the environment variable ${name} is not set in this worker's environment (pid ${process.pid}); set it and run judgeflow retry RUN_ID --failed --kind config`,
      );
    if (/[\r\n\0]/.test(value))
      throw new InputError(
        `${where}: the environment variable ${name} contains a line break or NUL byte, which cannot go in an HTTP header`,
      );
    return value;
  });
}

/** Every environment variable a copilot (or judge) config names: its apiKeyEnv, each `${VAR}`, and an agent's MCP headersFromEnv. */
export function envNames(config: unknown): string[] {
  const names = new Set([...JSON.stringify(config).matchAll(ENV_REFERENCE)].map((m) => m[1]));
  const keyEnv = (config as { apiKeyEnv?: string }).apiKeyEnv;
  if (keyEnv) names.add(keyEnv);
  const servers = (config as { tools?: { mcp?: Array<{ headersFromEnv?: Record<string, string> }> } }).tools?.mcp ?? [];
  for (const server of servers) for (const name of Object.values(server.headersFromEnv ?? {})) names.add(name);
  return [...names];
}

/** Values of every environment variable a copilot config names (apiKeyEnv, `${VAR}`): what must never be stored or logged. */
export function secretValues(config: unknown, env: NodeJS.ProcessEnv): string[] {
  return envNames(config)
    .map((n) => env[n])
    .filter((v): v is string => typeof v === 'string' && v.length >= 4);
}

/** Replace any secret value in a text (error message, raw payload) with ***. */
export function redact(text: string | null, secrets: string[]): string | null {
  if (text === null) return null;
  return secrets.reduce((out, secret) => out.split(secret).join('***'), text);
}

/** A Retry-After no longer than the copilot's `retry.maxRetryAfterSeconds`. */
export function cappedRetryAfterMs(
  ms: number | undefined,
  retry: { maxRetryAfterSeconds?: number } | undefined,
): number | undefined {
  return ms === undefined ? undefined : Math.min(ms, (retry?.maxRetryAfterSeconds ?? 60) * 1_000);
}

/** Parse a Retry-After header (seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
