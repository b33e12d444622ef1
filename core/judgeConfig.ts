import { z } from 'zod';

/** The name of an environment variable holding a secret: never the secret itself. */
export const envNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself');

/** The config's `judge:` block: an OpenAI-compatible endpoint, named by its key's variable, never the key. */
export const judgeConfigSchema = z
  .object({
    baseURL: z.string().url(),
    model: z.string().min(1),
    apiKeyEnv: envNameSchema.optional(),
    /** Defaults to the rubric's judge temperature; null leaves it out of requests (reasoning models reject it). */
    temperature: z.number().min(0).max(2).nullable().optional(),
    /** Cap on answer tokens, sent as maxTokensParam (newer OpenAI models want max_completion_tokens). */
    maxTokens: z.number().int().min(1).optional(),
    maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    /** Send a seed derived from the run seed (recorded with every judgment); false for endpoints that reject it. */
    sendSeed: z.boolean().default(true),
    timeoutMs: z.number().int().min(100).default(120_000),
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Attempts at transport level (HTTP errors, timeouts); invalid answers are re-asked per the rubric. */
    maxAttempts: z.number().int().min(1).max(20).default(8),
    responseFormat: z.enum(['json_schema', 'json_object']).default('json_schema'),
    /** Repeated judging: every unit is judged this many times independently; reports use the mean and measure the spread. */
    samples: z.number().int().min(1).max(50).default(1),
  })
  .strict();

export type JudgeConfig = z.infer<typeof judgeConfigSchema>;
