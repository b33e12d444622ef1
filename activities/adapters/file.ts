import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readJsonRecords } from '../../core/io/jsonl';
import type { Query } from '../../core/model/types';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape } from './common';
import { csvAdapter, type CsvCopilotConfig } from './csv';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z
      .literal('file')
      .describe(
        'Answers you already hold, read from a file; nothing is asked. The format follows the extension: .csv, .json, .jsonl/.ndjson.',
      ),
    path: z
      .string()
      .min(1)
      .describe(
        "The answers file, relative to the config file: a JSON array or JSON Lines of {query, response | final_answer | answer, id?} (the LATTICE reference's filtered_response_<agent>.json), or a CSV as the csv copilot reads it.",
      ),
    column: z.string().min(1).optional().describe('CSV only: the answer column; default <copilot name>_response.'),
  })
  .strict();

export type FileCopilotConfig = z.infer<typeof configSchema>;

/** One answer as an answers file holds it. */
interface FileAnswer {
  id: string | null;
  query: string;
  text: string;
  raw: string;
}

interface AnswerIndex {
  byId: Map<string, FileAnswer>;
  byText: Map<string, FileAnswer>;
  byNormalisedText: Map<string, FileAnswer>;
}

const isCsv = (file: string) => path.extname(file).toLowerCase() === '.csv';
const asCsv = (config: FileCopilotConfig): CsvCopilotConfig =>
  csvAdapter.configSchema.parse({ ...config, type: 'csv' }) as CsvCopilotConfig;

/**
 * Quotes and whitespace as spreadsheets and editors change them: the words still identify the query. (The reference
 * harness matches the stripped text exactly; this also finds an answer whose query lost or gained a curly quote.)
 */
export function normaliseQueryText(text: string): string {
  return text
    .replace(/[\u2018\u2019\u201a\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201e\u2033]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

const EXPECTED = '{"query", "response" (or "final_answer" or "answer"), "id"?}';

/**
 * Parsed answer files keyed by path; re-read only when the file's mtime or size changes. The file is looked at again
 * at most every STAT_FRESH_MS: an import asks for thousands of answers in a row, and a stat each was a tenth of it.
 */
const cache = new Map<string, { mtimeMs: number; size: number; index: AnswerIndex; statAt: number }>();
const STAT_FRESH_MS = 200;

export function loadAnswers(file: string): AnswerIndex {
  const now = Date.now();
  const known = cache.get(file);
  if (known && now - known.statAt < STAT_FRESH_MS) return known.index;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new AdapterError('config', `answers file ${file} does not exist (cwd: ${process.cwd()})`);
  }
  if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) {
    known.statAt = now;
    return known.index;
  }
  let records;
  try {
    records = readJsonRecords(file, 'answers file', { arrays: true, expected: EXPECTED });
  } catch (error) {
    throw new AdapterError('config', (error as Error).message);
  }
  const index: AnswerIndex = { byId: new Map(), byText: new Map(), byNormalisedText: new Map() };
  const problems: string[] = [];
  for (const { value, at } of records) {
    const item = value as Record<string, unknown>;
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`${at}: expected an object ${EXPECTED}`);
      continue;
    }
    const query = typeof item.query === 'string' ? item.query : typeof item.Query === 'string' ? item.Query : undefined;
    if (query === undefined || !query.trim()) {
      problems.push(
        `${at}: no "query" text (keys: ${Object.keys(item).join(', ') || 'none'}); each answer names the query it answers`,
      );
      continue;
    }
    // The reference reads final_answer first, then response; `answer` is what other harnesses write.
    const answer = [item.final_answer, item.response, item.answer].find((a) => typeof a === 'string' && a.trim());
    const id = typeof item.id === 'number' || (typeof item.id === 'string' && item.id.trim()) ? String(item.id) : null;
    const entry: FileAnswer = { id, query, text: typeof answer === 'string' ? answer : '', raw: JSON.stringify(item) };
    // A query answered twice: the last answer counts, as in the reference's loader.
    if (id !== null) index.byId.set(id, entry);
    index.byText.set(query.trim(), entry);
    index.byNormalisedText.set(normaliseQueryText(query), entry);
  }
  if (problems.length)
    throw new AdapterError(
      'config',
      problems.slice(0, 10).join('\n') + (problems.length > 10 ? `\n... and ${problems.length - 10} more` : ''),
    );
  if (!records.length) throw new AdapterError('config', `${file} holds no answers (expected ${EXPECTED} records)`);
  cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, index, statAt: now });
  return index;
}

/** The id a query is known by in the files it came from: the reference's own id when it had one. */
const idOf = (query: Query): string => {
  const reference = query.reference as { id?: unknown } | undefined;
  return reference && (typeof reference.id === 'number' || typeof reference.id === 'string')
    ? String(reference.id)
    : query.id;
};

const shorten = (text: string) => {
  const flat = normaliseQueryText(text);
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
};

/**
 * The answer to `query`: by id when the file gives ids, else by query text (exact after trimming, then normalised).
 * An id whose answer names another query is not trusted (query files are renumbered between the reference's sets):
 * the query's text decides, and with no answer of that text the query is missing, saying both.
 */
export function findAnswer(index: AnswerIndex, query: Query, file: string): FileAnswer {
  const byText = index.byText.get(query.text.trim()) ?? index.byNormalisedText.get(normaliseQueryText(query.text));
  const byId = index.byId.size ? index.byId.get(idOf(query)) : undefined;
  if (byId && normaliseQueryText(byId.query) === normaliseQueryText(query.text)) return byId;
  if (byText) return byText;
  if (byId)
    throw new AdapterError(
      'missing',
      `${file}: the answer with id ${idOf(query)} is to another query ("${shorten(byId.query)}"), and no answer's query matches query ${query.id} ("${shorten(query.text)}")`,
    );
  throw new AdapterError(
    'missing',
    `${file} has no answer whose ${index.byId.size ? 'id or ' : ''}query matches query ${query.id} ("${shorten(query.text)}")`,
  );
}

/** Answers collected elsewhere, read from a JSON array, JSON Lines or a CSV, matched by id or query text. */
export const fileAdapter: AdapterModule<FileCopilotConfig> = {
  type: 'file',
  configSchema,
  supportsHistory: false,
  importSource: (config) => config.path,
  validate(config) {
    if (isCsv(config.path)) return csvAdapter.validate!(asCsv(config));
    if (config.column)
      throw new AdapterError(
        'config',
        `column applies to a CSV answers file; ${config.path} is read as JSON (its records name the answer "response", "final_answer" or "answer")`,
      );
    loadAnswers(config.path);
  },
  create(config, context) {
    if (isCsv(config.path)) return csvAdapter.create(asCsv(config), context);
    return {
      async collect({ query }) {
        const found = findAnswer(loadAnswers(config.path), query, config.path);
        // An empty answer means the copilot gave nothing: recorded as missing, never scored as an empty answer.
        if (!found.text.trim())
          throw new AdapterError(
            'missing',
            `${config.path}: the answer to query ${query.id} ("${shorten(query.text)}") is empty`,
          );
        return { text: found.text, raw: found.raw, writtenAt: null };
      },
    };
  },
};

/**
 * `copilotsFrom: { dir, prefix }`: one file copilot per `<prefix><name>.json` in `dir`, named by the file, in name
 * order, as the reference harness discovers its agents.
 */
export function discoverAnswerFiles(dir: string, prefix: string): Array<{ name: string; path: string }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    throw new AdapterError(
      'config',
      `copilotsFrom.dir ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const found = names
    .filter(
      (n) => n.startsWith(prefix) && n.toLowerCase().endsWith('.json') && n.length > prefix.length + '.json'.length,
    )
    .sort()
    .map((n) => ({ name: n.slice(prefix.length, -'.json'.length), path: path.join(dir, n) }));
  if (!found.length)
    throw new AdapterError(
      'config',
      `copilotsFrom: no file ${prefix}<name>.json in ${dir} (files: ${names.slice(0, 10).join(', ') || 'none'})`,
    );
  return found;
}
