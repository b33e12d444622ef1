import path from 'node:path';
import { z } from 'zod';
import type { ChatMessage, JsonAnswerSpec } from '../../core/llm/client';
import type { QueryGeneration } from '../../core/model/protocol';
import { InputError } from '../../core/model/inputError';
import { loadPromptPair, renderTemplate, type PromptPair } from '../../core/model/prompts';
import { LATTICE_CATEGORIES, LATTICE_TASKS, loadLatticeRubric, type LatticeRubric } from './rubric';

/**
 * LATTICE query generation: one LLM request per task × category cell, prompts in ./generation/
 * (versioned by the hash of their text), structured output checked with zod.
 */

export const GENERATION_DIR = path.join(__dirname, 'generation');

/** The version (hash of both templates) is recorded in the snapshot. */
export type GenerationPrompts = PromptPair;

export function loadGenerationPrompts(dir = GENERATION_DIR): GenerationPrompts {
  return loadPromptPair(dir, 'system.md', 'user.md', 'generation prompt');
}

/** Cells as "T1/C1"; subsets validated against the rubric's task and category ids. */
export function latticeCells(tasks?: string[], categories?: string[]): string[] {
  const check = (given: string[] | undefined, known: readonly string[], what: string) => {
    const list = given?.length ? given : [...known];
    const unknown = list.filter((x) => !known.includes(x));
    if (unknown.length)
      throw new InputError(
        `unknown LATTICE ${what} ${unknown.map((u) => `"${u}"`).join(', ')}; known: ${known.join(', ')}`,
      );
    return [...new Set(list)];
  };
  const ts = check(tasks, LATTICE_TASKS, 'task(s)');
  const cs = check(categories, LATTICE_CATEGORIES, 'category(ies)');
  return ts.flatMap((t) => cs.map((c) => `${t}/${c}`));
}

export function splitCell(cell: string): { task: string; category: string } {
  const [task, category] = cell.split('/');
  return { task, category };
}

/** Query id within a generated snapshot: t1-c1-01 (the demo snapshot's style, numbered within the cell). */
export function generatedQueryId(cell: string, k: number): string {
  const { task, category } = splitCell(cell);
  return `${task.toLowerCase()}-${category.toLowerCase()}-${String(k + 1).padStart(2, '0')}`;
}

export function generationMessages(args: {
  prompts: GenerationPrompts;
  rubric?: LatticeRubric;
  cell: string;
  count: number;
  seed: string;
  avoid: string[];
}): ChatMessage[] {
  const rubric = args.rubric ?? loadLatticeRubric(path.dirname(GENERATION_DIR));
  const { task, category } = splitCell(args.cell);
  const t = rubric.data.tasks.find((x) => x.id === task)!;
  const c = rubric.data.categories.find((x) => x.id === category)!;
  const avoid = args.avoid.length
    ? `\nThese queries already exist; write different ones (not rewordings of them):\n${args.avoid.map((q) => `- ${q}`).join('\n')}\n`
    : '';
  const user = renderTemplate(
    args.prompts.user,
    {
      count: String(args.count),
      task_id: t.id,
      task_name: t.name,
      task_description: t.description,
      category_id: c.id,
      category_name: c.name,
      category_description: c.description,
      seed: args.seed,
      avoid,
    },
    path.join(GENERATION_DIR, 'user.md'),
  );
  return [
    { role: 'system', content: args.prompts.system },
    { role: 'user', content: user },
  ];
}

export function generationSpec(min: number): JsonAnswerSpec<{ queries: string[] }> {
  return {
    name: 'lattice_queries',
    jsonSchema: {
      type: 'object',
      properties: { queries: { type: 'array', items: { type: 'string' } } },
      required: ['queries'],
      additionalProperties: false,
    },
    zodSchema: z.object({ queries: z.array(z.string()) }).strict(),
    check: (v) =>
      v.queries.filter((q) => q.trim().length > 0).length < min
        ? `expected at least ${min} non-empty queries, got ${v.queries.length}`
        : null,
  };
}

/** The snapshot hook of the LATTICE module: one generator request per task × category cell. */
export const latticeGeneration: QueryGeneration = {
  generator: 'lattice-generate',
  cells: (subsets) => latticeCells(subsets.task, subsets.category),
  loadPrompts: () => loadGenerationPrompts(),
  messages: (args) => generationMessages(args),
  spec: generationSpec,
  cellOf: (q) => (typeof q.task === 'string' && typeof q.category === 'string' ? `${q.task}/${q.category}` : null),
  query: (cell, k, text) => ({ id: generatedQueryId(cell, k), text, ...splitCell(cell) }),
};
