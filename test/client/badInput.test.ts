import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../support/cli';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, tempDir, writeQueries } from '../support/harness';
import { copyRubric, editOnce } from '../support/rubricCopy';

/**
 * The bad-input corpus, through the real CLI as a user runs it: each bad config, name, path, CSV, JSON Lines or rubric
 * makes `judgeflow run` exit 2 with a message naming what is wrong, before anything starts — no results store, no
 * output directory, no run.
 */

const COPILOT = { type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' };

interface Case {
  name: string;
  /** Builds the config (and any files it names) in `dir`; returns the config object written to dir/bench.yaml. */
  setup: (dir: string) => Record<string, unknown>;
  message: RegExp;
}

const lattice = (dir: string, extra: Record<string, unknown> = {}) => ({
  protocol: 'lattice',
  queries: writeQueries(dir, latticeGrid(2, 2)),
  judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'j' },
  copilots: [{ name: 'Alpha', ...COPILOT }],
  output: 'runs',
  ...extra,
});

const cab = (dir: string, csv: string, extra: Record<string, unknown> = {}) => {
  fs.writeFileSync(path.join(dir, 'dataset.csv'), csv);
  return { ...lattice(dir), protocol: 'cab', queries: 'dataset.csv', ...extra };
};

const cases: Case[] = [
  {
    name: 'a 2,000-character copilot name (it would exceed the workflow id limit)',
    setup: (dir) => lattice(dir, { copilots: [{ name: 'A'.repeat(2000), ...COPILOT }] }),
    message: /copilots\[0\]\.name: copilot name "A{24}…" is 2000 characters; use at most 64/,
  },
  {
    name: 'copilot names that differ only in letter case',
    setup: (dir) =>
      lattice(dir, {
        copilots: [
          { name: 'Alpha', ...COPILOT },
          { name: 'alpha', ...COPILOT },
        ],
      }),
    message: /copilots\[1\]\.name: duplicate copilot name "alpha" \(copilots\[0\] is "Alpha"\)/,
  },
  {
    name: 'a copilot name that is not a safe file name',
    setup: (dir) => lattice(dir, { copilots: [{ name: '../etc', ...COPILOT }] }),
    message: /copilots\[0\]\.name: copilot name "\.\.\/etc": use letters, digits/,
  },
  {
    name: 'a copilot name Windows reserves',
    setup: (dir) => lattice(dir, { copilots: [{ name: 'NUL', ...COPILOT }] }),
    message: /copilot name "NUL" is a reserved device name/,
  },
  {
    name: 'an output path that is a file',
    setup: (dir) => {
      fs.writeFileSync(path.join(dir, 'runs'), 'not a directory');
      return lattice(dir);
    },
    message: /output: .*runs is a file, not a directory/,
  },
  {
    name: 'an output path below a file',
    setup: (dir) => {
      fs.writeFileSync(path.join(dir, 'file'), 'x');
      return lattice(dir, { output: 'file/runs' });
    },
    message: /output: .*file\/runs cannot be created: .*file is a file/,
  },
  {
    name: 'a CryptoAnalystBench CSV with an unterminated quote (two rows would merge into one query)',
    setup: (dir) => cab(dir, 'query,tags\nIs BTC up?,Meme Coins\n"Is ETH up?,Meme Coins\nIs SOL up?,Meme Coins\n'),
    message: /dataset\.csv:3: malformed CSV: the record starting on line 3 opens a quoted field that is never closed/,
  },
  {
    name: 'a CSV copilot whose answers file has a stray quote',
    setup: (dir) => {
      fs.writeFileSync(path.join(dir, 'answers.csv'), 'query,Sheet_response\nIs BTC up?,"yes"no\n');
      return lattice(dir, { copilots: [{ name: 'Sheet', type: 'csv', path: 'answers.csv' }] });
    },
    message: /copilots\[0\] \(Sheet\): .*answers\.csv:2: malformed CSV/,
  },
  {
    name: 'a JSON Lines query file with a broken line',
    setup: (dir) => {
      fs.writeFileSync(
        path.join(dir, 'q.jsonl'),
        '\uFEFF{"id":"a","text":"Is BTC up?","task":"T1","category":"C1"}\n{"id":"b","text":\n',
      );
      return lattice(dir, { queries: 'q.jsonl' });
    },
    message: /q\.jsonl:2: not valid JSON/,
  },
  {
    name: 'a query longer than the hard limit',
    setup: (dir) =>
      lattice(dir, {
        queries: writeQueries(
          dir,
          [{ id: 'huge', text: 'Is BTC up? '.repeat(20_000), task: 'T1', category: 'C1' }],
          'huge.jsonl',
        ),
      }),
    message: /1 query is longer than 200,000 characters .*: huge \(220,000 characters\)/,
  },
  {
    name: 'a rubric whose prompt path climbs out of the rubric directory',
    setup: (dir) => {
      const rubric = copyRubric('lattice');
      editOnce(path.join(rubric, 'rubric.yaml'), 'system: judge-system.md', 'system: ../../../../etc/hostname');
      return lattice(dir, { rubric });
    },
    message: /prompts\.system file "\.\.\/\.\.\/\.\.\/\.\.\/etc\/hostname" points outside the directory/,
  },
  {
    name: 'a rubric whose prompt file is a symbolic link to a file outside it',
    setup: (dir) => {
      const rubric = copyRubric('cab');
      fs.writeFileSync(path.join(dir, 'secret.txt'), 'not for the judge');
      fs.rmSync(path.join(rubric, 'judge-system.md'));
      fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(rubric, 'judge-system.md'));
      return cab(dir, 'query,tags\nIs BTC up?,Meme Coins\n', { rubric });
    },
    message:
      /prompts\.system file "judge-system\.md" points outside the directory .* \(it is a symbolic link to .*secret\.txt\)/,
  },
  {
    name: 'a rubric with broken YAML',
    setup: (dir) => {
      const rubric = copyRubric('lattice');
      fs.appendFileSync(path.join(rubric, 'rubric.yaml'), '\nbroken: [unclosed\n');
      return lattice(dir, { rubric });
    },
    message: /rubric\.yaml: not valid YAML\/JSON: .*line \d+/,
  },
];

async function refused(c: Case, run: (argv: string[], env: Record<string, string>) => ReturnType<typeof runCli>) {
  const dir = tempDir('jf-badinput-');
  const config = path.join(dir, 'bench.yaml');
  fs.writeFileSync(config, JSON.stringify(c.setup(dir)));
  const before = new Set(fs.readdirSync(dir));
  const home = path.join(dir, 'home');
  const { code, stdout, stderr } = await run(['run', '--config', config], {
    JUDGEFLOW_HOME: home,
    JUDGEFLOW_STORE: path.join(home, 'results.db'),
    TEMPORAL_ADDRESS: '127.0.0.1:9',
  });
  expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  expect(stderr).toMatch(/^judgeflow run: /);
  expect(stderr).toMatch(c.message);
  expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  // Nothing written: no results store (so no run in it), no output directory, no other new file.
  expect(fs.existsSync(home)).toBe(false);
  expect(new Set(fs.readdirSync(dir))).toEqual(before);
}

// Every case through the run command's own code in this process (no start-up cost per case)...
test.each(cases)('judgeflow run refuses $name: exit 2, a clear message, nothing started or written', (c) =>
  refused(c, cliInProcess),
);

// ...and one of each kind (name, path, CSV, rubric path) through the real executable, as a user runs it.
test('the real judgeflow executable exits 2 on a bad name, output path, CSV and rubric path, writing nothing', async () => {
  const picked = [0, 4, 6, 10].map((i) => cases[i]);
  await Promise.all(picked.map((c) => refused(c, runCli)));
}, 300_000); // four process start-ups (tsx compiles the CLI on the fly): seconds on an idle machine, far more on a loaded one
