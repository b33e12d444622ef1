import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import type { ChatMessage, JsonAnswerSpec } from './llm';
import { contentHash, InputError, readText, renderTemplate } from './validate';

/** LLM tagging of traffic queries into a configurable category list (curation stage 2). Prompts in rubrics/cab/curation/. */

export const CATEGORISE_DIR = path.resolve(__dirname, '..', 'rubrics', 'cab', 'curation');

export interface CategorisePrompts {
  system: string;
  user: string;
  version: string;
}

export function loadCategorisePrompts(dir = CATEGORISE_DIR): CategorisePrompts {
  const system = readText(path.join(dir, 'categorise-system.md'), 'categorisation prompt');
  const user = readText(path.join(dir, 'categorise-user.md'), 'categorisation prompt');
  return { system, user, version: contentHash({ system, user }) };
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

export function categoriseSpec(categories: string[], count: number): JsonAnswerSpec<{ labels: Array<{ id: string; category: string }> }> {
  const ids = Array.from({ length: count }, (_, k) => batchId(k));
  return {
    name: 'query_categories',
    jsonSchema: {
      type: 'object',
      properties: {
        labels: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: { type: 'string', enum: ids }, category: { type: 'string', enum: categories } },
            required: ['id', 'category'],
            additionalProperties: false,
          },
        },
      },
      required: ['labels'],
      additionalProperties: false,
    },
    zodSchema: z.object({ labels: z.array(z.object({ id: z.enum(ids as [string, ...string[]]), category: z.enum(categories as [string, ...string[]]) }).strict()) }).strict(),
    check: (v) => {
      const got = new Set(v.labels.map((l) => l.id));
      const missing = ids.filter((id) => !got.has(id));
      return missing.length ? `no label for ${missing.join(', ')}; label every query exactly once` : got.size !== v.labels.length ? 'a query id is labelled twice' : null;
    },
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
