import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseCsv } from '../../core/io/csv';
import { turnSchema } from '../../core/model/history';
import { assertQueryIds, parseJsonLines } from '../../core/io/jsonl';
import type { Query } from '../../core/model/types';
import { InputError } from '../../core/model/inputError';
import { readText } from '../../core/io/dataFiles';

export const cabQuerySchema = z
  .object({
    id: z.string().min(1),
    text: z.string().min(1),
    /** One category label, or several. */
    tags: z.union([z.string(), z.array(z.string())]).optional(),
    history: z.array(turnSchema).optional(),
    /** Context that was available to every copilot for this query (a copilot's own context comes with its response). */
    context: z.string().optional(),
  })
  .strict();

/** A CryptoAnalystBench query: the shared fields plus its category labels (one per line) and the context systems had. */
export type CabQuery = Query & { tags?: string; context?: string };

export const asCabQuery = (query: Query) => query as CabQuery;

/**
 * CryptoAnalystBench queries, by file extension:
 * - `.jsonl` / `.ndjson`: one `{"id","text","tags"?,"history"?,"context"?}` per line;
 * - `.csv`: the CryptoAnalystBench layout, columns `query` and optionally `tags`, `id`, `context`
 *   (other columns, such as `<copilot>_response`, are ignored, so one file can hold queries and answers).
 *   Without an `id` column, ids are the 1-based data-row number, zero-padded: q001, q002, … (q0001 from
 *   1,000 rows) — stable as long as rows are not reordered.
 */
export function parseCabQueries(file: string): Query[] {
  // The published dataset is not shipped: a missing file says how to get it.
  if (!fs.existsSync(file))
    throw new InputError(
      `${file}: CryptoAnalystBench query file is missing. The published 198-query dataset is not shipped with judgeflow; download it to that path with: judgeflow dataset fetch cab --out ${file} (or point queries: at your own copy)`,
    );
  const ext = path.extname(file).toLowerCase();
  let queries: Query[];
  if (ext === '.csv') queries = parseCabCsv(file);
  else if (ext === '.jsonl' || ext === '.ndjson') {
    queries = parseJsonLines(file, cabQuerySchema, 'CryptoAnalystBench query file').map(({ tags, ...q }) => ({
      ...q,
      ...(tags === undefined ? {} : { tags: Array.isArray(tags) ? tags.join('\n') : tags }),
    }));
  } else
    throw new InputError(
      `${file}: CryptoAnalystBench queries must be a .csv (columns query,tags) or a .jsonl file, not "${ext || 'no extension'}"`,
    );
  assertQueryIds(queries, file);
  return queries;
}

function parseCabCsv(file: string): Query[] {
  const [header, ...rows] = parseCsv(readText(file, 'CryptoAnalystBench query file'), file);
  if (!header)
    throw new InputError(`${file}: empty CSV; expected a header row with a "query" column (and optionally "tags")`);
  const col = (name: string) => header.findIndex((h) => h.trim() === name);
  const queryCol = col('query');
  if (queryCol < 0)
    throw new InputError(
      `${file}: no "query" column in the header (${header.join(', ')}); CryptoAnalystBench CSVs have columns query,tags`,
    );
  const [tagsCol, idCol, contextCol] = [col('tags'), col('id'), col('context')];
  if (!rows.length) throw new InputError(`${file}: CryptoAnalystBench query file has no queries`);
  const width = Math.max(3, String(rows.length).length);
  const problems: string[] = [];
  const seenText = new Map<string, number>();
  const queries = rows.map((row, i): Query => {
    const cell = (c: number) => (c >= 0 ? (row[c] ?? '') : '');
    const text = cell(queryCol).trim();
    const where = `${file}: data row ${i + 1}`;
    if (!text) problems.push(`${where}: empty "query" cell`);
    // A CSV copilot finds its answer by query text, so two equal queries would silently share one answer.
    const key = text.replace(/\s+/g, ' ').toLowerCase();
    if (text && seenText.has(key))
      problems.push(`${where}: same query as data row ${seenText.get(key)! + 1}; remove one of them`);
    else seenText.set(key, i);
    const id = idCol >= 0 ? cell(idCol).trim() : `q${String(i + 1).padStart(width, '0')}`;
    if (!id) problems.push(`${where}: empty "id" cell`);
    const tags = cell(tagsCol).trim();
    const context = cell(contextCol).trim();
    return { id, text, ...(tags ? { tags } : {}), ...(context ? { context } : {}) };
  });
  if (problems.length)
    throw new InputError(
      problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''),
    );
  return queries;
}

/**
 * The category labels of a query: a JSON or Python-style list literal ("['A', 'B']"), one label per line,
 * or the whole cell as one label (the published dataset's layout).
 */
export function tagsOf(query: Query): string[] {
  const raw = typeof query.tags === 'string' ? query.tags.trim() : '';
  if (!raw) return [];
  if (raw.startsWith('[') && raw.endsWith(']')) {
    const items = raw.slice(1, -1).match(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g);
    if (items) return [...new Set(items.map((s) => s.slice(1, -1).trim()).filter(Boolean))];
  }
  return [
    ...new Set(
      raw
        .split(/\r?\n/)
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

/** CryptoAnalystBench's one label, `tags`, read the one way every report, comparison and snapshot count reads it. */
export function cabLabels(query: Query): Record<string, string[]> {
  const tags = tagsOf(query);
  return tags.length ? { tags } : {};
}
