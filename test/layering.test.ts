import fs from 'node:fs';
import path from 'node:path';
import {
  checkCoreRooms,
  checkLayering,
  describeViolation,
  importCycles,
  importsOf,
  sourceFiles,
} from './support/layering';

const ROOT = path.join(__dirname, '..');
const exists = (rel: string) => fs.existsSync(path.join(ROOT, rel));

test('no source file imports a layer above its own; workflows import only the workflow API and types', () => {
  const files = sourceFiles(ROOT);
  expect(files.length).toBeGreaterThan(80);
  expect(checkLayering(files, exists).map(describeViolation)).toEqual([]);
});

test('every core/ file sits in a room, and only the I/O and LLM rooms touch files or the network', () => {
  expect(checkCoreRooms(sourceFiles(ROOT)).map(describeViolation)).toEqual([]);
});

test('no import circle between files', () => {
  expect(importCycles(sourceFiles(ROOT), exists)).toEqual([]);
});

describe('the checker', () => {
  // Synthetic files: paths are what place them in a layer, the text what they import.
  const check = (file: string, text: string, present: string[] = []) =>
    checkLayering([{ file, text }], (p) => present.includes(p) || exists(p)).map(describeViolation);

  test('reads every kind of import', () => {
    const refs = importsOf(
      'x.ts',
      [
        "import a from './a';",
        "import type { B } from './b';",
        "import { type C } from './c';",
        "export { d } from './d';",
        "export type { E } from './e';",
        "import f = require('./f');",
        "const g = require('./g');",
        "const h = await import('./h');",
        "let i: import('./i').I;",
      ].join('\n'),
    );
    expect(refs.map((r) => [r.specifier, r.typeOnly, r.line])).toEqual([
      ['./a', false, 1],
      ['./b', true, 2],
      ['./c', true, 3],
      ['./d', false, 4],
      ['./e', true, 5],
      ['./f', false, 6],
      ['./g', false, 7],
      ['./h', false, 8],
      ['./i', true, 9],
    ]);
  });

  test('fails on core importing a protocol, an adapter or the client, naming the file, line and import', () => {
    expect(check('core/stats/someFigure.ts', "import { x } from '../../rubrics/cab/judge';")).toEqual([
      "core/stats/someFigure.ts:1 imports '../../rubrics/cab/judge': layer 0 (core/) imports layer 1 (rubrics/): lower layers never import higher ones",
    ]);
    expect(check('core/config.ts', "\nimport type { A } from '../activities/adapters';")).toEqual([
      "core/config.ts:2 imports '../activities/adapters': layer 0 (core/) imports layer 1 (activities/adapters/): lower layers never import higher ones",
    ]);
    expect(check('core/x.ts', "const c = require('../client/config');")).toHaveLength(1);
    expect(check('core/x.ts', "export * from '../stores/sqlite';", ['stores/sqlite.ts'])).toHaveLength(1);
  });

  test('fails on siblings of layer 1 importing each other, and on activities importing the CLI', () => {
    expect(check('activities/adapters/http.ts', "import { tagsOf } from '../../rubrics/cab/queries';")).toEqual([
      "activities/adapters/http.ts:1 imports '../../rubrics/cab/queries': activities/adapters/ may import only core/ and its own folder, not rubrics/cab/",
    ]);
    expect(check('rubrics/lattice/report.ts', "import { tagsOf } from '../cab/queries';")).toHaveLength(1);
    expect(check('rubrics/index.ts', "import { judgeCabUnit } from './cab/judge';")).toHaveLength(1);
    expect(check('rubrics/index.ts', "import { cabProtocol } from './cab';")).toEqual([]);
    expect(check('activities/run.ts', "import { loadRunConfig } from '../client/config';")).toHaveLength(1);
    expect(check('client/cli.ts', "import { x } from '../core/types';")).toEqual([]);
    // The CLI reaches a use case it shares with activities through services/, not an activity module's internals.
    expect(check('client/commands/report.ts', "import { renderReport } from '../../activities/run';")).toEqual([
      "client/commands/report.ts:1 imports '../../activities/run': client/ reaches activities/ only through deps.ts, adapters/ and the activities it runs in-process; a use case the CLI shares with activities belongs in services/",
    ]);
    expect(check('client/commands/report.ts', "import { renderReport } from '../../services/runReport';")).toEqual([]);
    expect(check('client/config.ts', "import { adapterFor } from '../activities/adapters';")).toEqual([]);
  });

  test('fails on workflow code importing values from anything but @temporalio/workflow and other workflow files', () => {
    expect(check('workflows/benchmarkRun.ts', "import { protocolFor } from '../rubrics';")).toEqual([
      "workflows/benchmarkRun.ts:1 imports '../rubrics': workflow code may import only @temporalio/workflow, other workflow files, contract/, and types (import type)",
    ]);
    expect(check('workflows/benchmarkRun.ts', "import { z } from 'zod';")).toHaveLength(1);
    expect(
      check(
        'workflows/x.ts',
        "import type { RunActivities } from '../activities';\nimport { proxyActivities } from '@temporalio/workflow';\nimport { runPool } from './pool';",
      ),
    ).toEqual([]);
  });

  test('contract/ imports only message definitions, other contract files and core types; the client reaches workflows/ through its index', () => {
    expect(
      check(
        'contract/run.ts',
        "import type { Query } from '../core/model/types';\nimport { defineQuery } from '@temporalio/workflow';\nimport { x } from './control';",
      ),
    ).toEqual([]);
    expect(check('contract/run.ts', "import { contentHash } from '../core/model/hashing';")).toEqual([
      "contract/run.ts:1 imports '../core/model/hashing': contract/ may import only @temporalio/workflow, other contract files, and core/ types (import type)",
    ]);
    expect(check('contract/run.ts', "import type { X } from '../workflows/breaker';")).toHaveLength(1);
    expect(check('client/x.ts', "import { benchmarkRun } from '../workflows';")).toEqual([]);
    expect(check('client/commands/x.ts', "import { rootCause } from '../../workflows/collectAndJudge';")).toEqual([
      "client/commands/x.ts:1 imports '../../workflows/collectAndJudge': activities/, client/ and worker/ import from workflows/ only its index (the workflow functions); shared types and messages are in contract/",
    ]);
    expect(check('workflows/x.ts', "import { progressQuery } from '../contract/control';")).toEqual([]);
  });

  test('core rooms: a file outside a room, or a pure room touching files or the network, fails', () => {
    const rooms = (file: string, text: string) => checkCoreRooms([{ file, text }]).map(describeViolation);
    expect(rooms('core/helpers.ts', '')).toEqual([
      expect.stringMatching(/^core\/helpers.ts:1 imports '': core\/ files live in a room/),
    ]);
    expect(rooms('core/stats/x.ts', "import fs from 'node:fs';")).toEqual([
      "core/stats/x.ts:1 imports 'node:fs': core/stats/ is pure: files and network belong in core/io/ or core/llm/",
    ]);
    expect(rooms('core/report/x.ts', "\nconst r = await fetch('http://x');")).toEqual([
      "core/report/x.ts:2 imports 'fetch': core/report/ is pure: network calls belong in core/llm/",
    ]);
    expect(rooms('core/io/x.ts', "import fs from 'node:fs';")).toEqual([]);
    expect(rooms('core/llm/x.ts', "const r = await fetch('http://x');")).toEqual([]);
  });

  test('finds import circles, type-only imports included, and nothing else', () => {
    const files = [
      { file: 'core/a.ts', text: "import { b } from './b';" },
      { file: 'core/b.ts', text: "import type { C } from './c';" },
      { file: 'core/c.ts', text: "export * from './a';" },
      { file: 'core/d.ts', text: "import { a } from './a';" },
    ];
    const present = new Set(files.map((f) => f.file));
    expect(importCycles(files, (p) => present.has(p))).toEqual([['core/a.ts', 'core/b.ts', 'core/c.ts']]);
    expect(importCycles(files.slice(0, 2).concat(files.slice(3)), (p) => present.has(p))).toEqual([]);
  });
});
