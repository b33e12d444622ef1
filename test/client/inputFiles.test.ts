import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';
import { copyRubric } from '../support/rubricCopy';
import { loadRunConfig } from '../../client/config';

/** A config and a LATTICE query file in a fresh directory; `lines` are the query file's lines (Buffers for raw bytes). */
function setup(lines: Array<string | Buffer>, config = '') {
  const dir = tempDir('jf-input-');
  fs.writeFileSync(
    path.join(dir, 'queries.jsonl'),
    Buffer.concat(lines.map((l) => Buffer.concat([Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from('\n')]))),
  );
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    config ||
      [
        'protocol: lattice',
        'queries: queries.jsonl',
        'judge: { baseURL: "http://127.0.0.1:9/v1", model: m }',
        'copilots:',
        '  - { name: A, type: openai, baseURL: "http://127.0.0.1:9/v1", model: m }',
        '',
      ].join('\n'),
  );
  return { dir, file, env: { JUDGEFLOW_HOME: path.join(dir, 'home') } };
}
const query = (id: string, text = 'Should I stake ETH?') => JSON.stringify({ id, text, task: 'T1', category: 'C1' });

describe('bad bytes and bad ids in input files: exit 2, naming the file and the line', () => {
  test('a query file with a Windows-1252 byte on line 2', async () => {
    const { file, dir, env } = setup([
      query('q1'),
      Buffer.concat([Buffer.from(query('q2').slice(0, -2)), Buffer.from([0xe9]), Buffer.from('"}')]),
    ]);
    const result = await cliInProcess(['run', '--config', file, '--dry-run'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path.join(dir, 'queries.jsonl')}:2: LATTICE`);
    expect(result.stderr).toMatch(/is not valid UTF-8 \(byte 0xe9 at column \d+ of line 2\)/);
  });

  test('a config file with invalid UTF-8', async () => {
    const { file } = setup([query('q1')]);
    fs.appendFileSync(file, Buffer.from([0x23, 0x20, 0xff, 0x0a])); // "# \xff"
    const result = await cliInProcess(['run', '--config', file, '--dry-run'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/config\.yaml:6: .*is not valid UTF-8 \(byte 0xff at column 3 of line 6\)/);
  });

  test.each([
    ['a NUL', 'q\u00001', /control character U\+0000/],
    ['a newline', 'q\n1', /control character U\+000A/],
    ['5,000 characters', 'q'.repeat(5_000), /is 5000 characters; use at most 256/],
  ])('a query id with %s is refused', async (_what, id, message) => {
    const { file, env } = setup([query('ok'), query(id)]);
    const result = await cliInProcess(['run', '--config', file, '--dry-run'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/queries\.jsonl: query 2: the id/);
    expect(result.stderr).toMatch(message);
  });
});

test('a huge prompt file in the rubric is loaded with a warning (every judge call would carry it)', async () => {
  const { file } = setup([query('q1')]);
  const rubric = copyRubric('lattice');
  fs.appendFileSync(path.join(rubric, 'judge-system.md'), `\n${'Be thorough. '.repeat(30_000)}`);
  fs.appendFileSync(file, `rubric: ${rubric}\n`);
  const warnings: string[] = [];
  loadRunConfig(file, (m) => warnings.push(m));
  expect(warnings.join('\n')).toMatch(
    /the rubric's prompt files come to [\d,]+ characters, and every judge call sends them/,
  );
});
