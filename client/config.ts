import path from 'node:path';
import { z } from 'zod';
import { profileOf } from '../core/llm/providers';
import { adapterFor } from '../activities/adapters';
import { runConfigSchema, type CopilotConfig, type RunConfig } from '../services/runConfig';
import { liftLegacyOptions, QUERY_CHARS_HARD_LIMIT, REMOVED_KEYS } from '../core/model/runConfig';
import { loadDataFile } from '../core/io/dataFiles';
import { describeZodError, InputError, parseWith } from '../core/model/inputError';
import { discoverAnswerFiles } from '../activities/adapters/file';
import { loadGroundingRubric } from '../rubrics/grounding';
import { assertWritableDir } from '../core/io/writableDir';
import type { Query } from '../core/model/types';
import { loadConfiguredRubric, protocolFor, protocols, rubricSpecText } from '../rubrics';

/** A rubric (its prompt files) larger than this is loaded with a warning: every judge call carries it. */
const RUBRIC_WARN_CHARS = 200_000;

export { QUERY_CHARS_HARD_LIMIT, runConfigSchema, type CopilotConfig, type RunConfig };

/** A config's top-level options of its protocol (older configs) moved into the protocol's section. */
function withLegacyOptionsLifted(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const raw = value as Record<string, unknown>;
  const protocol = protocols.find((p) => p.id === raw.protocol);
  return protocol ? liftLegacyOptions(protocol, raw) : raw;
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
function referenceRubricPaths(
  protocolId: string,
  spec: { from: string; file?: string },
  abs: (p: string) => string,
): { from: string; file?: string } {
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
    rubric:
      config.rubric === undefined || typeof config.rubric === 'string'
        ? config.rubric && abs(config.rubric)
        : referenceRubricPaths(config.protocol, config.rubric, abs),
    ...(config.grounding
      ? {
          grounding: {
            ...config.grounding,
            ...(config.grounding.rubric ? { rubric: abs(config.grounding.rubric) } : {}),
          },
        }
      : {}),
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
  const config = resolveConfigPaths(
    withProtocolOptions(
      parseWith(runConfigSchema, withLegacyOptionsLifted(expandCopilotsFrom(raw, path.dirname(where), where)), where),
    ),
    path.dirname(where),
  );
  const protocol = protocolFor(config.protocol);
  const rubric = loadConfiguredRubric(protocol, config.rubric);
  const rubricChars = JSON.stringify(rubric.content).length;
  if (rubricChars > RUBRIC_WARN_CHARS)
    warn(
      `warning: ${rubricSpecText(protocol, config.rubric)}: the rubric's prompt files come to ${rubricChars.toLocaleString('en')} characters, and every judge call sends them (the published rubrics are a few thousand); check that the right files are named`,
    );
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
export function samplesWarnings(
  config: Pick<RunConfig, 'judge' | 'judges' | 'panel'>,
  rubricTemperature: number,
): string[] {
  const samples = config.judge?.samples ?? config.panel?.samples ?? 1;
  if (samples <= 1) return [];
  const judges = config.judge ? [{ ...config.judge, name: undefined as string | undefined }] : (config.judges ?? []);
  return judges.flatMap((j) => {
    const temperature = j.temperature === undefined ? rubricTemperature : j.temperature;
    const profile = profileOf(j);
    if (temperature !== 0 || profile.seedHonoured) return [];
    return [
      `judge${j.name ? ` ${j.name}` : ''}: ${samples} samples at temperature 0 from provider ${profile.id}, which does not honour a seed: the samples will be near-identical and the reliability figures inflated; raise the judge's temperature (e.g. 0.7) for independent samples`,
    ];
  });
}

/** What every copilot and judge is sent for a query: its text, earlier turns and any shared context field. */
const queryChars = (q: Query) =>
  [...q.text].length +
  (q.history ?? []).reduce((n, t) => n + [...t.content].length, 0) +
  (typeof q.context === 'string' ? [...q.context].length : 0);

/** Refuse queries above the hard limit (naming them); warn about those above `maxQueryChars`. */
export function checkQuerySizes(
  queries: Query[],
  file: string,
  maxQueryChars: number,
  warn: (message: string) => void,
): void {
  const sized = queries.map((q) => ({ id: q.id, chars: queryChars(q) }));
  const list = (xs: typeof sized) =>
    xs
      .slice(0, 10)
      .map((x) => `${x.id} (${x.chars.toLocaleString('en')} characters)`)
      .join(', ') + (xs.length > 10 ? ` and ${xs.length - 10} more` : '');
  const huge = sized.filter((x) => x.chars > QUERY_CHARS_HARD_LIMIT);
  if (huge.length)
    throw new InputError(
      `${file}: ${huge.length} quer${huge.length === 1 ? 'y is' : 'ies are'} longer than ${QUERY_CHARS_HARD_LIMIT.toLocaleString('en')} characters (text, history and context), which every copilot and judge call would be sent: ${list(huge)}; shorten or remove them`,
    );
  const long = sized.filter((x) => x.chars > maxQueryChars);
  if (long.length)
    warn(
      `warning: ${file}: ${long.length} quer${long.length === 1 ? 'y is' : 'ies are'} longer than maxQueryChars (${maxQueryChars.toLocaleString('en')} characters) and will be sent to every copilot and judge as they are: ${list(long)}. Raise maxQueryChars in the config to silence this.`,
    );
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

function refuseRemovedKeys(value: unknown, where: string): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  const found = Object.keys(REMOVED_KEYS).filter((key) => key in value);
  if (found.length)
    throw new InputError(found.map((key) => `${where}: ${REMOVED_KEYS[key]}; delete the key from ${where}`).join('\n'));
}

/**
 * `copilotsFrom`: the copilots it finds become ordinary `type: file` entries of `copilots` (absolute paths), and the key
 * is dropped, so the stored config lists every copilot the run asked and is read back the same way.
 */
function expandCopilotsFrom(value: unknown, baseDir: string, where: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('copilotsFrom' in value)) return value;
  const { copilotsFrom, ...rest } = value as Record<string, unknown>;
  const parsed = runConfigSchema.shape.copilotsFrom.safeParse(copilotsFrom);
  if (!parsed.success || !parsed.data)
    throw new InputError(
      parsed.error
        ? describeZodError(parsed.error, `${where}: copilotsFrom`)
        : `${where}: copilotsFrom: expected { dir, prefix? }`,
    );
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
  const parsed = runConfigSchema.safeParse(withLegacyOptionsLifted(expandCopilotsFrom(value, baseDir, where)));
  if (!parsed.success)
    throw new InputError(parsed.error.issues.map((i) => `${where}: ${i.path.join('.')}: ${i.message}`).join('\n'));
  return resolveConfigPaths(withProtocolOptions(parsed.data), baseDir);
}
