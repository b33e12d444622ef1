import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { contentHash } from '../../core/model/hashing';
import { InputError } from '../../core/model/inputError';
import { loadDataFile, readTextInside } from '../../core/io/dataFiles';
import { renderTemplate, requireShown } from '../../core/model/prompts';

const promptPair = z.object({ system: z.string().min(1), user: z.string().min(1) }).strict();

export const groundingRubricSchema = z
  .object({
    name: z.string(),
    judge: z
      .object({ temperature: z.number().min(0).max(2), maxInvalidAnswers: z.number().int().min(0).max(10) })
      .strict(),
    labels: z.object({ factual: z.number().min(0).max(1), partial: z.number().min(0).max(1) }).strict(),
    maxContextChars: z.number().int().min(1000),
    prompts: z.object({ hallucination: promptPair, extraction: promptPair, citations: promptPair }).strict(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.labels.partial > r.labels.factual)
      ctx.addIssue({
        code: 'custom',
        path: ['labels', 'partial'],
        message: `must not be above labels.factual (${r.labels.factual})`,
      });
  });

export type GroundingRubricData = z.infer<typeof groundingRubricSchema>;
export type GroundingPromptName = keyof GroundingRubricData['prompts'];
type Prompts = Record<GroundingPromptName, { system: string; user: string }>;

/** The grounding checks' rubric: data plus prompt texts; `version` is the hash of exactly that. */
export interface GroundingRubric {
  version: string;
  dir: string;
  content: { data: GroundingRubricData; prompts: Prompts };
  data: GroundingRubricData;
  prompts: Prompts;
}

/** Where the shipped grounding rubric is (the default of `grounding.rubric`). */
export const DEFAULT_GROUNDING_RUBRIC_DIR = __dirname;

export function loadGroundingRubric(dir: string = DEFAULT_GROUNDING_RUBRIC_DIR): GroundingRubric {
  const where = dir;
  const file = path.join(where, 'rubric.yaml');
  if (!fs.existsSync(file)) throw new InputError(`grounding rubric directory ${dir} has no rubric.yaml`);
  const data = loadDataFile(groundingRubricSchema, file, 'grounding rubric');
  const prompts = Object.fromEntries(
    (Object.keys(data.prompts) as GroundingPromptName[]).map((name) => [
      name,
      {
        system: readTextInside(where, data.prompts[name].system, `${file}: prompts.${name}.system file`),
        user: readTextInside(where, data.prompts[name].user, `${file}: prompts.${name}.user file`),
      },
    ]),
  ) as Prompts;
  return checkGroundingPrompts(groundingRubricFromContent({ data, prompts }, where), file);
}

/** Rebuild the rubric a run stored (its version is the hash of the content, so it is the same rubric wherever it is read). */
export function groundingRubricFromContent(
  content: Record<string, unknown>,
  dir: string = DEFAULT_GROUNDING_RUBRIC_DIR,
): GroundingRubric {
  const { data, prompts } = content as GroundingRubric['content'];
  return { version: contentHash(content), dir, content: { data, prompts }, data, prompts };
}

/** The placeholders each prompt may use; rendering a sample once makes a broken template fail when the rubric loads. */
export const PROMPT_VARIABLES: Record<GroundingPromptName, string[]> = {
  hallucination: ['history', 'query', 'context', 'response'],
  extraction: ['history', 'query', 'response'],
  citations: ['history', 'query', 'sources', 'response', 'claims'],
};

function checkGroundingPrompts(rubric: GroundingRubric, file: string): GroundingRubric {
  for (const name of Object.keys(PROMPT_VARIABLES) as GroundingPromptName[]) {
    const vars = Object.fromEntries(PROMPT_VARIABLES[name].map((v) => [v, `<sample ${v}>`]));
    vars.history = '';
    const user = renderTemplate(rubric.prompts[name].user, vars, `${file}: prompts.${name}.user`);
    renderTemplate(rubric.prompts[name].system, vars, `${file}: prompts.${name}.system`);
    const shown = Object.fromEntries(
      PROMPT_VARIABLES[name].filter((v) => v !== 'history').map((v) => [`{{${v}}}`, `<sample ${v}>`]),
    );
    requireShown(user, shown, `${file}: prompts.${name}.user`);
  }
  return rubric;
}
