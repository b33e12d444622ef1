import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvAdapter, validateCsvCopilot, type CsvCopilotConfig } from '../../../activities/adapters/csv';
import { toCsv } from '../../../core/io/csv';
import type { Query } from '../../../core/model/types';
import { adapterFailure } from '../../support/adapterError';
import { cabDatasetRows } from '../../support/cabDataset';

// The published CryptoAnalystBench queries when ../shared has them, else a CAB-shaped fixture of the same size.
const dataset = cabDatasetRows();
const answerA = (k: number) =>
  `A on #${k}: BTC, ETH and "SOL" look strong,\nbut watch "funding", fees, and risk.\r\nSources: a, b`;
const answerB = (k: number) => (k % 3 === 0 ? '' : k % 3 === 1 ? `B says "${k}", plainly` : '   '); // empty and blank cells are missing
const queries: Query[] = dataset.map((row, k) => ({ id: `cab-${k}`, text: row.query }));

let dir: string;
let path: string;

beforeAll(() => {
  expect(dataset).toHaveLength(198);
  dir = mkdtempSync(join(tmpdir(), 'judgeflow-csv-'));
  path = join(dir, 'responses.csv');
  const header = ['query', 'tags', 'A_response', 'A_chat_id', 'A_context', 'B_response'];
  writeFileSync(
    path,
    toCsv([
      header,
      ...dataset.map((row, k) => [
        row.query,
        row.tags,
        answerA(k),
        `chat-${k}`,
        k % 2 ? `context, "${k}"` : '',
        answerB(k),
      ]),
    ]),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function adapter(fields: Partial<CsvCopilotConfig> & { name: string }) {
  const config = csvAdapter.configSchema.parse({ type: 'csv', path, ...fields });
  return csvAdapter.create(config, { env: {} });
}

const signal = new AbortController().signal;

test('imports every answer exactly, with commas, quotes and newlines intact', async () => {
  const a = adapter({ name: 'A' });
  for (const [k, query] of queries.entries()) {
    const response = await a.collect({ query, signal });
    expect(response.text).toBe(answerA(k));
    expect(response.conversationId).toBe(`chat-${k}`);
    expect(response.context).toBe(k % 2 ? `context, "${k}"` : undefined);
    expect(JSON.parse(response.raw!)).toEqual({
      A_response: answerA(k),
      A_chat_id: `chat-${k}`,
      A_context: k % 2 ? `context, "${k}"` : '',
    });
  }
});

test('empty or blank cells are "missing", never empty answers', async () => {
  const b = adapter({ name: 'B' });
  for (const [k, query] of queries.entries()) {
    if (k % 3 === 1) {
      const response = await b.collect({ query, signal });
      expect(response.text).toBe(answerB(k));
      expect(JSON.parse(response.raw!)).toEqual({ B_response: answerB(k) }); // B has no chat id / context columns
      continue;
    }
    const error = await adapterFailure(b.collect({ query, signal }));
    expect(error.kind).toBe('missing');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(`no B_response value for query cab-${k}`);
  }
});

test('matches by trimmed and whitespace-normalised query text; unknown queries are missing', async () => {
  const a = adapter({ name: 'A' });
  const text = queries[5].text;
  expect((await a.collect({ query: { id: 'x', text: `  ${text}\n` }, signal })).text).toBe(answerA(5));
  expect((await a.collect({ query: { id: 'y', text: text.replace(/ /g, '  \t') }, signal })).text).toBe(answerA(5));
  const error = await adapterFailure(a.collect({ query: { id: 'z', text: 'A question nobody asked' }, signal }));
  expect(error.kind).toBe('missing');
  expect(error.message).toContain('no row whose query matches query z');
});

test('column override reads another system column', async () => {
  const other = adapter({ name: 'Other', column: 'A_response' });
  const response = await other.collect({ query: queries[7], signal });
  expect(response.text).toBe(answerA(7));
  expect(response.conversationId).toBe('chat-7'); // A_response pairs with A_chat_id
});

test('a missing column is a config error naming the column and the file, at validation time too', async () => {
  const message = `${path} has no column "Sorin_response"`;
  expect(message).toMatch(/responses\.csv has no column "Sorin_response"$/);
  const error = await adapterFailure(adapter({ name: 'Sorin' }).collect({ query: queries[0], signal }));
  expect(error.kind).toBe('config');
  expect(error.message).toContain(message);
  expect(() => validateCsvCopilot({ name: 'Sorin', path })).toThrow(message);
  expect(() => validateCsvCopilot({ name: 'A', path })).not.toThrow();
  expect(() => validateCsvCopilot({ name: 'A', path: join(dir, 'nope.csv') })).toThrow(/nope\.csv does not exist/);
});

test('the parsed file is cached per path and re-read when it changes', async () => {
  const small = join(dir, 'small.csv');
  writeFileSync(
    small,
    toCsv([
      ['query', 'C_response'],
      ['Q1', 'first'],
    ]),
  );
  const c = csvAdapter.create(csvAdapter.configSchema.parse({ name: 'C', type: 'csv', path: small }), { env: {} });
  expect((await c.collect({ query: { id: '1', text: 'Q1' }, signal })).text).toBe('first');
  writeFileSync(
    small,
    toCsv([
      ['query', 'C_response'],
      ['Q1', 'second, edited'],
    ]),
  );
  const later = new Date(Date.now() + 10_000);
  utimesSync(small, later, later); // make sure the mtime moves even on coarse-grained filesystems
  expect((await c.collect({ query: { id: '1', text: 'Q1' }, signal })).text).toBe('second, edited');
});
