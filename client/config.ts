import path from 'node:path';
import { z } from 'zod';
import { profileOf } from '../core/llm/providers';
import { adapterFor, copilotConfigSchema, type CopilotConfig } from '../activities/adapters';
import type { StoredRunConfig } from '../activities/deps';
import { loadDataFile } from '../core/io/dataFiles';
import { describeZodError, InputError, parseWith } from '../core/model/inputError';
import { discoverAnswerFiles } from '../activities/adapters/file';
import { judgeConfigSchema, panelJudgeSchema, panelOptionsSchema } from '../core/llm/judgeConfig';
import { groundingConfigSchema } from '../core/grounding/checks';
import { loadGroundingRubric } from '../rubrics/grounding';
import { caseInsensitiveDuplicates } from '../core/model/names';
import { assertWritableDir } from '../core/io/writableDir';
import type { Query } from '../core/model/types';
import { loadConfiguredRubric, protocolFor, protocols, rubricSpecText } from '../rubrics';

/**
 * A run config, assembled from its parts: the shared keys, each copilot's adapter schema, and the protocol's own
 * options under a section named after it (`cab: { evaluationDate, errorTaxonomy }`). Only this top layer knows every
 * adapter and protocol; the layers below see a validated, path-resolved config.
 */
/** Beyond this a query is refused whatever maxQueryChars says: it would be sent to every copilot and every judge call. */
export const QUERY_CHARS_HARD_LIMIT = 200_000;
/** A rubric (its prompt files) larger than this is loaded with a warning: every judge call carries it. */
const RUBRIC_WARN_CHARS = 200_000;

const sharedKeys = {
  protocol: z.enum(protocols.map((p) => p.id) as [string, ...string[]]).describe('The benchmark protocol: which rubric, query format, judging and reports.'),
  queries: z.string().min(1).describe("The query snapshot file (LATTICE: JSON Lines; cab: the dataset's CSV or JSON Lines), relative to the config file."),
  judge: judgeConfigSchema.optional().describe('One judge; give either judge or judges (a panel), not both.'),
  judges: z.array(panelJudgeSchema).min(2).max(12).optional().describe('A judge panel: every judge unit is judged by every member; give either judge or judges.'),
  panel: panelOptionsSchema.optional().describe("How a panel's verdicts combine (only with judges)."),
  copilots: z.array(copilotConfigSchema).min(1).describe('The copilots to benchmark, each reached through the adapter its type names (with copilotsFrom, those it finds are added after these).'),
  copilotsFrom: z
    .object({
      dir: z.string().min(1).describe('The folder holding the answer files, relative to the config file.'),
      prefix: z.string().default('filtered_response_').describe('Each <prefix><name>.json in dir is one copilot named <name>.'),
    })
    .strict()
    .optional()
    .describe("Declare one copilot of type file per <prefix><name>.json in a folder, named by the file, as the LATTICE reference harness discovers its agents (e.g. { dir: responses } for filtered_response_elsa.json …)."),
  output: z.string().default('runs').describe('Directory the report files go to, as <output>/<runId>/, relative to the config file.'),
  rubric: z
    .union([
      z.string(),
      z
        .object({
          from: z.string().min(1).describe('A reference rubric the protocol builds from a fetched file (LATTICE: lattice-reference).'),
          file: z.string().min(1).optional().describe('The fetched file, relative to the config file (default: where judgeflow dataset fetch puts it, relative to the working directory).'),
        })
        .strict(),
    ])
    .optional()
    .describe("A rubric directory other than the protocol's default (e.g. an edited copy of rubrics/lattice), or { from, file } to judge with a reference harness's own texts."),
  seed: z.string().default('judgeflow').describe('Drives every seeded choice (presentation order, bootstrap) so a run can be reproduced.'),
  simulated: z.boolean().default(false).describe('Marks a run whose copilots and judge are the local simulator; reports say so at the top.'),
  maxQueryChars: z
    .number()
    .int()
    .min(1)
    .max(QUERY_CHARS_HARD_LIMIT)
    .default(20_000)
    .describe('Warn at load about queries longer than this (text, history and context); they are sent anyway. Above 200,000 a query is refused.'),
  grounding: groundingConfigSchema.optional().describe("Hallucination and citation checks of every answer against its copilot's own context, as a stage of the run (docs/grounding.md)."),
  maxAnswerChars: z
    .number()
    .int()
    .min(1_000)
    .max(50_000_000)
    .default(200_000)
    .describe('Longest copilot answer sent to the judge (and shown per row in report.html); a longer answer is stored and exported whole, truncated for the judge with a note saying so.'),
  storeOutageMinutes: z
    .number()
    .min(0)
    .max(7 * 24 * 60)
    .default(30)
    .describe('How long a worker waits for an unreachable results store (e.g. PostgreSQL restarting) before an activity gives up; answers already received are held meanwhile, never re-asked or failed.'),
  pricing: z
    .record(
      z.string(),
      z
        .object({
          inputPerMTok: z.number().min(0).describe('USD per million input (prompt) tokens.'),
          outputPerMTok: z.number().min(0).describe('USD per million output (completion) tokens.'),
          cachedInputPerMTok: z.number().min(0).optional().describe('USD per million cached input tokens (default: the input price).'),
          batchInputPerMTok: z.number().min(0).optional().describe('USD per million input tokens of a Batch API call (default: half the input price).'),
          batchOutputPerMTok: z.number().min(0).optional().describe('USD per million output tokens of a Batch API call (default: half the output price).'),
        })
        .strict(),
    )
    .optional()
    .describe('Prices per million tokens, keyed by model (or copilot name for http/browser copilots); reports estimate the cost.'),
  failFast: z
    .union([
      z.literal(false),
      z
        .object({
          firstCalls: z.number().int().min(1).max(1000).default(5).describe("How many of an endpoint's first items may fail, every one for a non-transient reason, before the run pauses."),
          window: z.number().int().min(1).max(10_000).default(20).describe("How many of an endpoint's last finished items the failure rate is measured over (once that many have finished)."),
          maxFailureRate: z.number().gt(0).max(1).default(0.5).describe('The share of that window failed for a non-transient reason at which the run pauses (0.5: half of the last `window` items).'),
        })
        .strict(),
    ])
    .optional()
    .describe("Circuit breaker: pause the run, with the endpoint's own words, when its first items all fail for a non-transient reason (default firstCalls 5), when over its last `window` items (default 20) the share so failed reaches maxFailureRate (default 0.5), and at once when it is out of quota or credit; false turns the item rules off."),
  budget: z
    .object({
      usd: z.number().positive().optional().describe('Pause the run once its calls cost this much in US dollars, as the endpoints reported their usage (needs `pricing` for every endpoint that makes calls).'),
      tokens: z.number().int().positive().optional().describe('Pause the run once its calls used this many tokens (prompt + completion, as the endpoints reported).'),
    })
    .strict()
    .refine((b) => b.usd !== undefined || b.tokens !== undefined, { message: 'give usd, tokens or both' })
    .optional()
    .describe('A spending cap: at 80% the run records a warning, at the cap it pauses (judgeflow resume RUN_ID --budget-usd N raises it and continues).'),
  priority: z
    .number()
    .int()
    .min(1)
    .max(5)
    .optional()
    .describe("The run's place on a shared cluster: Temporal task priority 1 (first; CI gates) to 5 (last; big sweeps), default 3. Runs at one priority share workers in turn (each run is its own fairness key). judgeflow run --priority N overrides it; not part of the run's identity."),
};

export const runConfigSchema = z
  .object({ ...sharedKeys, ...Object.fromEntries(protocols.map((p) => [p.id, p.optionsSchema.optional()])) })
  .strict()
  .superRefine((c, ctx) => {
    if (!c.judge === !c.judges)
      ctx.addIssue({ code: 'custom', path: c.judge ? ['judges'] : ['judge'], message: c.judge ? 'give either judge: (one judge) or judges: (a panel), not both' : 'missing: give judge: (one judge) or judges: (a panel of two or more)' });
    if (c.panel?.minJudges !== undefined && c.judges && c.panel.minJudges > c.judges.length)
      ctx.addIssue({ code: 'custom', path: ['panel', 'minJudges'], message: `panel.minJudges is ${c.panel.minJudges}, but the panel has ${c.judges.length} judges; at most ${c.judges.length}` });
    if (c.panel && !c.judges) ctx.addIssue({ code: 'custom', path: ['panel'], message: 'panel: options apply to judges: (a panel); with one judge use judge.samples' });
    for (const { index, first } of caseInsensitiveDuplicates((c.judges ?? []).map((j) => j.name)))
      ctx.addIssue({ code: 'custom', path: ['judges', index, 'name'], message: `duplicate judge name "${c.judges![index].name}" (judges[${first}] is "${c.judges![first].name}"); every panel member needs its own name` });
    for (const { index, first } of caseInsensitiveDuplicates(c.copilots.map((cp) => cp.name)))
      ctx.addIssue({
        code: 'custom',
        path: ['copilots', index, 'name'],
        message: `duplicate copilot name "${c.copilots[index].name}" (copilots[${first}] is "${c.copilots[first].name}"); names must differ in more than letter case, since they name files and report columns`,
      });
    if (c.budget?.usd !== undefined)
      for (const { path: where, key } of unpricedEndpoints(c))
        ctx.addIssue({ code: 'custom', path: ['budget', 'usd'], message: `a budget in USD needs a price for every endpoint that makes calls; ${where} has none: add pricing: { ${JSON.stringify(key)}: { inputPerMTok, outputPerMTok } } (or budget only tokens)` });
    for (const p of protocols)
      if (p.id !== c.protocol && (c as Record<string, unknown>)[p.id] !== undefined)
        ctx.addIssue({ code: 'custom', path: [p.id], message: `options of protocol "${p.id}", but this config runs protocol "${c.protocol}"; remove the section` });
  });

/**
 * Endpoints whose calls a USD budget could not price: each judge (priced by model) and each copilot that makes calls
 * (priced by model, or by name for http and browser copilots, as core/stats/cost.ts reads `pricing`).
 */
function unpricedEndpoints(c: { judge?: { model: string }; judges?: Array<{ name: string; model: string }>; grounding?: { judge?: { model: string } }; copilots: Array<{ name: string; type: string; model?: unknown }>; pricing?: Record<string, unknown> }): Array<{ path: string; key: string }> {
  const priced = (key: string | undefined) => key !== undefined && Boolean(c.pricing?.[key]);
  const out: Array<{ path: string; key: string }> = [];
  if (c.judge && !priced(c.judge.model)) out.push({ path: `judge (model ${c.judge.model})`, key: c.judge.model });
  for (const j of c.judges ?? []) if (!priced(j.model)) out.push({ path: `judge ${j.name} (model ${j.model})`, key: j.model });
  const grounding = c.grounding?.judge;
  if (grounding && !priced(grounding.model)) out.push({ path: `grounding.judge (model ${grounding.model})`, key: grounding.model });
  for (const cp of c.copilots) {
    if (cp.type === 'csv' || cp.type === 'file') continue; // answers read from a file: no calls
    const model = typeof cp.model === 'string' ? cp.model : undefined;
    if (!priced(model) && !priced(cp.name)) out.push({ path: `copilot ${cp.name}${model ? ` (model ${model})` : ''}`, key: model ?? cp.name });
  }
  return out;
}

export type RunConfig = z.infer<z.ZodObject<typeof sharedKeys>> & Record<string, unknown>;
export type { CopilotConfig };

/**
 * Configs written before protocol options had their own section put them at the top level (`evaluationDate: ...`);
 * such keys of the chosen protocol are moved into its section (the section's own value wins).
 */
function liftLegacyOptions(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const raw = { ...(value as Record<string, unknown>) };
  const protocol = protocols.find((p) => p.id === raw.protocol);
  if (!protocol) return raw;
  const section = raw[protocol.id];
  const lifted: Record<string, unknown> = {};
  for (const key of Object.keys(protocol.optionsSchema.shape)) {
    if (key in sharedKeys || !(key in raw)) continue;
    lifted[key] = raw[key];
    delete raw[key];
  }
  if (Object.keys(lifted).length) raw[protocol.id] = section && typeof section === 'object' && !Array.isArray(section) ? { ...lifted, ...section } : section ?? lifted;
  return raw;
}

/** The protocol's section with its defaults filled in, so the stored config says exactly what the run used. */
function withProtocolOptions(config: RunConfig): RunConfig {
  const protocol = protocolFor(config.protocol);
  return { ...config, [protocol.id]: protocol.optionsSchema.parse(config[protocol.id] ?? {}) };
}

const PATH_KEYS = ['path', 'storageState'] as const;

/**
 * A reference rubric's file: relative to the config file when given; else where `dataset fetch` puts it, relative to
 * the working directory now (the worker that later loads it may run elsewhere).
 */
function referenceRubricPaths(protocolId: string, spec: { from: string; file?: string }, abs: (p: string) => string): { from: string; file?: string } {
  if (spec.file) return { ...spec, file: abs(spec.file) };
  const builder = protocols.find((p) => p.id === protocolId)?.referenceRubrics?.[spec.from];
  return builder ? { ...spec, file: path.resolve(builder.defaultFile) } : spec;
}

/** Paths in a config file are relative to that file. */
export function resolveConfigPaths(config: RunConfig, baseDir: string): RunConfig {
  const abs = (p: string) => path.resolve(baseDir, p);
  return {
    ...config,
    queries: abs(config.queries),
    output: abs(config.output),
    rubric: config.rubric === undefined || typeof config.rubric === 'string' ? (config.rubric && abs(config.rubric)) : referenceRubricPaths(config.protocol, config.rubric, abs),
    ...(config.grounding ? { grounding: { ...config.grounding, ...(config.grounding.rubric ? { rubric: abs(config.grounding.rubric) } : {}) } } : {}),
    copilots: config.copilots.map((c) => {
      const copy: Record<string, unknown> = { ...c };
      for (const key of PATH_KEYS) if (typeof copy[key] === 'string') copy[key] = abs(copy[key] as string);
      const traces = copy.traces as { dir?: unknown } | undefined;
      if (traces && typeof traces.dir === 'string') copy.traces = { ...traces, dir: abs(traces.dir) };
      return copy as CopilotConfig;
    }),
  };
}

/**
 * Load, validate and resolve a run config; also validates the rubric, the query file and the output directory so a
 * bad input fails before anything starts. `warn` receives notes that do not stop the run (very long queries, history
 * a copilot cannot send).
 */
export function loadRunConfig(file: string, warn: (message: string) => void = (m) => console.error(m)): RunConfig {
  const where = path.resolve(file);
  const raw = loadDataFile(z.unknown(), where, 'config');
  refuseRemovedKeys(raw, where);
  const config = resolveConfigPaths(withProtocolOptions(parseWith(runConfigSchema, liftLegacyOptions(expandCopilotsFrom(raw, path.dirname(where), where)), where) as RunConfig), path.dirname(where));
  const protocol = protocolFor(config.protocol);
  const rubric = loadConfiguredRubric(protocol, config.rubric);
  const rubricChars = JSON.stringify(rubric.content).length;
  if (rubricChars > RUBRIC_WARN_CHARS)
    warn(`warning: ${rubricSpecText(protocol, config.rubric)}: the rubric's prompt files come to ${rubricChars.toLocaleString('en')} characters, and every judge call sends them (the published rubrics are a few thousand); check that the right files are named`);
  if (config.grounding) loadGroundingRubric(config.grounding.rubric);
  const queries = protocol.parseQueries(config.queries, { rubric, warn });
  checkQuerySizes(queries, config.queries, config.maxQueryChars, warn);
  validateCopilots(config, where);
  assertWritableDir(config.output, `${where}: output:`);
  for (const message of historyWarnings(config, queries)) warn(`warning: ${where}: ${message}`);
  for (const message of samplesWarnings(config, rubric.judge.temperature)) warn(`warning: ${where}: ${message}`);
  return config;
}

/**
 * Repeated samples are independent draws only if the judge varies between them: at temperature 0, a provider that
 * ignores or lacks a seed (core/providers: seedHonoured false) answers near-identically, and the reliability figures
 * computed from the samples come out inflated.
 */
export function samplesWarnings(config: Pick<RunConfig, 'judge' | 'judges' | 'panel'>, rubricTemperature: number): string[] {
  const samples = config.judge?.samples ?? config.panel?.samples ?? 1;
  if (samples <= 1) return [];
  const judges = config.judge ? [{ ...config.judge, name: undefined as string | undefined }] : (config.judges ?? []);
  return judges.flatMap((j) => {
    const temperature = j.temperature === undefined ? rubricTemperature : j.temperature;
    const profile = profileOf(j);
    if (temperature !== 0 || profile.seedHonoured) return [];
    return [`judge${j.name ? ` ${j.name}` : ''}: ${samples} samples at temperature 0 from provider ${profile.id}, which does not honour a seed: the samples will be near-identical and the reliability figures inflated; raise the judge's temperature (e.g. 0.7) for independent samples`];
  });
}

/** What every copilot and judge is sent for a query: its text, earlier turns and any shared context field. */
const queryChars = (q: Query) => [...q.text].length + (q.history ?? []).reduce((n, t) => n + [...t.content].length, 0) + (typeof q.context === 'string' ? [...q.context].length : 0);

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

/** A multi-turn query sent to a copilot type that cannot send earlier turns reaches it as a single question. */
export function historyWarnings(config: Pick<RunConfig, 'copilots'>, queries: Query[]): string[] {
  const multiTurn = queries.filter((q) => q.history?.length).length;
  if (!multiTurn) return [];
  return config.copilots
    .filter((c) => !adapterFor(c.type).supportsHistory)
    .map(
      (c) =>
        `${multiTurn} of ${queries.length} queries carry earlier turns (history), but copilot "${c.name}" (type ${c.type}) cannot send them: it is asked only the last question. Use an openai or http copilot for multi-turn queries, or drop their history.`,
    );
}

/** Keys that meant something once: a config that still sets one is told what to do, not just "unrecognized key". */
const REMOVED_KEYS: Record<string, string> = {
  chunkSize: 'chunkSize was removed: runs judge while they collect',
};

function refuseRemovedKeys(value: unknown, where: string): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  const found = Object.keys(REMOVED_KEYS).filter((key) => key in value);
  if (found.length) throw new InputError(found.map((key) => `${where}: ${REMOVED_KEYS[key]}; delete the key from ${where}`).join('\n'));
}

/**
 * `copilotsFrom`: the copilots it finds become ordinary `type: file` entries of `copilots` (absolute paths), and the key
 * is dropped, so the stored config lists every copilot the run asked and is read back the same way.
 */
function expandCopilotsFrom(value: unknown, baseDir: string, where: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('copilotsFrom' in value)) return value;
  const { copilotsFrom, ...rest } = value as Record<string, unknown>;
  const parsed = runConfigSchema.shape.copilotsFrom.safeParse(copilotsFrom);
  if (!parsed.success || !parsed.data) throw new InputError(parsed.error ? describeZodError(parsed.error, `${where}: copilotsFrom`) : `${where}: copilotsFrom: expected { dir, prefix? }`);
  let found;
  try {
    found = discoverAnswerFiles(path.resolve(baseDir, parsed.data.dir), parsed.data.prefix);
  } catch (error) {
    throw new InputError(`${where}: ${(error as Error).message}`);
  }
  const listed = Array.isArray(rest.copilots) ? rest.copilots : [];
  return { ...rest, copilots: [...listed, ...found.map((f) => ({ name: f.name, type: 'file', path: f.path }))] };
}

export function parseRunConfig(value: unknown, where: string, baseDir: string): RunConfig {
  refuseRemovedKeys(value, where);
  const parsed = runConfigSchema.safeParse(liftLegacyOptions(expandCopilotsFrom(value, baseDir, where)));
  if (!parsed.success) throw new InputError(parsed.error.issues.map((i) => `${where}: ${i.path.join('.')}: ${i.message}`).join('\n'));
  return resolveConfigPaths(withProtocolOptions(parsed.data as RunConfig), baseDir);
}

// The layers below read a run's config through StoredRunConfig; a config this module accepts must be one.
const _fitsStoredConfig = (c: RunConfig): StoredRunConfig => c;
void _fitsStoredConfig;
