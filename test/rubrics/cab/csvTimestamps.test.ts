import fs from 'node:fs';
import path from 'node:path';
import { csvAdapter } from '../../../activities/adapters/csv';
import { toCsv } from '../../../core/io/csv';
import { protocolFor } from '../../../rubrics';
import { scoringMessage, taxonomyMessages } from '../../../rubrics/cab/prompts';
import type { CabRubric } from '../../../rubrics/cab/rubric';
import { tempDir } from '../../support/harness';

/** The CryptoAnalystBench judge is told when an imported answer was written only when the file says so. */

const query = { id: 'q1', text: 'Is SOL a buy before the ETF decision?' };
const rubric = (() => {
  const cab = protocolFor('cab');
  return cab.loadRubric(cab.defaultRubricDir) as CabRubric;
})();

function csvFile(header: string[], row: string[]): string {
  const file = path.join(tempDir('jf-csv-ts-'), 'answers.csv');
  fs.writeFileSync(file, toCsv([header, row]));
  return file;
}

async function collect(file: string, fields: Record<string, unknown> = {}) {
  const config = csvAdapter.configSchema.parse({ name: 'Elsa', type: 'csv', path: file, ...fields });
  return csvAdapter.create(config, { env: {} }).collect({ query, signal: new AbortController().signal });
}

const prompt = (timestamp: string | null) =>
  scoringMessage(
    rubric,
    query,
    { label: 'Response #1', text: 'Yes, size small.', timestamp, context: null },
    '2026-03-05',
  ).content;

test('an Elsa_timestamp column is when the answer was written, and the judge is told it', async () => {
  const answer = await collect(
    csvFile(['query', 'Elsa_response', 'Elsa_timestamp'], [query.text, 'Yes, size small.', '2025-11-02T09:30:00Z']),
  );
  expect(answer.writtenAt).toBe('2025-11-02T09:30:00Z');
  expect(prompt(answer.writtenAt!)).toContain('Response #1 was written at: 2025-11-02T09:30:00Z');
});

test('a timestampColumn named in the config is used instead', async () => {
  const answer = await collect(
    csvFile(['query', 'Elsa_response', 'asked_at'], [query.text, 'Yes, size small.', '2025-10-01']),
    { timestampColumn: 'asked_at' },
  );
  expect(answer.writtenAt).toBe('2025-10-01');
});

test('without a timestamp the judge is told nothing about when the answer was written (not the time of the import)', async () => {
  const answer = await collect(csvFile(['query', 'Elsa_response'], [query.text, 'Yes, size small.']));
  expect(answer.writtenAt).toBeNull();
  const scoring = prompt(answer.writtenAt ?? null);
  const taxonomy = taxonomyMessages(
    rubric,
    query,
    { text: 'Yes, size small.', timestamp: null, context: null },
    '2026-03-05',
  )
    .map((m) => m.content)
    .join('\n');
  for (const text of [scoring, taxonomy]) {
    expect(text).not.toMatch(/written at/i);
    expect(text).toContain('Evaluation date: 2026-03-05');
  }
});
