import { envNameSchema } from '../activities/adapters/common';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { assertWritableDir } from '../core/io/writableDir';
import type { ParseArgsConfig } from 'node:util';
import { loadCategoriesFile } from '../core/snapshots/categoriesFile';
import { PROVIDER_IDS, profileOf, type ProviderId } from '../core/llm/providers';
import { parseRunConfig, validateCopilots, type RunConfig } from './config';
import { InputError } from '../core/model/inputError';
import { readText } from '../core/io/dataFiles';
import { curationOf } from '../activities/curate';
import { loadConfiguredRubric, protocolFor, protocols } from '../rubrics';
import type { CurateInput, GenerateInput, LlmSettings } from '../contract/snapshot';

/** Options of `snapshot generate`, `snapshot curate` and `schedule create --refresh ...`, turned into validated workflow inputs. */

type Values = Record<string, string | boolean | string[] | undefined>;

export const llmOptions: NonNullable<ParseArgsConfig['options']> = {
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'api-key-env': { type: 'string' },
  provider: { type: 'string' },
  temperature: { type: 'string' },
  concurrency: { type: 'string' },
  'timeout-ms': { type: 'string' },
  seed: { type: 'string' },
  parent: { type: 'string' },
  similarity: { type: 'string' },
};

export const generateOptions: NonNullable<ParseArgsConfig['options']> = {
  protocol: { type: 'string' },
  'per-cell': { type: 'string' },
  tasks: { type: 'string' },
  categories: { type: 'string' },
  'max-rounds': { type: 'string' },
  'over-ask': { type: 'string' },
  extend: { type: 'boolean' },
};

export const curateOptions: NonNullable<ParseArgsConfig['options']> = {
  from: { type: 'string' },
  target: { type: 'string' },
  'min-chars': { type: 'string' },
  'max-chars': { type: 'string' },
  categories: { type: 'string' },
  'prune-run': { type: 'string' },
  'prune-threshold': { type: 'string' },
  'prune-metric': { type: 'string' },
  'skip-bad': { type: 'boolean' },
  'batch-size': { type: 'string' },
};

export const GENERATE_USAGE =
  '--protocol lattice [--per-cell 15] [--tasks T1,T2] [--categories C1,C2] [--seed S] [--model M --base-url URL --api-key-env VAR --provider P] [--temperature 0.9] [--concurrency 4] [--max-rounds 4] [--over-ask 0.5] [--similarity 0.8] [--parent ID [--extend]]';
export const CURATE_USAGE =
  '--from traffic.jsonl [--target 200] [--min-chars 15 --max-chars 500] [--categories FILE] [--prune-run RUN_ID --prune-threshold 8 --prune-metric mean|total] [--seed S] [--skip-bad] [--model M --base-url URL --api-key-env VAR --provider P] [--batch-size 20] [--similarity 0.8] [--parent ID]';

function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

export function numberOption(
  values: Values,
  name: string,
  fallback: number,
  check: { min?: number; max?: number; integer?: boolean } = {},
): number {
  const raw = str(values, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const bad =
    !Number.isFinite(n) ||
    (check.integer && !Number.isInteger(n)) ||
    (check.min !== undefined && n < check.min) ||
    (check.max !== undefined && n > check.max);
  if (bad) {
    const range = [check.min !== undefined ? `>= ${check.min}` : '', check.max !== undefined ? `<= ${check.max}` : '']
      .filter(Boolean)
      .join(' and ');
    throw new InputError(
      `--${name} ${raw}: expected ${check.integer ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}`,
    );
  }
  return n;
}

const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

function llm(values: Values, defaults: { temperature: number }): LlmSettings {
  const baseURL = str(values, 'base-url') ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
  try {
    new URL(baseURL);
  } catch {
    throw new InputError(`--base-url ${baseURL}: not a URL (e.g. http://127.0.0.1:8000/v1)`);
  }
  const provider = str(values, 'provider');
  if (provider !== undefined && !(PROVIDER_IDS as readonly string[]).includes(provider))
    throw new InputError(
      `--provider ${provider}: expected one of ${PROVIDER_IDS.join(', ')} (see judgeflow providers)`,
    );
  const apiKeyEnv = str(values, 'api-key-env') ?? 'OPENAI_API_KEY';
  if (!envNameSchema.safeParse(apiKeyEnv).success)
    throw new InputError(`--api-key-env ${apiKeyEnv}: give the NAME of an environment variable, not a key`);
  return {
    baseURL,
    model: str(values, 'model') ?? 'gpt-4o-mini',
    apiKeyEnv,
    temperature: numberOption(values, 'temperature', defaults.temperature, { min: 0, max: 2 }),
    timeoutMs: numberOption(values, 'timeout-ms', 120_000, { min: 100, integer: true }),
    concurrency: numberOption(values, 'concurrency', 4, { min: 1, max: 64, integer: true }),
    maxAttempts: 5,
    ...(provider ? { provider: provider as ProviderId } : {}),
    // The provider profile's response format (DeepSeek: JSON mode, the schema then goes in the prompt). LlmSettings
    // (contract/snapshot.ts) still requires the field, so it is filled from the profile here.
    responseFormat: profileOf({ provider, baseURL }).responseFormat === 'json_object' ? 'json_object' : 'json_schema',
  };
}

/** Protocols with the given snapshot hook, for error messages. */
const protocolsThat = (kind: 'generate' | 'curate') =>
  protocols
    .filter((p) => p.snapshots?.[kind])
    .map((p) => `"${p.id}"`)
    .join(', ');

export function generateInput(values: Values): GenerateInput {
  const protocol = str(values, 'protocol') ?? 'lattice';
  if (!protocolFor(protocol).snapshots?.generate)
    throw new InputError(
      `--protocol ${protocol}: only ${protocolsThat('generate')} queries are generated (CryptoAnalystBench queries are curated from traffic: judgeflow snapshot curate)`,
    );
  return {
    protocol,
    perCell: numberOption(values, 'per-cell', 15, { min: 1, max: 200, integer: true }),
    tasks: list(str(values, 'tasks')),
    categories: list(str(values, 'categories')),
    seed: str(values, 'seed') ?? 'judgeflow',
    llm: llm(values, { temperature: 0.9 }),
    parentId: str(values, 'parent') ?? null,
    ...(values.extend ? { extend: true } : {}),
    maxRounds: numberOption(values, 'max-rounds', 4, { min: 1, max: 20, integer: true }),
    overAsk: numberOption(values, 'over-ask', 0.5, { min: 0, max: 5 }),
    similarity: numberOption(values, 'similarity', 0.8, { min: 0.05, max: 1 }),
  };
}

/** `from` is checked by the caller (a file now; a file, directory or glob for a schedule). */
export function curateInput(values: Values, from: string): CurateInput {
  const minChars = numberOption(values, 'min-chars', 15, { min: 0, integer: true });
  const maxChars = numberOption(values, 'max-chars', 500, { min: 1, integer: true });
  if (minChars > maxChars) throw new InputError(`--min-chars ${minChars} is above --max-chars ${maxChars}`);
  const metric = str(values, 'prune-metric') ?? 'mean';
  if (metric !== 'mean' && metric !== 'total')
    throw new InputError(
      `--prune-metric ${metric}: expected "mean" (mean dimension score) or "total" (the protocol's total)`,
    );
  const categoriesFile = str(values, 'categories');
  const input: CurateInput = {
    from: path.resolve(from),
    target: numberOption(values, 'target', 200, { min: 1, integer: true }),
    minChars,
    maxChars,
    categories: categoriesFile
      ? loadCategoriesFile(path.resolve(categoriesFile))
      : [...curationOf(CURATED_PROTOCOL).defaultCategories],
    ...(str(values, 'prune-run') ? { pruneRunId: str(values, 'prune-run') } : {}),
    pruneThreshold: numberOption(values, 'prune-threshold', 8),
    pruneMetric: metric,
    seed: str(values, 'seed') ?? 'judgeflow',
    skipBad: Boolean(values['skip-bad']),
    llm: llm(values, { temperature: 0 }),
    batchSize: numberOption(values, 'batch-size', 20, { min: 1, max: 200, integer: true }),
    similarity: numberOption(values, 'similarity', 0.8, { min: 0.05, max: 1 }),
    parentId: str(values, 'parent') ?? null,
  };
  checkEnumLimit(input);
  return input;
}

/**
 * OpenAI's strict structured outputs allow at most 1,000 enum values in one schema (structured outputs guide, limits);
 * the tagging schema has one enum of the categories per query of a batch, so batch size × categories must stay under it.
 */
export const STRICT_ENUM_LIMIT = 1000;
function checkEnumLimit(input: CurateInput): void {
  const profile = profileOf(input.llm);
  const values = input.batchSize * input.categories.length;
  if (
    values > STRICT_ENUM_LIMIT &&
    profile.responseFormat === 'json_schema' &&
    profile.strict &&
    input.llm.responseFormat !== 'json_object'
  )
    throw new InputError(
      `--batch-size ${input.batchSize} × ${input.categories.length} categories = ${values} enum values in the tagging schema, above the ${STRICT_ENUM_LIMIT} that strict structured outputs allow (provider ${profile.id}); use --batch-size ${Math.max(1, Math.floor(STRICT_ENUM_LIMIT / input.categories.length))} or fewer`,
    );
}

export function newJobId(kind: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `snapshot-${kind}-${stamp}-${crypto.randomBytes(3).toString('hex')}`;
}

/** Curation from traffic makes CryptoAnalystBench queries (the only protocol with a curation hook today). */
const CURATED_PROTOCOL = 'cab';

/** The protocol whose queries a refresh makes. */
export const protocolOfRefresh = (kind: 'generate' | 'curate', input?: { protocol?: string }) =>
  input?.protocol ?? (kind === 'generate' ? 'lattice' : CURATED_PROTOCOL);

/**
 * A run config for `--then-run`: its queries come from the new snapshot, so a `queries:` key is optional (and ignored).
 * Validated now (schema, paths, rubric, each copilot's adapter check) so a scheduled run cannot fail on a typo weeks later.
 */
export function loadThenRunConfig(
  file: string,
  kind: 'generate' | 'curate' | 'none',
  input?: { protocol?: string },
): RunConfig {
  const abs = path.resolve(file);
  let raw: unknown;
  try {
    raw = YAML.parse(readText(abs, '--then-run config'));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`${abs}: not valid YAML/JSON: ${(error as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new InputError(`${abs}: a run config must be a mapping (see judgeflow run --help)`);
  const config = parseRunConfig(
    { queries: 'snapshot:pending', ...(raw as Record<string, unknown>) },
    abs,
    path.dirname(abs),
  );
  // A fixed snapshot (refresh none) names its protocol only when a generator or an import recorded it.
  const expected = kind === 'none' ? (input?.protocol ?? config.protocol) : protocolOfRefresh(kind, input);
  if (config.protocol !== expected && kind === 'none')
    throw new InputError(
      `${abs}: protocol "${config.protocol}" cannot run a snapshot made for protocol "${expected}"; use protocol: ${expected}`,
    );
  if (config.protocol !== expected)
    throw new InputError(
      `${abs}: protocol "${config.protocol}" cannot run on a ${kind === 'generate' ? 'generated LATTICE' : 'curated CryptoAnalystBench'} snapshot; use protocol: ${expected}`,
    );
  const protocol = protocolFor(config.protocol);
  loadConfiguredRubric(protocol, config.rubric);
  validateCopilots(config, abs);
  assertWritableDir(config.output, `${abs}: output:`);
  return { ...config, queries: 'snapshot:pending' };
}

/** Up-front check of a traffic source path for a schedule (a file, a directory or a glob). */
export function assertTrafficSource(from: string): void {
  const dir = /[*?]/.test(path.basename(from)) ? path.dirname(from) : from;
  if (!fs.existsSync(dir)) throw new InputError(`--from ${from}: ${dir} does not exist`);
}
