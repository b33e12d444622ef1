import path from 'node:path';
import { z } from 'zod';
import { adapterFor, copilotConfigSchema, type CopilotConfig } from '../activities/adapters';
import { envNameSchema } from '../activities/adapters/common';
import { protocolFor, protocols } from '../rubrics';
import { caseInsensitiveDuplicates } from './names';
import type { Query } from './types';
import { InputError, loadDataFile } from './validate';
import { assertWritableDir } from './writableDir';

/** Beyond this a query is refused whatever maxQueryChars says: it would be sent to every copilot and every judge call. */
export const QUERY_CHARS_HARD_LIMIT = 200_000;

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
  })
  .strict();

/** YYYY-MM-DD naming a day that exists (no month 13, no 31 April, 29 February only in leap years). */
function isCalendarDate(s: string): boolean {
  const m = s.match(/^(\d{4})-(\d{2})-(\d{2})$/);
  if (!m) return true; // the format is the regex's to report
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

export const runConfigSchema = z
  .object({
    protocol: z.enum(protocols.map((p) => p.id) as [string, ...string[]]),
    queries: z.string().min(1),
    judge: judgeConfigSchema,
    copilots: z.array(copilotConfigSchema).min(1),
    output: z.string().default('runs'),
    /** A rubric directory other than the protocol's default (e.g. an edited copy). */
    rubric: z.string().optional(),
    /** Drives every seeded choice (presentation order, bootstrap) so a run can be reproduced. */
    seed: z.string().default('judgeflow'),
    /** Work items per child workflow; keeps every workflow history small at paper scale. */
    chunkSize: z.number().int().min(1).max(500).default(50),
    /** CryptoAnalystBench: the date the judge treats as "today" for temporal relevance. */
    evaluationDate: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'use YYYY-MM-DD, e.g. 2026-03-05')
      .refine(isCalendarDate, { error: (issue) => `evaluationDate ${String(issue.input)} is not a real calendar date; use YYYY-MM-DD, e.g. 2026-03-05` })
      .optional(),
    /** CryptoAnalystBench: judge the seven binary error flags per response. */
    errorTaxonomy: z.boolean().default(false),
    /** Set by the demo when copilots and judge are the local simulator; reports say so at the top. */
    simulated: z.boolean().default(false),
    /** A query (with its history and context) longer than this is sent anyway, with a warning at load. */
    maxQueryChars: z.number().int().min(1).max(QUERY_CHARS_HARD_LIMIT).default(20_000),
    /** Prices per million tokens, keyed by model (or copilot name for http/browser copilots): reports estimate the cost. */
    pricing: z
      .record(z.string(), z.object({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0), cachedInputPerMTok: z.number().min(0).optional() }).strict())
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const { index, first } of caseInsensitiveDuplicates(c.copilots.map((cp) => cp.name)))
      ctx.addIssue({
        code: 'custom',
        path: ['copilots', index, 'name'],
        message: `duplicate copilot name "${c.copilots[index].name}" (copilots[${first}] is "${c.copilots[first].name}"); names must differ in more than letter case, since they name files and report columns`,
      });
  });

export type RunConfig = z.infer<typeof runConfigSchema>;
export type { CopilotConfig };

const PATH_KEYS = ['path', 'storageState'] as const;

/** Paths in a config file are relative to that file. */
export function resolveConfigPaths(config: RunConfig, baseDir: string): RunConfig {
  const abs = (p: string) => path.resolve(baseDir, p);
  return {
    ...config,
    queries: abs(config.queries),
    output: abs(config.output),
    rubric: config.rubric ? abs(config.rubric) : undefined,
    copilots: config.copilots.map((c) => {
      const copy: Record<string, unknown> = { ...c };
      for (const key of PATH_KEYS) if (typeof copy[key] === 'string') copy[key] = abs(copy[key] as string);
      return copy as CopilotConfig;
    }),
  };
}

/**
 * Load, validate and resolve a run config; also validates the rubric, the query file and the output directory so a
 * bad input fails before anything starts. `warn` receives notes that do not stop the run (e.g. very long queries).
 */
export function loadRunConfig(file: string, warn: (message: string) => void = (m) => console.error(m)): RunConfig {
  const raw = loadDataFile(runConfigSchema, path.resolve(file), 'config');
  const config = resolveConfigPaths(raw, path.dirname(path.resolve(file)));
  const protocol = protocolFor(config.protocol);
  protocol.loadRubric(config.rubric ?? protocol.defaultRubricDir);
  checkQuerySizes(protocol.parseQueries(config.queries), config.queries, config.maxQueryChars, warn);
  validateCopilots(config, path.resolve(file));
  assertWritableDir(config.output, `${path.resolve(file)}: output:`);
  return config;
}

/** What every copilot and judge is sent for a query: its text, earlier turns and shared context. */
const queryChars = (q: Query) => [...q.text].length + (q.history ?? []).reduce((n, t) => n + [...t.content].length, 0) + [...(q.context ?? '')].length;

/** Refuse queries above the hard limit (naming them); warn about those above `maxQueryChars`. */
export function checkQuerySizes(queries: Query[], file: string, maxQueryChars: number, warn: (message: string) => void): void {
  const sized = queries.map((q) => ({ id: q.id, chars: queryChars(q) }));
  const list = (xs: typeof sized) => xs.slice(0, 10).map((x) => `${x.id} (${x.chars.toLocaleString('en')} characters)`).join(', ') + (xs.length > 10 ? ` and ${xs.length - 10} more` : '');
  const huge = sized.filter((x) => x.chars > QUERY_CHARS_HARD_LIMIT);
  if (huge.length)
    throw new InputError(`${file}: ${huge.length} quer${huge.length === 1 ? 'y is' : 'ies are'} longer than ${QUERY_CHARS_HARD_LIMIT.toLocaleString('en')} characters (text, history and context), which every copilot and judge call would be sent: ${list(huge)}; shorten or remove them`);
  const long = sized.filter((x) => x.chars > maxQueryChars);
  if (long.length)
    warn(`warning: ${file}: ${long.length} quer${long.length === 1 ? 'y is' : 'ies are'} longer than maxQueryChars (${maxQueryChars.toLocaleString('en')} characters) and will be sent to every copilot and judge as they are: ${list(long)}. Raise maxQueryChars in the config to silence this.`);
}

/** Each adapter's own up-front check (e.g. a CSV copilot's file and column), reported against `where` (the config file). */
export function validateCopilots(config: Pick<RunConfig, 'copilots'>, where: string): void {
  config.copilots.forEach((copilot, i) => {
    try {
      adapterFor(copilot.type).validate?.(copilot);
    } catch (error) {
      throw new InputError(`${where}: copilots[${i}] (${copilot.name}): ${(error as Error).message}`);
    }
  });
}

export function parseRunConfig(value: unknown, where: string, baseDir: string): RunConfig {
  const parsed = runConfigSchema.safeParse(value);
  if (!parsed.success) throw new InputError(parsed.error.issues.map((i) => `${where}: ${i.path.join('.')}: ${i.message}`).join('\n'));
  return resolveConfigPaths(parsed.data, baseDir);
}
