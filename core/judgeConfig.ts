import { z } from 'zod';
import { nameSchema } from './names';

/** The name of an environment variable holding a secret: never the secret itself. */
export const envNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself');

/** The config's `judge:` block: an OpenAI-compatible endpoint, named by its key's variable, never the key. */
const judgeShape = {
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
    /** Hard caps, held across all workers by the run's workflow (runs that judge while they collect). */
    requestsPerMinute: z.number().positive().optional(),
    tokensPerMinute: z.number().positive().optional(),
    /** Attempts at transport level (HTTP errors, timeouts); invalid answers are re-asked per the rubric. */
    maxAttempts: z.number().int().min(1).max(20).default(8),
    responseFormat: z.enum(['json_schema', 'json_object']).default('json_schema'),
};

/** Repeated judging: every unit is judged this many times independently; reports use the mean and measure the spread. */
const samplesSchema = z.number().int().min(1).max(50).default(1);

export const judgeConfigSchema = z.object({ ...judgeShape, samples: samplesSchema }).strict();

/** One member of a judge panel (`judges:`): a judge with a name (report columns, stored verdicts) and optional model family. */
export const panelJudgeSchema = z
  .object({
    ...judgeShape,
    name: nameSchema('judge name'),
    /** Model family (e.g. "anthropic"): matched against copilots' `family` to flag possible self-preference. */
    family: z.string().min(1).max(64).optional(),
  })
  .strict();

/** How a panel's verdicts combine: `aggregate` over judges of each judge's mean over its `samples`. */
export const panelOptionsSchema = z
  .object({
    aggregate: z.enum(['mean', 'median']).default('mean'),
    samples: samplesSchema,
    minJudges: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('How many judges must give a verdict on a unit for it to have a panel score (default: a majority of the panel); units with fewer are missing data.'),
  })
  .strict();

/** A panel's quorum: `panel.minJudges`, else a majority of its `judges` judges (a single judge: 1). */
export function minJudgesOf(panel: { minJudges?: number } | undefined, judges: number): number {
  return panel?.minJudges ?? Math.floor(judges / 2) + 1;
}

export type JudgeConfig = z.infer<typeof judgeConfigSchema>;
export type PanelJudgeConfig = z.infer<typeof panelJudgeSchema>;
export type PanelOptions = z.infer<typeof panelOptionsSchema>;
