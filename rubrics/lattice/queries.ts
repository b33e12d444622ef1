import { z } from 'zod';
import { turnSchema } from '../../core/model/history';
import { assertQueryIds, parseJsonLines } from '../../core/io/jsonl';
import type { LoadedRubric } from '../../core/model/protocol';
import type { Query } from '../../core/model/types';
import { LATTICE_CATEGORIES, LATTICE_TASKS, type LatticeRubric } from './rubric';

/**
 * How the reference's query file named the query (`id` as it was, a number or a string; `task` and `category` in its
 * long form, "T1 Protocol Mechanism Interpretation"), kept so that an exported scores file says what the input said.
 */
const referenceSchema = z
  .object({
    id: z.union([z.number(), z.string()]),
    task: z.string(),
    category: z.string(),
  })
  .strict();

export const latticeQuerySchema = z
  .object({
    id: z.string().min(1),
    text: z.string().min(1),
    task: z.enum(LATTICE_TASKS as [string, ...string[]]),
    category: z.enum(LATTICE_CATEGORIES),
    history: z.array(turnSchema).optional(),
    reference: referenceSchema.optional(),
  })
  .strict();

/** A LATTICE query: the shared fields plus its task type (T1..T16) and query category (C1..C5). */
export type LatticeQuery = Query & { task: string; category: string; reference?: z.infer<typeof referenceSchema> };

/** Queries in a LATTICE run's snapshot were validated by latticeQuerySchema when they were imported or generated. */
export const asLatticeQuery = (query: Query) => query as LatticeQuery;

/** A query of the reference's files: `{id, query, task: "T1 Protocol …", category: "C1 Basic"}`. */
const referenceQuerySchema = z
  .object({
    id: z.union([z.number().int(), z.string().min(1)]),
    query: z.string().min(1),
    task: z.string().min(1),
    category: z.string().min(1),
  })
  .strict();

/** "T1 Protocol Mechanism Interpretation" → { id: "T1", name: "Protocol Mechanism Interpretation" }; "T1" → name "". */
export function splitLabel(label: string): { id: string; name: string } | null {
  const m = /^\s*([TC]\d+)\b[\s:.–-]*(.*?)\s*$/.exec(label);
  return m ? { id: m[1].toUpperCase(), name: m[2] } : null;
}

/** The reference's record as a judgeflow query; labels go through as their leading id so the schema names what is wrong. */
function fromReference(value: unknown): unknown {
  if (!value || typeof value !== 'object' || !('query' in value) || 'text' in value) return value;
  const parsed = referenceQuerySchema.safeParse(value);
  if (!parsed.success) return value; // the judgeflow schema reports the problem (e.g. unknown key "query")
  const { id, query, task, category } = parsed.data;
  return {
    id: String(id),
    text: query,
    task: splitLabel(task)?.id ?? task,
    category: splitLabel(category)?.id ?? category,
    reference: { id, task, category },
  };
}

/**
 * A label's name as the file gives it differs from the rubric's: said once per distinct pair, naming both, since a
 * query labelled with one task's name and another's id is judged under the id.
 */
function labelWarnings(queries: Query[], rubric: LatticeRubric, file: string): string[] {
  const seen = new Map<string, string>();
  for (const q of queries as LatticeQuery[]) {
    if (!q.reference) continue;
    for (const [kind, label, items] of [
      ['task', q.reference.task, rubric.data.tasks],
      ['category', q.reference.category, rubric.data.categories],
    ] as const) {
      const split = splitLabel(label);
      const own = items.find((t) => t.id === split?.id);
      if (!split || !own || !split.name || split.name === own.name) continue;
      const key = `${kind}\u0000${label}`;
      if (!seen.has(key))
        seen.set(
          key,
          `warning: ${file}: ${kind} "${label}" (query ${q.id}) names ${split.id} differently from the rubric, whose ${split.id} is "${own.name}"; it is judged as ${split.id} "${own.name}"`,
        );
    }
  }
  return [...seen.values()];
}

/**
 * LATTICE queries: JSON Lines of `{"id","text","task":"T1","category":"C1","history"?}`, or the reference's JSON array of
 * `{id, query, task: "T1 Protocol Mechanism Interpretation", category: "C1 Basic"}` (ids numbers or strings). With a
 * rubric and `warn`, a label whose name differs from the rubric's is a warning naming both.
 */
export function parseLatticeQueries(
  file: string,
  context: { rubric?: LoadedRubric; warn?: (message: string) => void } = {},
): Query[] {
  const queries = parseJsonLines(file, latticeQuerySchema, 'LATTICE query file', {
    arrays: true,
    expected:
      '{"id","text","task":"T1","category":"C1"} (or the reference\'s {"id","query","task":"T1 …","category":"C1 …"})',
    prepare: fromReference,
  }) as Query[];
  assertQueryIds(queries, file);
  if (context.rubric && context.warn)
    for (const message of labelWarnings(queries, context.rubric as LatticeRubric, file)) context.warn(message);
  return queries;
}

/** Task type and query category, the two labels LATTICE reports and compares by. */
export function latticeLabels(query: Query): Record<string, string[]> {
  const labels: Record<string, string[]> = {};
  for (const name of ['task', 'category'] as const)
    if (typeof query[name] === 'string' && query[name]) labels[name] = [query[name] as string];
  return labels;
}
