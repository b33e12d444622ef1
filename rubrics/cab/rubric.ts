import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { LoadedRubric } from '../../core/model/protocol';
import { contentHash } from '../../core/model/hashing';
import { judgeVersionOf } from '../../core/model/protocol';
import { InputError } from '../../core/model/inputError';
import { loadDataFile, readTextInside } from '../../core/io/dataFiles';

/** The four scored dimensions, in the reference harness's order; reports and the response score (their mean) are keyed by these ids. */
export const CAB_DIMENSIONS = ['temporal_relevance', 'data_consistency', 'depth', 'relevance'] as const;

/** The seven binary error flags of the optional error-taxonomy stage. */
export const CAB_TAXONOMY = [
  'staleness_missing_time_bounds',
  'inconsistent_claims',
  'source_reconciliation_failure',
  'shallow_synthesis',
  'missing_risk_or_mechanism_context',
  'overconfident_prediction',
  'partial_or_misframed_answer',
] as const;

const dimension = z
  .object({
    id: z.string(),
    name: z.string().min(1),
    description: z.string().min(1),
    criteria: z.array(z.string().min(1)).min(1),
  })
  .strict();
/** A flag as the reference asks it: what it means, what it typically looks like, how to check for it. */
const flag = z
  .object({
    id: z.string(),
    name: z.string().min(1),
    meaning: z.string().min(1),
    symptoms: z.array(z.string().min(1)).min(1),
    check: z.string().min(1),
  })
  .strict();
/** Rubric versions stored before flags had symptoms and a check carried one description. */
const olderFlag = z.object({ id: z.string(), name: z.string().min(1), description: z.string().min(1) }).strict();

export const cabRubricSchema = z
  .object({
    protocol: z.literal('cab'),
    name: z.string(),
    scale: z.object({ min: z.number().int(), max: z.number().int() }).strict(),
    dimensions: z.array(dimension).length(CAB_DIMENSIONS.length),
    taxonomy: z.array(z.union([flag, olderFlag])).length(CAB_TAXONOMY.length),
    judge: z
      .object({ temperature: z.number().min(0).max(2), maxInvalidAnswers: z.number().int().min(0).max(10) })
      .strict(),
    prompts: z
      .object({
        system: z.string(),
        scoring: z.string(),
        ranking: z.string(),
        taxonomySystem: z.string(),
        taxonomy: z.string(),
      })
      .strict(),
  })
  .strict()
  .superRefine((r, ctx) => {
    // Any order is fine (it is the order the judge reads them in), but each id exactly once.
    const expectSet = (items: Array<{ id: string }>, ids: readonly string[], field: string) => {
      items.forEach((item, i) => {
        if (!ids.includes(item.id))
          ctx.addIssue({
            code: 'custom',
            path: [field, i, 'id'],
            message: `unknown id "${item.id}" (expected one of: ${ids.join(', ')})`,
          });
        else if (items.findIndex((x) => x.id === item.id) !== i)
          ctx.addIssue({ code: 'custom', path: [field, i, 'id'], message: `"${item.id}" appears twice` });
      });
    };
    expectSet(r.dimensions, CAB_DIMENSIONS, 'dimensions');
    expectSet(r.taxonomy, CAB_TAXONOMY, 'taxonomy');
    if (r.scale.min >= r.scale.max) ctx.addIssue({ code: 'custom', path: ['scale'], message: 'min must be below max' });
  });

export type CabRubricData = Omit<z.infer<typeof cabRubricSchema>, 'taxonomy'> & { taxonomy: CabFlag[] };
export interface CabFlag {
  id: string;
  name: string;
  meaning?: string;
  symptoms?: string[];
  check?: string;
  description?: string;
}
/** `contextBlock`: how the context shown to the judge is introduced, when a rubric brings its own text (the reference's); else judgeflow's. */
export type CabPrompts = CabRubricData['prompts'] & { contextBlock?: string };

export interface CabRubric extends LoadedRubric {
  data: CabRubricData;
  /** Prompt texts by the same keys as data.prompts (file names there, texts here). */
  prompts: CabPrompts;
}

export function loadCabRubric(dir: string): CabRubric {
  const file = path.join(dir, 'rubric.yaml');
  if (!fs.existsSync(file)) throw new InputError(`rubric directory ${dir} has no rubric.yaml`);
  const data = loadDataFile(cabRubricSchema, file, 'CryptoAnalystBench rubric');
  const prompts = Object.fromEntries(
    (Object.keys(data.prompts) as Array<keyof CabRubricData['prompts']>).map((key) => [
      key,
      readTextInside(dir, data.prompts[key], `${file}: prompts.${key} file`),
    ]),
  ) as CabPrompts;
  // Everything the judge sees or the score depends on: the data and the prompt texts.
  return cabRubricFromContent({ data, prompts }, dir);
}

export function cabRubricFromContent(content: Record<string, unknown>, dir: string): CabRubric {
  const { data, prompts } = content as { data: CabRubricData; prompts: CabPrompts };
  // The rubric's name only labels reports; everything else shapes the shared judge conversation.
  return {
    protocol: 'cab',
    version: contentHash(content),
    judgeVersion: judgeVersionOf(content, [['data', 'name']]),
    dir,
    content,
    judge: data.judge,
    data,
    prompts,
  };
}
