import { existsSync, readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { parseCsv } from '../../core/io/csv';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape } from './common';
import { readTrace, tracesSchema } from './traces';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z.literal('csv').describe('Answers you already hold, read from a CSV file by query text; nothing is asked.'),
    path: z
      .string()
      .min(1)
      .describe(
        'CSV in the CryptoAnalystBench layout (query, tags?, <name>_response, <name>_chat_id?, <name>_context?), relative to the config file.',
      ),
    column: z.string().min(1).optional().describe('The answer column; default <copilot name>_response.'),
    timestampColumn: z
      .string()
      .min(1)
      .optional()
      .describe(
        'When each answer was written; default <name>_timestamp if the file has it. Without one the judge is told no time.',
      ),
    traces: tracesSchema.optional(),
  })
  .strict();

export type CsvCopilotConfig = z.infer<typeof configSchema>;

/** Responses collected elsewhere (e.g. the published CryptoAnalystBench answers), imported by query text. */
export const csvAdapter: AdapterModule<CsvCopilotConfig> = {
  type: 'csv',
  configSchema,
  supportsHistory: false,
  importSource: (config) => config.path,
  validate: (config) => validateCsvCopilot(config),
  create(config) {
    const columns = columnsFor(config);
    return {
      async collect({ query }) {
        const table = loadTable(config.path);
        if (!config.traces) requireColumn(table, config.path, columns.response);
        const row = table.byExactQuery.get(query.text.trim()) ?? table.byNormalisedQuery.get(normalise(query.text));
        if (!row)
          throw new AdapterError(
            'missing',
            `${config.path} has no row whose query matches query ${query.id} ("${shorten(query.text)}")`,
          );
        const cell = (column: string | undefined) =>
          column && table.header.includes(column) ? (row[table.header.indexOf(column)] ?? '') : undefined;
        const chatId = cell(columns.chatId)?.trim();
        // The reference harness's traces: the context the agent answered from, and its answer when the CSV has none.
        const trace = config.traces && chatId ? readTrace(config.traces, columns.prefix, chatId) : null;
        const text = cell(columns.response)?.trim() ? cell(columns.response)! : (trace?.answer ?? '');
        // An empty cell means the copilot was never asked or gave nothing: recorded as missing, never scored as an empty answer.
        if (!text.trim())
          throw new AdapterError(
            'missing',
            `${config.path} has no ${columns.response} value${config.traces ? ' and its trace no answer' : ''} for query ${query.id} ("${shorten(query.text)}")`,
          );
        const own = [columns.response, columns.chatId, columns.context, columns.timestamp].filter((c) =>
          table.header.includes(c),
        );
        const fromTrace = trace ? { trace: trace.file } : {};
        return {
          text,
          // The file's own time, or none: the time of this import says nothing about when the answer was written.
          writtenAt: cell(columns.timestamp)?.trim() || null,
          raw: JSON.stringify({ ...Object.fromEntries(own.map((c) => [c, cell(c)])), ...fromTrace }),
          conversationId: cell(columns.chatId) || undefined,
          context: cell(columns.context) || trace?.context || undefined,
        };
      },
    };
  },
};

/** Fail at config-validation time, before a run starts, when the file or the column is missing. */
export function validateCsvCopilot(
  config: Pick<CsvCopilotConfig, 'name' | 'path' | 'column' | 'timestampColumn' | 'traces'>,
): void {
  const table = loadTable(config.path);
  // With traces the answers may come from them: then the chat id column is what must be there.
  requireColumn(table, config.path, config.traces ? columnsFor(config).chatId : columnsFor(config).response);
  if (config.traces && !existsSync(config.traces.dir))
    throw new AdapterError(
      'config',
      `traces.dir ${config.traces.dir} does not exist (expected <dir>/${columnsFor(config).prefix}/traces/<chat_id>.json)`,
    );
  if (config.timestampColumn) requireColumn(table, config.path, config.timestampColumn);
}

function columnsFor(config: Pick<CsvCopilotConfig, 'name' | 'column' | 'timestampColumn'>) {
  const response = config.column ?? `${config.name}_response`;
  // `X_response` pairs with `X_chat_id`, `X_context` and `X_timestamp`, even when the column was named explicitly.
  const prefix = response.endsWith('_response') ? response.slice(0, -'_response'.length) : config.name;
  return {
    prefix,
    response,
    chatId: `${prefix}_chat_id`,
    context: `${prefix}_context`,
    timestamp: config.timestampColumn ?? `${prefix}_timestamp`,
  };
}

interface Table {
  header: string[];
  byExactQuery: Map<string, string[]>;
  byNormalisedQuery: Map<string, string[]>;
}

/** Parsed files keyed by path; re-read only when the file's mtime or size changes. */
const cache = new Map<string, { mtimeMs: number; size: number; table: Table }>();

function loadTable(path: string): Table {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new AdapterError('config', `CSV file ${path} does not exist (cwd: ${process.cwd()})`);
  }
  const cached = cache.get(path);
  if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.table;
  let parsed: string[][];
  const text = readFileSync(path, 'utf8');
  // A JSON answers file (the LATTICE reference's filtered_response_<agent>.json) read as CSV fails on its first quote.
  if (/^\uFEFF?\s*[[{]/.test(text))
    throw new AdapterError(
      'config',
      `${path} is JSON, not CSV: a csv copilot reads a CSV with a "query" column and a <name>_response column; for a JSON array or JSON Lines of {query, response} use type: file (path: ${path})`,
    );
  try {
    parsed = parseCsv(text, path);
  } catch (error) {
    throw new AdapterError('config', (error as Error).message);
  }
  const [header, ...rows] = parsed;
  if (!header) throw new AdapterError('config', `${path} is empty (expected a header row with a "query" column)`);
  const queryIndex = header.indexOf('query');
  if (queryIndex < 0) throw new AdapterError('config', `${path} has no column "query" (columns: ${header.join(', ')})`);
  const table: Table = { header, byExactQuery: new Map(), byNormalisedQuery: new Map() };
  for (const row of rows) {
    const query = row[queryIndex] ?? '';
    // First occurrence wins, so a duplicated query resolves the same way every time.
    if (!table.byExactQuery.has(query.trim())) table.byExactQuery.set(query.trim(), row);
    if (!table.byNormalisedQuery.has(normalise(query))) table.byNormalisedQuery.set(normalise(query), row);
  }
  cache.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, table });
  return table;
}

function requireColumn(table: Table, path: string, column: string): void {
  if (!table.header.includes(column))
    throw new AdapterError('config', `${path} has no column "${column}" (columns: ${table.header.join(', ')})`);
}

/** Spreadsheet round trips collapse or add whitespace; the words still identify the query. */
function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function shorten(text: string): string {
  const flat = normalise(text);
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
}
