import { z } from 'zod';

/** Retry policy for one copilot; applied by Temporal to the collect activity. */
export const retrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(20).default(3),
    initialIntervalMs: z.number().int().min(1).default(1000),
    backoffCoefficient: z.number().min(1).default(2),
    maxIntervalMs: z.number().int().min(1).default(30_000),
  })
  .strict();

/** Fields every copilot has, whatever its adapter type. Limits are enforced by the run's workflow, so they hold across all workers. */
export const copilotBaseShape = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, "_", "." or "-" (it names CSV columns and report keys)'),
  concurrency: z.number().int().min(1).max(64).default(4),
  requestsPerMinute: z.number().positive().optional(),
  timeoutMs: z.number().int().min(100).default(120_000),
  retry: retrySchema.default({ maxAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 30_000 }),
};

/** Replace `${VAR}` with the variable's value; only ever called inside an activity. */
export function expandEnv(template: string, env: NodeJS.ProcessEnv, where: string): string {
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = env[name];
    if (value === undefined) throw new Error(`${where} references \${${name}}, but the environment variable ${name} is not set in the worker's environment`);
    return value;
  });
}

/** Parse a Retry-After header (seconds or HTTP date) into milliseconds. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
