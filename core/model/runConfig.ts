import { z } from 'zod';
import { judgeConfigSchema, panelJudgeSchema, panelOptionsSchema } from '../llm/judgeConfig';
import { groundingConfigSchema } from '../grounding/checks';

/**
 * The run config's keys that need no adapter or protocol: everything but `protocol` (an enum of the registered
 * protocols), `copilots` (each adapter's schema) and the protocols' own sections, which services/runConfig.ts adds
 * (activities/adapters/ and rubrics/ sit above core/). Pure zod: contract/ derives the workflow's view of a run config
 * from these types (`import type`), so the workflow bundle never loads zod.
 */

/** Beyond this a query is refused whatever maxQueryChars says: it would be sent to every copilot and every judge call. */
export const QUERY_CHARS_HARD_LIMIT = 200_000;

export const failFastSchema = z.union([
  z.literal(false),
  z
    .object({
      firstCalls: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(5)
        .describe(
          "How many of an endpoint's first items may fail, every one for a non-transient reason, before the run pauses.",
        ),
      window: z
        .number()
        .int()
        .min(1)
        .max(10_000)
        .default(20)
        .describe(
          "How many of an endpoint's last finished items the failure rate is measured over (once that many have finished).",
        ),
      maxFailureRate: z
        .number()
        .gt(0)
        .max(1)
        .default(0.5)
        .describe(
          'The share of that window failed for a non-transient reason at which the run pauses (0.5: half of the last `window` items).',
        ),
    })
    .strict(),
]);

export const budgetSchema = z
  .object({
    usd: z
      .number()
      .positive()
      .optional()
      .describe(
        'Pause the run once its calls cost this much in US dollars, as the endpoints reported their usage (needs `pricing` for every endpoint that makes calls).',
      ),
    tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Pause the run once its calls used this many tokens (prompt + completion, as the endpoints reported).'),
  })
  .strict()
  .refine((b) => b.usd !== undefined || b.tokens !== undefined, { message: 'give usd, tokens or both' });

export const runConfigKeys = {
  queries: z
    .string()
    .min(1)
    .describe(
      "The query snapshot file (LATTICE: JSON Lines; cab: the dataset's CSV or JSON Lines), relative to the config file.",
    ),
  judge: judgeConfigSchema.optional().describe('One judge; give either judge or judges (a panel), not both.'),
  judges: z
    .array(panelJudgeSchema)
    .min(2)
    .max(12)
    .optional()
    .describe('A judge panel: every judge unit is judged by every member; give either judge or judges.'),
  panel: panelOptionsSchema.optional().describe("How a panel's verdicts combine (only with judges)."),
  copilotsFrom: z
    .object({
      dir: z.string().min(1).describe('The folder holding the answer files, relative to the config file.'),
      prefix: z
        .string()
        .default('filtered_response_')
        .describe('Each <prefix><name>.json in dir is one copilot named <name>.'),
    })
    .strict()
    .optional()
    .describe(
      'Declare one copilot of type file per <prefix><name>.json in a folder, named by the file, as the LATTICE reference harness discovers its agents (e.g. { dir: responses } for filtered_response_elsa.json …).',
    ),
  output: z
    .string()
    .default('runs')
    .describe('Directory the report files go to, as <output>/<runId>/, relative to the config file.'),
  rubric: z
    .union([
      z.string(),
      z
        .object({
          from: z
            .string()
            .min(1)
            .describe('A reference rubric the protocol builds from a fetched file (LATTICE: lattice-reference).'),
          file: z
            .string()
            .min(1)
            .optional()
            .describe(
              'The fetched file, relative to the config file (default: where judgeflow dataset fetch puts it, relative to the working directory).',
            ),
        })
        .strict(),
    ])
    .optional()
    .describe(
      "A rubric directory other than the protocol's default (e.g. an edited copy of rubrics/lattice), or { from, file } to judge with a reference harness's own texts.",
    ),
  seed: z
    .string()
    .default('judgeflow')
    .describe('Drives every seeded choice (presentation order, bootstrap) so a run can be reproduced.'),
  simulated: z
    .boolean()
    .default(false)
    .describe('Marks a run whose copilots and judge are the local simulator; reports say so at the top.'),
  maxQueryChars: z
    .number()
    .int()
    .min(1)
    .max(QUERY_CHARS_HARD_LIMIT)
    .default(20_000)
    .describe(
      'Warn at load about queries longer than this (text, history and context); they are sent anyway. Above 200,000 a query is refused.',
    ),
  grounding: groundingConfigSchema
    .optional()
    .describe(
      "Hallucination and citation checks of every answer against its copilot's own context, as a stage of the run (docs/grounding.md).",
    ),
  maxAnswerChars: z
    .number()
    .int()
    .min(1_000)
    .max(50_000_000)
    .default(200_000)
    .describe(
      'Longest copilot answer sent to the judge (and shown per row in report.html); a longer answer is stored and exported whole, truncated for the judge with a note saying so.',
    ),
  storeOutageMinutes: z
    .number()
    .min(0)
    .max(7 * 24 * 60)
    .default(30)
    .describe(
      'How long a worker waits for an unreachable results store (e.g. PostgreSQL restarting) before an activity gives up; answers already received are held meanwhile, never re-asked or failed.',
    ),
  pricing: z
    .record(
      z.string(),
      z
        .object({
          inputPerMTok: z.number().min(0).describe('USD per million input (prompt) tokens.'),
          outputPerMTok: z.number().min(0).describe('USD per million output (completion) tokens.'),
          cachedInputPerMTok: z
            .number()
            .min(0)
            .optional()
            .describe('USD per million cached input tokens (default: the input price).'),
          batchInputPerMTok: z
            .number()
            .min(0)
            .optional()
            .describe('USD per million input tokens of a Batch API call (default: half the input price).'),
          batchOutputPerMTok: z
            .number()
            .min(0)
            .optional()
            .describe('USD per million output tokens of a Batch API call (default: half the output price).'),
        })
        .strict(),
    )
    .optional()
    .describe(
      'Prices per million tokens, keyed by model (or copilot name for http/browser copilots); reports estimate the cost.',
    ),
  failFast: failFastSchema
    .optional()
    .describe(
      "Circuit breaker: pause the run, with the endpoint's own words, when its first items all fail for a non-transient reason (default firstCalls 5), when over its last `window` items (default 20) the share so failed reaches maxFailureRate (default 0.5), and at once when it is out of quota or credit; false turns the item rules off.",
    ),
  budget: budgetSchema
    .optional()
    .describe(
      'A spending cap: at 80% the run records a warning, at the cap it pauses (judgeflow resume RUN_ID --budget-usd N raises it and continues).',
    ),
  priority: z
    .number()
    .int()
    .min(1)
    .max(5)
    .optional()
    .describe(
      "The run's place on a shared cluster: Temporal task priority 1 (first; CI gates) to 5 (last; big sweeps), default 3. Runs at one priority share workers in turn (each run is its own fairness key). judgeflow run --priority N overrides it; not part of the run's identity.",
    ),
};

/** A spending cap (config `budget`, raised by `judgeflow resume --budget-usd/--budget-tokens`). */
export type Budget = z.output<typeof budgetSchema>;
/** The circuit breaker's setting (config `failFast`): its rules, or false for none. */
export type FailFastSetting = z.output<typeof failFastSchema>;

/**
 * A loaded run config: validated, paths absolute, `copilotsFrom` expanded into `copilots` (so gone), the chosen
 * protocol's section with its defaults filled in (under its id: `Record<string, unknown>`). `Copilot` is what the
 * reader knows of a copilot: every adapter's config (services/runConfig.ts RunConfig) or the limits the workflow reads
 * (contract/run.ts WorkflowRunConfig). RunConfigKeys is the same without the protocol sections, for `Omit`/`Pick`.
 */
export type RunConfigKeys<Copilot> = Omit<z.output<z.ZodObject<typeof runConfigKeys>>, 'copilotsFrom'> & {
  protocol: string;
  copilots: Copilot[];
};
export type RunConfigOf<Copilot> = RunConfigKeys<Copilot> & Record<string, unknown>;

/** What the run record adds to the config a run started with (activities/run.ts prepareRun). */
export interface RecordedRunKeys {
  reuseJudgments?: boolean;
  /** The grounding rubric version the run checks with (stored when `grounding` is set). */
  groundingVersion?: string;
  /** The run's identity (client/runIdentity.ts). */
  runKey?: string;
}
const RECORDED_KEYS: ReadonlyArray<keyof RecordedRunKeys> = ['reuseJudgments', 'groundingVersion', 'runKey'];

/** Keys that meant something once: a config that still sets one is told what to do, not just "unrecognized key". */
export const REMOVED_KEYS: Readonly<Record<string, string>> = {
  chunkSize: 'chunkSize was removed: runs judge while they collect',
};

/**
 * A stored run's config as a config to load again (a re-judge starts from it): without what the run record added and
 * without keys since removed, which runs stored before their removal still carry.
 */
export function reloadableConfig(stored: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(stored).filter(
      ([key]) => !(RECORDED_KEYS as readonly string[]).includes(key) && !(key in REMOVED_KEYS),
    ),
  );
}

/** The record's own keys of a stored config, kept when `judgeflow resume --config` replaces the rest (with `simulated`). */
export function recordedKeys(stored: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(['simulated', ...RECORDED_KEYS].filter((k) => k in stored).map((k) => [k, stored[k]]));
}

/**
 * Configs written (and runs stored) before protocol options had their own section put them at the top level
 * (`evaluationDate: ...`): such keys of the protocol move into its section, whose own value wins. The one place this
 * is done: loading a config (client/config.ts) and reading a stored run's options (activities/deps.ts protocolOptions).
 */
export function liftLegacyOptions(
  protocol: { id: string; optionsSchema: z.ZodObject },
  raw: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...raw };
  const lifted: Record<string, unknown> = {};
  for (const key of Object.keys(protocol.optionsSchema.shape)) {
    if (key in runConfigKeys || key === 'protocol' || key === 'copilots' || !(key in out)) continue;
    lifted[key] = out[key];
    delete out[key];
  }
  const section = out[protocol.id];
  if (Object.keys(lifted).length)
    out[protocol.id] =
      section && typeof section === 'object' && !Array.isArray(section)
        ? { ...lifted, ...section }
        : (section ?? lifted);
  return out;
}
