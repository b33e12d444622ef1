import { z } from 'zod';
import { nameSchema } from '../model/names';
import type { ProviderId } from './providers/profile';
import { PROVIDER_IDS, profileOf } from './providers';
import { batchApiOf } from './providers/batch';

/** Provider fields passed through in every request body (tools, web_search_options, reasoning_effort, provider routing…). */
export const extraBodySchema = z
  .record(z.string(), z.unknown())
  .optional()
  .superRefine((body, ctx) => {
    for (const name of ['model', 'messages', 'stream'])
      if (body && name in body)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `extraBody may not set "${name}": judgeflow sends it itself`,
        });
  })
  .describe(
    'Provider fields added to every request body as they are (e.g. reasoning_effort, web_search_options, provider: {require_parameters: true})',
  );

/** The name of an environment variable holding a secret: never the secret itself. */
export const envNameSchema = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself',
  );

/** The config's `judge:` block: an OpenAI-compatible endpoint, named by its key's variable, never the key. */
const judgeShape = {
  baseURL: z
    .string()
    .url()
    .describe(
      'The OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (the simulator).',
    ),
  model: z.string().min(1).describe('The judge model, as the endpoint names it (the simulator: sim-judge).'),
  provider: z
    .enum(PROVIDER_IDS)
    .optional()
    .describe(
      'Provider profile (parameter names, JSON enforcement, error shapes); inferred from the base URL host when absent, else openai-compatible.',
    ),
  apiKeyEnv: envNameSchema
    .optional()
    .describe('Name of the environment variable holding the API key, read by the worker only; never the key itself.'),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .nullable()
    .optional()
    .describe(
      "Sampling temperature; default: the rubric's judge temperature; null leaves it out of requests (reasoning models reject it).",
    ),
  maxTokens: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Cap on answer tokens, sent under the name maxTokensParam gives.'),
  maxTokensParam: z
    .enum(['max_tokens', 'max_completion_tokens'])
    .optional()
    .describe(
      "Request field that carries maxTokens; default: the provider profile's (max_completion_tokens for reasoning models).",
    ),
  sendSeed: z
    .boolean()
    .default(true)
    .describe(
      'Send a seed derived from the run seed (recorded with every judgment); false for endpoints that reject it.',
    ),
  timeoutMs: z
    .number()
    .int()
    .min(100)
    .default(120_000)
    .describe('Time one judge call may take, body included, before it counts as failed and is retried.'),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(4)
    .describe('Most judge calls in flight for this run; the adaptive limiter works within it.'),
  requestsPerMinute: z
    .number()
    .positive()
    .optional()
    .describe("Hard cap on requests a minute to this endpoint, held across all the run's workers."),
  tokensPerMinute: z
    .number()
    .positive()
    .optional()
    .describe("Hard cap on tokens a minute (the responses' reported usage), held across all the run's workers."),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(20)
    .default(8)
    .describe(
      'Attempts per call at transport level (HTTP 429/5xx, timeouts; Retry-After honoured); invalid answers are re-asked per the rubric.',
    ),
  maxRetryAfterSeconds: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Longest Retry-After honoured (default 60): a judge asking for more (a 503 with Retry-After: 600) is asked again after this many seconds, so one answer cannot hold the run for its whole wait; status shows the wait. As copilots' retry.maxRetryAfterSeconds.",
    ),
  responseFormat: z
    .enum(['json_schema', 'json_object', 'none'])
    .optional()
    .describe(
      "response_format sent for the judge's JSON answer; default: the provider profile's (json_object for DeepSeek).",
    ),
  extraBody: extraBodySchema,
  batch: z
    .boolean()
    .optional()
    .describe(
      "Judge through the provider's Batch API (OpenAI Batch, Anthropic Message Batches) at its batch price, half of live: verdicts come back within the provider's window (up to 24 h). Default false.",
    ),
  batchPollSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .optional()
    .describe('Seconds between two looks at a submitted judge batch, on a durable timer (default 60).'),
  batchDeadlineHours: z
    .number()
    .positive()
    .max(720)
    .optional()
    .describe(
      "Hours after its submit at which a judge batch that has not ended is cancelled and its lines asked live: the providers' 24 h window plus a margin (default 26).",
    ),
};

const samplesSchema = z
  .number()
  .int()
  .min(1)
  .max(50)
  .default(1)
  .describe(
    'Repeated judging: every judge unit is judged this many times independently; reports use the mean and measure the spread.',
  );

/** `batch: true` needs a provider whose Batch API judgeflow speaks (core/llm/providers/batch). */
function batchSupported(
  judge: { batch?: boolean; baseURL: string; provider?: ProviderId },
  ctx: z.RefinementCtx,
): void {
  if (judge.batch && !batchApiOf(judge))
    ctx.addIssue({
      code: 'custom',
      path: ['batch'],
      message: `provider ${profileOf(judge).id} has no Batch API judgeflow can use (openai and anthropic have; see judgeflow providers): remove batch or judge live`,
    });
}

/** The `judge:` block's keys, for blocks made from it (the grounding judge). */
export const judgeObjectSchema = z.object({ ...judgeShape, samples: samplesSchema }).strict();
export const judgeConfigSchema = judgeObjectSchema.superRefine(batchSupported);

/** One member of a judge panel (`judges:`): a judge with a name (report columns, stored verdicts) and optional model family. */
export const panelJudgeSchema = z
  .object({
    ...judgeShape,
    name: nameSchema('judge name').describe(
      'The panel member\'s name: report columns and stored verdicts (letters, digits, "_", ".", "-"; at most 64).',
    ),
    family: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('Model family (e.g. "anthropic"): matched against copilots\' family to flag possible self-preference.'),
  })
  .strict()
  .superRefine(batchSupported);

/** How a panel's verdicts combine: `aggregate` over judges of each judge's mean over its `samples`. */
export const panelOptionsSchema = z
  .object({
    aggregate: z
      .enum(['mean', 'median'])
      .default('mean')
      .describe("How the judges' scores of one unit combine into the reported score."),
    samples: samplesSchema,
    minJudges: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'How many judges must give a verdict on a unit for it to have a panel score (default: a majority of the panel); units with fewer are missing data.',
      ),
  })
  .strict();

/** A panel's quorum: `panel.minJudges`, else a majority of its `judges` judges (a single judge: 1). */
export function minJudgesOf(panel: { minJudges?: number } | undefined, judges: number): number {
  return panel?.minJudges ?? Math.floor(judges / 2) + 1;
}

export type JudgeConfig = z.infer<typeof judgeConfigSchema>;
export type PanelJudgeConfig = z.infer<typeof panelJudgeSchema>;
export type PanelOptions = z.infer<typeof panelOptionsSchema>;
