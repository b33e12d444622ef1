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

/** Query ids must be unique within a snapshot: they key every stored row. */
export function assertUniqueIds(items: Array<{ id: string }>, file: string): void {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (seen.has(item.id)) throw new InputError(`${file}: query id "${item.id}" appears twice (second time as query ${i + 1}); ids must be unique`);
    seen.add(item.id);
  }
}
