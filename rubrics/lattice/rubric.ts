import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { LoadedRubric } from '../../core/model/protocol';
import { contentHash } from '../../core/model/hashing';
import { judgeVersionOf } from '../../core/model/protocol';
import { InputError } from '../../core/model/inputError';
import { loadDataFile, readTextInside } from '../../core/io/dataFiles';

const DIMENSIONS = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'] as const;
const TASKS = Array.from({ length: 16 }, (_, i) => `T${i + 1}`);
const CATEGORIES = ['C1', 'C2', 'C3', 'C4', 'C5'] as const;

const labelled = z.object({ id: z.string(), name: z.string().min(1), description: z.string().min(1) }).strict();
/** The score bands of every anchor list, best first, as the reference judge instructions draw them. */
const LEVELS = ['9-10', '8', '6-7', '0-5'] as const;
const anchors = z.object(Object.fromEntries(LEVELS.map((l) => [l, z.string().min(1)]))).strict();
/** A scored dimension: what it asks, what it leaves to the others, and what each band of scores means. */
// Optional, so a rubric directory copied before anchors existed (an edited copy of the old rubric) still loads, as the same version.
const scored = labelled
  .extend({
    notJudgedHere: z.string().min(1).optional(),
    anchors: anchors.optional(),
    evidenceAngles: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();
const rule = z
  .object({ id: z.string().min(1), text: z.string().min(1), regularTasksOnly: z.boolean().optional() })
  .strict();
const cap = z
  .object({ category: z.string(), dimension: z.string(), max: z.number().int(), condition: z.string().min(1) })
  .strict();
const weightRow = z.object(Object.fromEntries(DIMENSIONS.map((d) => [d, z.number().min(0).max(100)]))).strict();

export const latticeRubricSchema = z
  .object({
    protocol: z.literal('lattice'),
    name: z.string(),
    scale: z.object({ min: z.number().int(), max: z.number().int() }).strict(),
    levels: z
      .tuple([z.literal(LEVELS[0]), z.literal(LEVELS[1]), z.literal(LEVELS[2]), z.literal(LEVELS[3])])
      .optional(),
    rules: z.array(rule).optional(),
    dimensions: z.array(scored).length(6),
    caps: z.array(cap).optional(),
    refusal: scored,
    tasks: z.array(labelled).length(16),
    categories: z.array(labelled).length(5),
    weights: z.record(z.string(), weightRow),
    refusalTask: z.string(),
    judge: z
      .object({ temperature: z.number().min(0).max(2), maxInvalidAnswers: z.number().int().min(0).max(10) })
      .strict(),
    prompts: z.object({ system: z.string(), user: z.string() }).strict(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const expectIds = (items: Array<{ id: string }>, ids: readonly string[], field: string) =>
      items.forEach((item, i) => {
        if (item.id !== ids[i])
          ctx.addIssue({ code: 'custom', path: [field, i, 'id'], message: `expected "${ids[i]}", found "${item.id}"` });
      });
    expectIds(r.dimensions, DIMENSIONS, 'dimensions');
    expectIds(r.tasks, TASKS, 'tasks');
    expectIds(r.categories, CATEGORIES, 'categories');
    for (const key of Object.keys(r.weights)) {
      if (!(CATEGORIES as readonly string[]).includes(key))
        ctx.addIssue({
          code: 'custom',
          path: ['weights', key],
          message: `unknown category "${key}" (known: ${CATEGORIES.join(', ')})`,
        });
    }
    for (const c of CATEGORIES) {
      const row = r.weights[c];
      if (!row) ctx.addIssue({ code: 'custom', path: ['weights', c], message: `missing weight row for category ${c}` });
      else {
        const sum = DIMENSIONS.reduce((s, d) => s + row[d], 0);
        if (Math.abs(sum - 100) > 1e-9)
          ctx.addIssue({ code: 'custom', path: ['weights', c], message: `weights sum to ${sum}, must sum to 100` });
      }
    }
    (r.caps ?? []).forEach((c, i) => {
      if (!(CATEGORIES as readonly string[]).includes(c.category))
        ctx.addIssue({
          code: 'custom',
          path: ['caps', i, 'category'],
          message: `unknown category "${c.category}" (known: ${CATEGORIES.join(', ')})`,
        });
      if (!(DIMENSIONS as readonly string[]).includes(c.dimension))
        ctx.addIssue({
          code: 'custom',
          path: ['caps', i, 'dimension'],
          message: `unknown dimension "${c.dimension}" (known: ${DIMENSIONS.join(', ')})`,
        });
      if (c.max < r.scale.min || c.max > r.scale.max)
        ctx.addIssue({
          code: 'custom',
          path: ['caps', i, 'max'],
          message: `${c.max} is outside the scale ${r.scale.min}–${r.scale.max}`,
        });
    });
    if (!TASKS.includes(r.refusalTask))
      ctx.addIssue({ code: 'custom', path: ['refusalTask'], message: `unknown task "${r.refusalTask}"` });
    if (r.scale.min >= r.scale.max) ctx.addIssue({ code: 'custom', path: ['scale'], message: 'min must be below max' });
  });

export type LatticeRubricData = z.infer<typeof latticeRubricSchema>;
export interface LatticeRubric extends LoadedRubric {
  data: LatticeRubricData;
  prompts: { system: string; user: string };
}

export const LATTICE_DIMENSIONS = DIMENSIONS;
export const LATTICE_TASKS = TASKS;
export const LATTICE_CATEGORIES = CATEGORIES;
export const LATTICE_LEVELS = LEVELS;

export function loadLatticeRubric(dir: string): LatticeRubric {
  const file = path.join(dir, 'rubric.yaml');
  if (!fs.existsSync(file)) throw new InputError(`rubric directory ${dir} has no rubric.yaml`);
  const data = loadDataFile(latticeRubricSchema, file, 'LATTICE rubric');
  const prompts = {
    system: readTextInside(dir, data.prompts.system, `${file}: prompts.system file`),
    user: readTextInside(dir, data.prompts.user, `${file}: prompts.user file`),
  };
  // Everything the judge sees or the score depends on: the data and the prompt texts.
  return latticeRubricFromContent({ data, prompts }, dir);
}

export function latticeRubricFromContent(content: Record<string, unknown>, dir: string): LatticeRubric {
  const { data, prompts } = content as { data: LatticeRubricData; prompts: { system: string; user: string } };
  // The category weights and the rubric's name only aggregate: the judge's prompts never show them.
  return {
    protocol: 'lattice',
    version: contentHash(content),
    judgeVersion: judgeVersionOf(content, [
      ['data', 'weights'],
      ['data', 'name'],
    ]),
    dir,
    content,
    judge: data.judge,
    data,
    prompts,
  };
}
