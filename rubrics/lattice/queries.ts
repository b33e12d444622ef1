import { z } from 'zod';
import { turnSchema } from '../../core/history';
import { assertQueryIds, parseJsonLines } from '../../core/jsonl';
import type { Query } from '../../core/types';
import { LATTICE_CATEGORIES, LATTICE_TASKS } from './rubric';

export const latticeQuerySchema = z
  .object({
    id: z.string().min(1),
    text: z.string().min(1),
    task: z.enum(LATTICE_TASKS as [string, ...string[]]),
    category: z.enum(LATTICE_CATEGORIES),
    history: z.array(turnSchema).optional(),
  })
  .strict();

/** A LATTICE query: the shared fields plus its task type (T1..T16) and query category (C1..C5). */
export type LatticeQuery = Query & { task: string; category: string };

/** Queries in a LATTICE run's snapshot were validated by latticeQuerySchema when they were imported or generated. */
export const asLatticeQuery = (query: Query) => query as LatticeQuery;

export function parseLatticeQueries(file: string): Query[] {
  const queries = parseJsonLines(file, latticeQuerySchema, 'LATTICE query snapshot');
  assertQueryIds(queries, file);
  return queries;
}

/** Task type and query category, the two labels LATTICE reports and compares by. */
export function latticeLabels(query: Query): Record<string, string[]> {
  const labels: Record<string, string[]> = {};
  for (const name of ['task', 'category'] as const) if (typeof query[name] === 'string' && query[name]) labels[name] = [query[name] as string];
  return labels;
}
