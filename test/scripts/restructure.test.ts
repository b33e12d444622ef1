import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MOVES, restructure } from '../../scripts/restructure';

/** A throwaway git checkout holding `files` (path → text), committed. */
function fixture(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-restructure-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'fixture');
  return root;
}
const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), 'utf8');

const MOVES_HERE: Array<[string, string]> = [
  ['core/llm.ts', 'core/llm/client.ts'],
  ['core/providers', 'core/llm/providers'],
  ['workflows/types.ts', 'contract/run.ts'],
];

test('moves files and folders, rewrites every kind of module path to them, and a second run does nothing', () => {
  const root = fixture({
    'core/llm.ts':
      "import { profile } from './providers';\nimport type { X } from './providers/profile';\nexport const ask = 1; // see core/providers/profile.ts\n",
    'core/providers/index.ts': "export { profile } from './profile';\n",
    'core/providers/profile.ts':
      "import { ask } from '../llm';\nexport const profile = ask;\nexport type X = number;\n",
    'workflows/types.ts': "import type { X } from '../core/providers/profile';\nexport type Y = X;\n",
    'workflows/index.ts': "export type { Y } from './types';\n",
    'client/cli.ts':
      "const t = require('../workflows/types');\nexport type Z = import('../core/llm').Nothing;\nconst where = require.resolve('../workflows');\njest.mock('../core/llm');\nconst file = path.join(ROOT, 'core', 'llm.ts');\nconst doc = 'core/llm.ts';\n",
    'test/core/llm.test.ts': "import { ask } from '../../core/llm';\n",
    'docs/x.md': 'The client is `core/llm.ts`; profiles in `core/providers/`.\n',
  });
  const printed = restructure({ root, moves: MOVES_HERE, print: () => {} });
  expect(printed.filter((l) => l.startsWith('move '))).toEqual([
    'move core/llm.ts → core/llm/client.ts',
    'move test/core/llm.test.ts → test/core/llm/client.test.ts',
    'move core/providers/index.ts → core/llm/providers/index.ts',
    'move core/providers/profile.ts → core/llm/providers/profile.ts',
    'move workflows/types.ts → contract/run.ts',
  ]);
  expect(read(root, 'core/llm/client.ts')).toBe(
    "import { profile } from './providers';\nimport type { X } from './providers/profile';\nexport const ask = 1; // see core/llm/providers/profile.ts\n",
  );
  expect(read(root, 'core/llm/providers/profile.ts')).toBe(
    "import { ask } from '../client';\nexport const profile = ask;\nexport type X = number;\n",
  );
  expect(read(root, 'contract/run.ts')).toBe(
    "import type { X } from '../core/llm/providers/profile';\nexport type Y = X;\n",
  );
  expect(read(root, 'workflows/index.ts')).toBe("export type { Y } from '../contract/run';\n");
  expect(read(root, 'client/cli.ts')).toBe(
    "const t = require('../contract/run');\nexport type Z = import('../core/llm/client').Nothing;\nconst where = require.resolve('../workflows');\njest.mock('../core/llm/client');\nconst file = path.join(ROOT, 'core', 'llm', 'client.ts');\nconst doc = 'core/llm/client.ts';\n",
  );
  expect(read(root, 'test/core/llm/client.test.ts')).toBe("import { ask } from '../../../core/llm/client';\n");
  expect(read(root, 'docs/x.md')).toBe('The client is `core/llm/client.ts`; profiles in `core/llm/providers/`.\n');
  expect(fs.existsSync(path.join(root, 'core/providers'))).toBe(false);
  // git sees renames, not deletions and new files.
  expect(execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' })).toMatch(
    /^R[ M] core\/llm\.ts -> core\/llm\/client\.ts$/m,
  );

  const again = restructure({ root, moves: MOVES_HERE, print: () => {} });
  expect(again).toContain('Nothing to do: the layout is already the new one.');
});

test('a file merged after the run that still imports an old path is pointed at the new one', () => {
  const root = fixture({
    'core/llm/client.ts': 'export const ask = 1;\n',
    'activities/late.ts': "import { ask } from '../core/llm';\n",
  });
  restructure({ root, moves: MOVES_HERE, print: () => {} });
  expect(read(root, 'activities/late.ts')).toBe("import { ask } from '../core/llm/client';\n");
});

test('a move whose source is gone on this tree is reported, not guessed; a target already taken stops the run', () => {
  const missing = fixture({ 'core/other.ts': '' });
  expect(
    restructure({ root: missing, moves: [['core/llm.ts', 'core/llm/client.ts']], print: () => {} }).join('\n'),
  ).toMatch(/MISSING: core\/llm\.ts/);
  const taken = fixture({ 'core/llm.ts': '', 'core/llm/client.ts': '' });
  expect(() => restructure({ root: taken, moves: [['core/llm.ts', 'core/llm/client.ts']], print: () => {} })).toThrow(
    /exists already/,
  );
});

test("the table moves each path once and never onto another entry's source", () => {
  const sources = MOVES.map(([from]) => from);
  expect(new Set(sources).size).toBe(sources.length);
  for (const [, to] of MOVES) expect(sources).not.toContain(to);
});
