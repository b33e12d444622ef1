import type { z } from 'zod';
import { describeZodError, InputError } from './inputError';
import { readText } from './dataFiles';

/** Parse JSON Lines, validating each line; every bad line is reported with its number, then the whole file is rejected. */
export function parseJsonLines<S extends z.ZodType>(file: string, schema: S, what: string): Array<z.infer<S>> {
  const text = readText(file, what);
  const items: Array<z.infer<S>> = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(`${file}:${i + 1}: not valid JSON (${(error as Error).message})`);
      return;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) items.push(parsed.data);
    else problems.push(describeZodError(parsed.error, `${file}:${i + 1}`));
  });
  if (problems.length) throw new InputError(problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''));
  if (!items.length) throw new InputError(`${file}: ${what} has no queries`);
  return items;
}

/** Longest query id: ids key every stored row and appear in reports, CSV files and workflow details. */
export const QUERY_ID_MAX_CHARS = 256;

/**
 * Query ids must be unique within a snapshot (they key every stored row), and short single-line text: a NUL, a newline or
 * another control character, or thousands of characters, would break the files, tables and logs that show them.
 */
export function assertQueryIds(items: Array<{ id: string }>, file: string): void {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const at = `${file}: query ${i + 1}`;
    if (!item.id.trim()) throw new InputError(`${at}: the id is empty; give every query an id`);
    if (item.id.length > QUERY_ID_MAX_CHARS) throw new InputError(`${at}: the id "${item.id.slice(0, 24)}…" is ${item.id.length} characters; use at most ${QUERY_ID_MAX_CHARS}`);
    // eslint-disable-next-line no-control-regex
    const control = /[\u0000-\u001f\u007f]/.exec(item.id);
    if (control) throw new InputError(`${at}: the id ${JSON.stringify(item.id.slice(0, 40))} contains the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}; ids are one line of text`);
    if (seen.has(item.id)) throw new InputError(`${file}: query id "${item.id}" appears twice (second time as query ${i + 1}); ids must be unique`);
    seen.add(item.id);
  }
}
