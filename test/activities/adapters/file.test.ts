import fs from 'node:fs';
import path from 'node:path';
import { fileAdapter, discoverAnswerFiles } from '../../../activities/adapters/file';
import { csvAdapter } from '../../../activities/adapters/csv';
import { AdapterError } from '../../../activities/adapters/types';
import { loadRunConfig } from '../../../client/config';
import type { Query } from '../../../core/model/types';
import { tempDir } from '../../support/harness';

const signal = new AbortController().signal;
const write = (dir: string, name: string, text: string) => {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};
const copilot = (file: string, extra: Record<string, unknown> = {}) =>
  fileAdapter.configSchema.parse({ name: 'elsa', type: 'file', path: file, ...extra });
const ask = (file: string, query: Query) => fileAdapter.create(copilot(file), { env: {} }).collect({ query, signal });
const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return error as AdapterError;
  }
  throw new Error('expected a failure');
};

describe('type: file reads answers held in a file', () => {
  const dir = tempDir();
  const q = (id: string, text: string, reference?: unknown): Query => ({
    id,
    text,
    task: 'T1',
    category: 'C1',
    ...(reference ? { reference } : {}),
  });

  test("the reference's JSON array of {query, response, id}: by id, then by query text", async () => {
    const file = write(
      dir,
      'a.json',
      JSON.stringify([
        { query: 'What is a liquidation threshold?', response: 'Answer zero.', id: 0 },
        { query: 'Second  question “quoted”', response: 'Answer one.', id: 1 },
      ]),
    );
    expect(
      (await ask(file, q('0', 'What is a liquidation threshold?', { id: 0, task: 'T1', category: 'C1' }))).text,
    ).toBe('Answer zero.');
    // No id in common (another numbering): the text decides, whitespace and curly quotes normalised.
    expect((await ask(file, q('q9', 'Second question "quoted"'))).text).toBe('Answer one.');
  });

  test('final_answer (the README) or answer (other harnesses) name the answer too; JSON Lines is read as well', async () => {
    const file = write(
      dir,
      'b.jsonl',
      [
        { query: 'one', final_answer: 'F' },
        { query: 'two', answer: 'A' },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n'),
    );
    expect((await ask(file, q('1', 'one'))).text).toBe('F');
    expect((await ask(file, q('2', 'two'))).text).toBe('A');
  });

  test('a query without an answer, an empty answer, or an id pointing at another query: missing, with its reason', async () => {
    const file = write(
      dir,
      'c.json',
      JSON.stringify([
        { query: 'asked', response: '', id: 5 },
        { query: 'other', response: 'x', id: 6 },
      ]),
    );
    const none = await failure(ask(file, q('7', 'never asked')));
    expect(none.kind).toBe('missing');
    expect(none.message).toMatch(/has no answer whose id or query matches query 7 \("never asked"\)/);
    const empty = await failure(ask(file, q('5', 'asked')));
    expect(empty.kind).toBe('missing');
    expect(empty.message).toMatch(/the answer to query 5 \("asked"\) is empty/);
    const renumbered = await failure(ask(file, q('6', 'a query the file does not hold')));
    expect(renumbered.message).toMatch(/the answer with id 6 is to another query \("other"\)/);
  });

  test('a file that is not answers is one clear config error, at validation', () => {
    const csvLike = write(dir, 'd.json', 'query,response\nq,a\n');
    expect(() => fileAdapter.validate!(copilot(csvLike))).toThrow(
      /answers file is not in the expected format: expected JSON Lines .*"query", "response"/,
    );
    const noQuery = write(dir, 'e.json', JSON.stringify([{ question: 'q', response: 'a' }]));
    expect(() => fileAdapter.validate!(copilot(noQuery))).toThrow(
      /item 1: no "query" text \(keys: question, response\)/,
    );
  });

  test('a .csv is read as the csv copilot reads it', async () => {
    const file = write(dir, 'f.csv', 'query,elsa_response\nhello,from csv\n');
    expect((await ask(file, q('1', 'hello'))).text).toBe('from csv');
  });

  test('a JSON answers file given to a csv copilot says what is expected, not "Invalid Opening Quote"', () => {
    const file = write(dir, 'g.json', JSON.stringify([{ query: 'q', response: 'a' }]));
    expect(() =>
      csvAdapter.validate!(csvAdapter.configSchema.parse({ name: 'elsa', type: 'csv', path: file })),
    ).toThrow(/g\.json is JSON, not CSV: .*use type: file/);
  });
});

describe('copilotsFrom: { dir, prefix }', () => {
  test('one file copilot per <prefix><name>.json, named by the file, in name order, after the listed copilots', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'answers'));
    for (const name of ['sorin', 'elsa'])
      write(
        path.join(dir, 'answers'),
        `filtered_response_${name}.json`,
        JSON.stringify([{ query: 'q', response: `${name} says` }]),
      );
    write(path.join(dir, 'answers'), 'notes.json', '[]');
    write(dir, 'q.jsonl', '{"id":"1","text":"q","task":"T1","category":"C1"}\n');
    write(
      dir,
      'c.yaml',
      'protocol: lattice\nqueries: q.jsonl\njudge: { baseURL: "http://127.0.0.1:9/v1", model: m }\ncopilotsFrom: { dir: answers }\ncopilots: [{ name: gina, type: file, path: answers/filtered_response_sorin.json }]\n',
    );
    const config = loadRunConfig(path.join(dir, 'c.yaml'));
    expect(config.copilots.map((c) => [c.name, c.type])).toEqual([
      ['gina', 'file'],
      ['elsa', 'file'],
      ['sorin', 'file'],
    ]);
    expect((config.copilots[1] as { path: string }).path).toBe(
      path.join(dir, 'answers', 'filtered_response_elsa.json'),
    );
    expect(config).not.toHaveProperty('copilotsFrom');
  });

  test('a folder without such files is a config error naming it', () => {
    const dir = tempDir();
    expect(() => discoverAnswerFiles(dir, 'filtered_response_')).toThrow(/no file filtered_response_<name>\.json in/);
  });
});
