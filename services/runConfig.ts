import { z } from 'zod';
import { copilotConfigSchema, type CopilotConfig } from '../activities/adapters';
import { runConfigKeys, type RunConfigOf } from '../core/model/runConfig';
import { caseInsensitiveDuplicates } from '../core/model/names';
import type { WorkflowRunConfig } from '../contract/run';
import { protocols } from '../rubrics';

/**
 * The run config's schema, assembled from its parts: the keys every run has (core/model/runConfig.ts), each copilot's
 * adapter schema, and the protocol's own options under a section named after it (`cab: { evaluationDate,
 * errorTaxonomy }`). Here because it needs every adapter and protocol; the CLI loads configs with it
 * (client/config.ts), the activities and the workflows read the type it gives.
 */
const { queries, judge, judges, panel, ...laterKeys } = runConfigKeys;
const sharedKeys = {
  protocol: z
    .enum(protocols.map((p) => p.id) as [string, ...string[]])
    .describe('The benchmark protocol: which rubric, query format, judging and reports.'),
  queries,
  judge,
  judges,
  panel,
  copilots: z
    .array(copilotConfigSchema)
    .min(1)
    .describe(
      'The copilots to benchmark, each reached through the adapter its type names (with copilotsFrom, those it finds are added after these).',
    ),
  ...laterKeys,
};
const protocolSections: Record<string, z.ZodOptional<z.ZodObject>> = Object.fromEntries(
  protocols.map((p) => [p.id, p.optionsSchema.optional()]),
);

/** The one run config type: what loading gives (client/config.ts loadRunConfig), the run record keeps and the workflow carries. */
export type RunConfig = RunConfigOf<CopilotConfig>;
export type { CopilotConfig };

export const runConfigSchema = z
  .object({ ...sharedKeys, ...protocolSections })
  .strict()
  .superRefine((c, ctx) => {
    if (!c.judge === !c.judges)
      ctx.addIssue({
        code: 'custom',
        path: c.judge ? ['judges'] : ['judge'],
        message: c.judge
          ? 'give either judge: (one judge) or judges: (a panel), not both'
          : 'missing: give judge: (one judge) or judges: (a panel of two or more)',
      });
    if (c.panel?.minJudges !== undefined && c.judges && c.panel.minJudges > c.judges.length)
      ctx.addIssue({
        code: 'custom',
        path: ['panel', 'minJudges'],
        message: `panel.minJudges is ${c.panel.minJudges}, but the panel has ${c.judges.length} judges; at most ${c.judges.length}`,
      });
    if (c.panel && !c.judges)
      ctx.addIssue({
        code: 'custom',
        path: ['panel'],
        message: 'panel: options apply to judges: (a panel); with one judge use judge.samples',
      });
    for (const { index, first } of caseInsensitiveDuplicates((c.judges ?? []).map((j) => j.name)))
      ctx.addIssue({
        code: 'custom',
        path: ['judges', index, 'name'],
        message: `duplicate judge name "${c.judges![index].name}" (judges[${first}] is "${c.judges![first].name}"); every panel member needs its own name`,
      });
    for (const { index, first } of caseInsensitiveDuplicates(c.copilots.map((cp) => cp.name)))
      ctx.addIssue({
        code: 'custom',
        path: ['copilots', index, 'name'],
        message: `duplicate copilot name "${c.copilots[index].name}" (copilots[${first}] is "${c.copilots[first].name}"); names must differ in more than letter case, since they name files and report columns`,
      });
    if (c.budget?.usd !== undefined)
      for (const { path: where, key } of unpricedEndpoints(c))
        ctx.addIssue({
          code: 'custom',
          path: ['budget', 'usd'],
          message: `a budget in USD needs a price for every endpoint that makes calls; ${where} has none: add pricing: { ${JSON.stringify(key)}: { inputPerMTok, outputPerMTok } } (or budget only tokens)`,
        });
    for (const p of protocols)
      if (p.id !== c.protocol && (c as Record<string, unknown>)[p.id] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [p.id],
          message: `options of protocol "${p.id}", but this config runs protocol "${c.protocol}"; remove the section`,
        });
  });

/**
 * Endpoints whose calls a USD budget could not price: each judge (priced by model) and each copilot that makes calls
 * (priced by model, or by name for http and browser copilots, as core/stats/cost.ts reads `pricing`).
 */
function unpricedEndpoints(c: {
  judge?: { model: string };
  judges?: Array<{ name: string; model: string }>;
  grounding?: { judge?: { model: string } };
  copilots: Array<{ name: string; type: string; model?: unknown }>;
  pricing?: Record<string, unknown>;
}): Array<{ path: string; key: string }> {
  const priced = (key: string | undefined) => key !== undefined && Boolean(c.pricing?.[key]);
  const out: Array<{ path: string; key: string }> = [];
  if (c.judge && !priced(c.judge.model)) out.push({ path: `judge (model ${c.judge.model})`, key: c.judge.model });
  for (const j of c.judges ?? [])
    if (!priced(j.model)) out.push({ path: `judge ${j.name} (model ${j.model})`, key: j.model });
  const grounding = c.grounding?.judge;
  if (grounding && !priced(grounding.model))
    out.push({ path: `grounding.judge (model ${grounding.model})`, key: grounding.model });
  for (const cp of c.copilots) {
    if (cp.type === 'csv' || cp.type === 'file') continue; // answers read from a file: no calls
    const model = typeof cp.model === 'string' ? cp.model : undefined;
    if (!priced(model) && !priced(cp.name))
      out.push({ path: `copilot ${cp.name}${model ? ` (model ${model})` : ''}`, key: model ?? cp.name });
  }
  return out;
}

// The workflow reads a run's config through WorkflowRunConfig (contract/run.ts): every config this schema gives is one.
const _fitsWorkflow = (c: RunConfig): WorkflowRunConfig => c;
void _fitsWorkflow;
// What the schema gives is a RunConfig (the type the other layers name) once copilotsFrom is expanded.
const _schemaGivesRunConfig = (c: z.output<typeof runConfigSchema>): RunConfig => c;
void _schemaGivesRunConfig;
