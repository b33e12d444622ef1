import path from 'node:path';
import { z } from 'zod';
import type { ChatMessage, JsonAnswerSpec } from '../../core/llm/client';
import { loadPromptPair, renderTemplate, type PromptPair } from '../../core/model/prompts';
import type { QueryCuration } from '../../core/model/protocol';

/** The 11 CryptoAnalystBench categories, in the order of the paper's table. */
export const CAB_CATEGORIES = [
  'Project & Fundamental Research',
  'Market Data & Price Discovery',
  'On-Chain Analytics & Flows',
  'Macro & Narrative Context',
  'Trading & Strategy Design',
  'Crypto Concepts & How-To',
  'Comparative & Performance Analysis',
  'Meme Coins',
  'Security & Risks',
  'NFTs',
  'Default / General Analysis',
] as const;

/** LLM tagging of traffic queries into a configurable category list (curation stage 2). Prompts in ./curation/. */

export const CATEGORISE_DIR = path.join(__dirname, 'curation');

export type CategorisePrompts = PromptPair;

export function loadCategorisePrompts(dir = CATEGORISE_DIR): CategorisePrompts {
  return loadPromptPair(dir, 'categorise-system.md', 'categorise-user.md', 'categorisation prompt');
}

/** Batch-local ids the model echoes back: q1..qN. */
export const batchId = (k: number) => `q${k + 1}`;

export function categoriseMessages(prompts: CategorisePrompts, categories: string[], queries: string[]): ChatMessage[] {
  const where = path.join(CATEGORISE_DIR, 'categorise-*.md');
  return [
    {
      role: 'system',
      content: renderTemplate(prompts.system, { categories: categories.map((c) => `- ${c}`).join('\n') }, where),
    },
    {
      role: 'user',
      content: renderTemplate(
        prompts.user,
        {
          count: String(queries.length),
          queries: queries.map((q, k) => `[${batchId(k)}] ${q.replace(/\s+/g, ' ')}`).join('\n'),
        },
        where,
      ),
    },
  ];
}

/**
 * One required property per query id (q1..qN), each an enum of the categories: the schema itself demands a label for
 * every query, so a provider that honours structured outputs cannot skip or invent one.
 */
export function categoriseSpec(
  categories: string[],
  count: number,
): JsonAnswerSpec<{ labels: Record<string, string> }> {
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
    zodSchema: z
      .object({ labels: z.object(Object.fromEntries(ids.map((id) => [id, category]))).strict() })
      .strict() as unknown as z.ZodType<{ labels: Record<string, string> }>,
  };
}

/** The snapshot hook of the CryptoAnalystBench module: curation from traffic, tagging into its categories. */
export const cabCuration: QueryCuration = {
  generator: 'cab-curate',
  defaultCategories: CAB_CATEGORIES,
  loadPrompts: () => loadCategorisePrompts(),
  batchId,
  messages: categoriseMessages,
  spec: categoriseSpec,
  query: ({ id, text, category }) => ({ id, text, tags: category }),
};
