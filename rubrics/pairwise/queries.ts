import { z } from 'zod';
import { turnSchema } from '../../core/model/history';
import { assertQueryIds, parseJsonLines } from '../../core/io/jsonl';
import type { Query } from '../../core/model/types';

/** `{"id","text","topic"?,"history"?}` per line; `topic` is the one label reports group by. */
export const pairwiseQuerySchema = z
  .object({
    id: z.string().min(1),
    text: z.string().min(1),
    topic: z.string().min(1).optional(),
    history: z.array(turnSchema).optional(),
  })
  .strict();

export function parsePairwiseQueries(file: string): Query[] {
  const queries = parseJsonLines(file, pairwiseQuerySchema, 'pairwise query file');
  assertQueryIds(queries, file);
  return queries;
}

export const pairwiseLabels = (query: Query): Record<string, string[]> =>
  typeof query.topic === 'string' ? { topic: [query.topic] } : {};
