import { z } from 'zod';
import type { Query } from '../../core/types';
import { assertUniqueIds, parseJsonLines } from '../../core/jsonl';
import { LATTICE_CATEGORIES, LATTICE_TASKS } from './rubric';

export const turnSchema = z.object({ role: z.enum(['user', 'assistant']), content: z.string() }).strict();

export const latticeQuerySchema = z
  .object({
    id: z.string().min(1),
    text: z.string().min(1),
    task: z.enum(LATTICE_TASKS as [string, ...string[]]),
    category: z.enum(LATTICE_CATEGORIES),
    history: z.array(turnSchema).optional(),
  })
  .strict();

export function parseLatticeQueries(file: string): Query[] {
  const queries = parseJsonLines(file, latticeQuerySchema, 'LATTICE query snapshot');
  assertUniqueIds(queries, file);
  return queries;
}
