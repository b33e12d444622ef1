import { CsvError, parse, type Options } from 'csv-parse/sync';
import { InputError } from '../model/inputError';

/**
 * RFC 4180 CSV for the whole project (query files, CSV answers, traffic), read with csv-parse: quoted fields,
 * doubled quotes, CRLF, LF or CR line ends, embedded newlines, a UTF-8 BOM. Malformed quoting (a quote that never
 * closes, text after a closing quote, a bare quote inside an unquoted field) is an error naming the line, never two
 * rows silently merged into one.
 */

export interface CsvRecord {
  /** 1-based line of the file where the record starts (quoted fields may span lines). */
  line: number;
  cells: string[];
}

const HOW_TO_FIX =
  'a field that contains a quote, comma or line break must be wrapped in double quotes, with each quote inside it doubled ("")';

/** Records with the line each starts on; blank lines are skipped. `where` (the file) prefixes any error. */
export function csvRecords(text: string, where: string): CsvRecord[] {
  let lastEnd = 0; // the line the previous record ended on: an unclosed quote opened in the record after it
  let rows: Array<{ record: string[]; info: { lines: number }; raw: string }>;
  try {
    const options: Options = {
      bom: true,
      info: true,
      raw: true,
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ['\r\n', '\n', '\r'],
      on_record: (record, context) => {
        lastEnd = context.lines;
        return record;
      },
    };
    // With `info` and `raw` each record comes wrapped as { record, info, raw } (the typings do not model that).
    rows = parse(text, options) as unknown as typeof rows;
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const at = (error as CsvError & { lines?: number }).lines;
    if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
      const lines = text.split(/\r\n|\n|\r/);
      let start = lastEnd; // 0-based index of the first non-blank line after the last complete record
      while (start < lines.length - 1 && !lines[start].trim()) start++;
      throw new InputError(
        `${where}:${start + 1}: malformed CSV: the record starting on line ${start + 1} opens a quoted field that is never closed (the file ends inside it); ${HOW_TO_FIX}`,
      );
    }
    throw new InputError(`${where}:${at ?? '?'}: malformed CSV: ${error.message}; ${HOW_TO_FIX}`);
  }
  return rows
    .map(({ record, info, raw }) => {
      // `raw` holds the record (after any skipped blank lines) and its line end: its inner line breaks say where it started.
      const body = raw.replace(/^(?:\r\n|\n|\r)+/, '').replace(/(?:\r\n|\n|\r)$/, '');
      const breaks = body.match(/\r\n|\n|\r/g)?.length ?? 0;
      return { line: info.lines - breaks, cells: record };
    })
    .filter((r) => !(r.cells.length === 1 && r.cells[0].trim() === ''));
}

export function parseCsv(text: string, where: string): string[][] {
  return csvRecords(text, where).map((r) => r.cells);
}

/** Text a spreadsheet would run as a formula, after any single quotes already in front of it. */
const GUARDED = /^'*[=+\-@\t\r]/;

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection": starts with = + - @, tab or CR) gets a leading
 * single quote, so query ids, tags and texts from outside come out inert. Numbers are written as numbers. Text that
 * already starts with quotes before such a character gets one more, so restoreCell can undo exactly what was added.
 */
export function neutraliseCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const s = String(value);
  return GUARDED.test(s) ? `'${s}` : s;
}

/** A cell read back from a CSV judgeflow wrote: the quote neutraliseCell added is taken off (export → import is lossless). */
export function restoreCell(cell: string): string {
  return cell.startsWith("'") && GUARDED.test(cell) ? cell.slice(1) : cell;
}

function quote(value: unknown): string {
  const s = neutraliseCell(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: unknown[][]): string {
  return rows.map((r) => r.map(quote).join(',')).join('\n') + '\n';
}
