import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import type { ChatMessage, JsonAnswerSpec } from './llm';
import { InputError, loadPromptPair, readText, renderTemplate, type PromptPair } from './validate';

/** LLM tagging of traffic queries into a configurable category list (curation stage 2). Prompts in rubrics/cab/curation/. */

export const CATEGORISE_DIR = path.resolve(__dirname, '..', 'rubrics', 'cab', 'curation');

export type CategorisePrompts = PromptPair;

export function loadCategorisePrompts(dir = CATEGORISE_DIR): CategorisePrompts {
  return loadPromptPair(dir, 'categorise-system.md', 'categorise-user.md', 'categorisation prompt');
}

/** Batch-local ids the model echoes back: q1..qN. */
export const batchId = (k: number) => `q${k + 1}`;

export function categoriseMessages(prompts: CategorisePrompts, categories: string[], queries: string[]): ChatMessage[] {
  const where = path.join(CATEGORISE_DIR, 'categorise-*.md');
  return [
    { role: 'system', content: renderTemplate(prompts.system, { categories: categories.map((c) => `- ${c}`).join('\n') }, where) },
    {
      role: 'user',
      content: renderTemplate(prompts.user, { count: String(queries.length), queries: queries.map((q, k) => `[${batchId(k)}] ${q.replace(/\s+/g, ' ')}`).join('\n') }, where),
    },
  ];
}

/**
 * One required property per query id (q1..qN), each an enum of the categories: the schema itself demands a label for
 * every query, so a provider that honours structured outputs cannot skip or invent one.
 */
export function categoriseSpec(categories: string[], count: number): JsonAnswerSpec<{ labels: Record<string, string> }> {
  const ids = Array.from({ length: count }, (_, k) => batchId(k));
  const category = z.enum(categories as [string, ...string[]]);
  return {
    name: 'query_categories',
    jsonSchema: {
      type: 'object',
      properties: {
        labels: {
          type: 'object',
          properties: Object.fromEntries(ids.map((id) => [id, { type: 'string', enum: categories }])),
          required: ids,
          additionalProperties: false,
        },
      },
      required: ['labels'],
      additionalProperties: false,
    },
    zodSchema: z.object({ labels: z.object(Object.fromEntries(ids.map((id) => [id, category]))).strict() }).strict() as unknown as z.ZodType<{ labels: Record<string, string> }>,
  };
}

/** A categories file: a YAML/JSON list of names, or plain text with one name per line (# comments allowed). */
export function loadCategoriesFile(file: string): string[] {
  const text = readText(file, 'categories file');
  let list: unknown;
  const ext = path.extname(file).toLowerCase();
  if (['.yaml', '.yml', '.json'].includes(ext)) {
    try {
      list = YAML.parse(text);
    } catch (error) {
      throw new InputError(`${file}: not valid YAML/JSON: ${(error as Error).message}`);
    }
    if (list && typeof list === 'object' && !Array.isArray(list) && Array.isArray((list as { categories?: unknown }).categories)) list = (list as { categories: unknown }).categories;
  } else {
    list = text
      .split(/\r?\n/)
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
  }
  if (!Array.isArray(list) || !list.every((c) => typeof c === 'string' && c.trim())) throw new InputError(`${file}: expected a list of category names (one per line, or a YAML/JSON list)`);
  const names = (list as string[]).map((c) => c.trim());
  const dup = names.find((c, i) => names.indexOf(c) !== i);
  if (dup) throw new InputError(`${file}: category "${dup}" is listed twice`);
  if (names.length < 2) throw new InputError(`${file}: need at least 2 categories, found ${names.length}`);
  return names;
}
