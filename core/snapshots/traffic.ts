import path from 'node:path';
import { csvRecords } from '../io/csv';
import { InputError } from '../model/inputError';
import { readText } from '../io/dataFiles';

/**
 * Production traffic files for curation: JSON Lines or CSV with a `query` field and optional
 * timestamp and user/session fields. Malformed lines are reported with their line numbers.
 */

export interface TrafficItem {
  /** 1-based line of the file where the record starts. */
  line: number;
  query: string;
  timestamp?: string;
  user?: string;
  session?: string;
  /** A category the traffic already carries (`tags`, `tag` or `category`); used instead of LLM tagging when it is in the list. */
  tags?: string;
}

export interface TrafficProblem {
  line: number;
  reason: string;
}

export interface ParsedTraffic {
  format: 'jsonl' | 'csv';
  items: TrafficItem[];
  bad: TrafficProblem[];
}

const ALIASES: Record<'timestamp' | 'user' | 'session' | 'tags', string[]> = {
  tags: ['tags', 'tag', 'category'],
  timestamp: ['timestamp', 'ts', 'time', 'created_at', 'createdAt'],
  user: ['user', 'user_id', 'userId'],
  session: ['session', 'session_id', 'sessionId', 'conversation_id'],
};

function optional(record: Record<string, unknown>, names: string[]): string | undefined {
  for (const name of names) {
    const v = record[name];
    if (typeof v === 'string' && v.trim()) return v.trim();
    if (typeof v === 'number') return String(v);
  }
  return undefined;
}

/** One record → an item, or the reason it is malformed. */
function toItem(record: Record<string, unknown>, line: number): TrafficItem | string {
  const q = record.query;
  if (q === undefined) return `no "query" field (fields: ${Object.keys(record).join(', ') || 'none'})`;
  if (typeof q !== 'string') return `"query" must be a string, found ${q === null ? 'null' : typeof q}`;
  if (!q.trim()) return '"query" is empty';
  const item: TrafficItem = { line, query: q.trim() };
  for (const key of ['timestamp', 'user', 'session', 'tags'] as const) {
    const v = optional(record, ALIASES[key]);
    if (v !== undefined) item[key] = v;
  }
  return item;
}

function parseJsonl(text: string): ParsedTraffic {
  const items: TrafficItem[] = [];
  const bad: TrafficProblem[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      bad.push({ line, reason: `not valid JSON (${(error as Error).message})` });
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      bad.push({ line, reason: 'not a JSON object' });
      return;
    }
    const item = toItem(value as Record<string, unknown>, line);
    if (typeof item === 'string') bad.push({ line, reason: item });
    else items.push(item);
  });
  return { format: 'jsonl', items, bad };
}

function parseCsvTraffic(text: string, file: string): ParsedTraffic {
  const [header, ...rows] = csvRecords(text, file);
  if (!header) throw new InputError(`${file}: the CSV file is empty (expected a header row with a "query" column)`);
  const names = header.cells.map((h) => h.trim());
  if (!names.includes('query'))
    throw new InputError(
      `${file}: missing column "query" (header has: ${names.join(', ')}); the traffic file needs a "query" column`,
    );
  const items: TrafficItem[] = [];
  const bad: TrafficProblem[] = [];
  for (const row of rows) {
    if (row.cells.length !== names.length) {
      bad.push({ line: row.line, reason: `${row.cells.length} fields, the header has ${names.length}` });
      continue;
    }
    const item = toItem(Object.fromEntries(names.map((n, k) => [n, row.cells[k]])), row.line);
    if (typeof item === 'string') bad.push({ line: row.line, reason: item });
    else items.push(item);
  }
  return { format: 'csv', items, bad };
}

/** Parse a traffic file; never throws for malformed records (they come back in `bad`), only for an unreadable or empty file. */
export function parseTraffic(file: string): ParsedTraffic {
  const text = readText(file, 'traffic file');
  const ext = path.extname(file).toLowerCase();
  const isCsv =
    ext === '.csv' || (ext !== '.jsonl' && ext !== '.ndjson' && ext !== '.json' && !text.trimStart().startsWith('{'));
  const parsed = isCsv ? parseCsvTraffic(text, file) : parseJsonl(text);
  if (!parsed.items.length && !parsed.bad.length) throw new InputError(`${file}: the traffic file has no queries`);
  return parsed;
}

/** The traffic, or an InputError listing every malformed line unless they may be skipped. */
export function loadTraffic(file: string, skipBad: boolean): ParsedTraffic {
  const parsed = parseTraffic(file);
  if (parsed.bad.length && !skipBad) {
    const shown = parsed.bad.slice(0, 20).map((b) => `${file}:${b.line}: ${b.reason}`);
    throw new InputError(
      `${parsed.bad.length} malformed line(s) in the traffic file:\n${shown.join('\n')}${parsed.bad.length > 20 ? `\n... and ${parsed.bad.length - 20} more` : ''}\nFix them, or pass --skip-bad to skip them (they are counted in the report).`,
    );
  }
  if (!parsed.items.length) throw new InputError(`${file}: no valid queries in the traffic file`);
  return parsed;
}
