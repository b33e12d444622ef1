import type { z } from 'zod';
import { describeZodError, InputError } from '../model/inputError';
import { readText } from './dataFiles';

/** One record of a JSON Lines file or a JSON array, with where it is (`file:line` or `file: item N`). */
export interface JsonRecord {
  value: unknown;
  at: string;
}

/**
 * The records of a JSON Lines file or (when `arrays` allows it) a JSON array of objects. A file in neither format (a CSV,
 * a pretty-printed object, YAML) is ONE error saying what is expected and how to convert, not one error per line.
 * `expected` says what a record holds, e.g. `{"id","text","task","category"}`.
 */
export function readJsonRecords(
  file: string,
  what: string,
  options: { arrays: boolean; expected: string },
): JsonRecord[] {
  const { records, problems } = jsonRecordsOf(file, what, options);
  if (problems.length)
    throw new InputError(
      problems
        .slice(0, 20)
        .map((p) => p.message)
        .join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''),
    );
  return records;
}

/** The records, and the lines that are not JSON (each with its index among the records, so reports keep file order). */
function jsonRecordsOf(
  file: string,
  what: string,
  options: { arrays: boolean; expected: string },
): { records: JsonRecord[]; problems: Array<{ before: number; message: string }> } {
  const text = readText(file, what);
  const expected = options.arrays
    ? `JSON Lines (one ${options.expected} object per line) or a JSON array of such objects`
    : `JSON Lines (one ${options.expected} object per line)`;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InputError(
        `${file}: ${what} starts like a JSON array but is not valid JSON (${(error as Error).message}); expected ${expected}`,
      );
    }
    if (!options.arrays)
      throw new InputError(
        `${file}: ${what} is a JSON array, but JSON Lines is expected here (one ${options.expected} object per line); convert it with: jq -c '.[]' ${file} > ${file.replace(/\.json$/i, '')}.jsonl`,
      );
    return {
      records: (value as unknown[]).map((item, i) => ({ value: item, at: `${file}: item ${i + 1}` })),
      problems: [],
    };
  }
  const records: JsonRecord[] = [];
  const problems: Array<{ before: number; message: string }> = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    try {
      records.push({ value: JSON.parse(line), at: `${file}:${i + 1}` });
    } catch (error) {
      // The first record is not JSON: the whole file is in another format, said once.
      if (!records.length && !problems.length)
        throw new InputError(wrongFormat(file, what, text, i + 1, (error as Error).message, expected, options.arrays));
      problems.push({
        before: records.length,
        message: `${file}:${i + 1}: not valid JSON (${(error as Error).message})`,
      });
    }
  }
  return { records, problems };
}

function wrongFormat(
  file: string,
  what: string,
  text: string,
  line: number,
  message: string,
  expected: string,
  arrays: boolean,
): string {
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    // not one JSON document either
  }
  const base = `${file}: ${what} is not in the expected format: expected ${expected}`;
  if (whole && typeof whole === 'object')
    return `${base}; this file is one JSON object spread over several lines. Put each record on its own line (jq -c '.[]' for an array, jq -c '.' for one object)${arrays ? ', or wrap the records in a JSON array [ … ]' : ''}`;
  const first = text.split(/\r?\n/)[line - 1].trim();
  const hint = /^[^{[]*,/.test(first)
    ? ' It looks like a CSV file: convert each row to one JSON object per line (e.g. python3 -c "import csv,json,sys; [print(json.dumps(r)) for r in csv.DictReader(open(sys.argv[1]))]" FILE)'
    : '';
  return `${base}; line ${line} is not JSON (${message}): ${JSON.stringify(first.slice(0, 60))}.${hint}`;
}

/** Parse JSON Lines (or a JSON array when `arrays`), validating each record; every bad record is reported with where it is, then the whole file is rejected. */
export function parseJsonLines<S extends z.ZodType>(
  file: string,
  schema: S,
  what: string,
  options: { arrays?: boolean; expected?: string; prepare?: (value: unknown) => unknown } = {},
): Array<z.infer<S>> {
  const { records, problems: syntax } = jsonRecordsOf(file, what, {
    arrays: options.arrays ?? false,
    expected: options.expected ?? 'JSON',
  });
  const items: Array<z.infer<S>> = [];
  const problems: string[] = [];
  records.forEach(({ value, at }, i) => {
    for (const p of syntax) if (p.before === i) problems.push(p.message);
    const parsed = schema.safeParse(options.prepare ? options.prepare(value) : value);
    if (parsed.success) items.push(parsed.data);
    else problems.push(describeZodError(parsed.error, at));
  });
  for (const p of syntax) if (p.before === records.length) problems.push(p.message);
  if (problems.length)
    throw new InputError(
      problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''),
    );
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
    if (item.id.length > QUERY_ID_MAX_CHARS)
      throw new InputError(
        `${at}: the id "${item.id.slice(0, 24)}…" is ${item.id.length} characters; use at most ${QUERY_ID_MAX_CHARS}`,
      );
    // eslint-disable-next-line no-control-regex
    const control = /[\u0000-\u001f\u007f]/.exec(item.id);
    if (control)
      throw new InputError(
        `${at}: the id ${JSON.stringify(item.id.slice(0, 40))} contains the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}; ids are one line of text`,
      );
    if (seen.has(item.id))
      throw new InputError(
        `${file}: query id "${item.id}" appears twice (second time as query ${i + 1}); ids must be unique`,
      );
    seen.add(item.id);
  }
}
