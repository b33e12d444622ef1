import fs from 'node:fs';
import path from 'node:path';
import { rubricCommand } from '../../client/commands/rubric';
import { diffContent, flattenContent, lineDiff, renderDiff, rubricOutline } from '../../core/model/rubricOutline';
import { SqliteStore } from '../../stores/sqlite';
import { contentHash } from '../../core/model/hashing';
import { InputError } from '../../core/model/inputError';
import { latticeProtocol } from '../../rubrics/lattice';
import { tempDir } from '../support/harness';
import { copyRubric, D2_NEW, D2_OLD, editOnce } from '../support/rubricCopy';

/** Run a command object in-process and capture what it prints. */
async function capture(fn: () => Promise<number>): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const spy = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.join(' ')));
  try {
    return { code: await fn(), out: lines.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

test('flattening keys id-bearing lists by id, so an inserted item is one change, not a cascade', () => {
  const a = {
    dims: [
      { id: 'D1', w: 1 },
      { id: 'D2', w: 2 },
    ],
    list: [3, 4],
  };
  const b = {
    dims: [
      { id: 'D0', w: 0 },
      { id: 'D1', w: 1 },
      { id: 'D2', w: 2 },
    ],
    list: [3, 5],
  };
  expect([...flattenContent(a).keys()]).toEqual([
    'dims[D1].id',
    'dims[D1].w',
    'dims[D2].id',
    'dims[D2].w',
    'list[0]',
    'list[1]',
  ]);
  expect(diffContent(a, b)).toEqual([
    { path: 'list[1]', kind: 'changed', a: 4, b: 5 },
    { path: 'dims[D0].id', kind: 'added', b: 'D0' },
    { path: 'dims[D0].w', kind: 'added', b: 0 },
  ]);
});

test('lineDiff keeps common lines and marks removed and added ones', () => {
  expect(lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne')).toEqual([
    { op: ' ', text: 'a' },
    { op: '-', text: 'b' },
    { op: '+', text: 'B' },
    { op: ' ', text: 'c' },
    { op: ' ', text: 'd' },
    { op: '+', text: 'e' },
  ]);
  expect(lineDiff('same', 'same')).toEqual([{ op: ' ', text: 'same' }]);
});

test('the LATTICE outline covers dimensions, weights, prompt hashes and judge settings', () => {
  const rubric = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir);
  const o = rubricOutline(rubric);
  expect(o.version).toBe(rubric.version);
  expect(o.dimensions.map((d) => d.id)).toEqual(['D1', 'D2', 'D3', 'D4', 'D5', 'D6', 'Refusal']);
  expect(o.judge).toEqual({ temperature: 0, maxInvalidAnswers: 2 });
  expect((o.weights as Record<string, Record<string, number>>).C4.D3).toBe(30);
  const systemText = fs.readFileSync(path.join(latticeProtocol.defaultRubricDir, 'judge-system.md'), 'utf8');
  expect(o.prompts.system.sha256).toBe(contentHash(systemText));
  expect(o.fields['data.dimensions[D2].name']).toBe('Mechanism Clarity');
  expect(o.fields['prompts.system']).toMatch(/^sha256:[0-9a-f]{12} \(\d+ chars\)$/);
});

test('rubric diff of two directories names exactly the changed fields, with prompt text diffed line by line', async () => {
  const dir = copyRubric();
  editOnce(path.join(dir, 'rubric.yaml'), D2_OLD, D2_NEW);
  editOnce(path.join(dir, 'rubric.yaml'), 'C1: { D1: 15, D2: 25, D3: 15,', 'C1: { D1: 20, D2: 20, D3: 15,');
  editOnce(
    path.join(dir, 'judge-system.md'),
    'Rules for every dimension:',
    'Rules for every dimension:\nPenalise invented numbers.',
  );
  const before = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir);
  const after = latticeProtocol.loadRubric(dir);
  expect(after.version).not.toBe(before.version);

  const changes = diffContent(before.content, after.content);
  expect(changes.map((c) => c.path)).toEqual([
    'data.dimensions[D2].description',
    'data.weights.C1.D1',
    'data.weights.C1.D2',
    'prompts.system',
  ]);
  const prompt = changes.find((c) => c.path === 'prompts.system')!;
  expect(prompt.lines!.filter((l) => l.op !== ' ')).toEqual([{ op: '+', text: 'Penalise invented numbers.' }]);

  const { code, out } = await capture(() =>
    rubricCommand.run({ values: {}, positionals: ['diff', latticeProtocol.defaultRubricDir, dir] }),
  );
  expect(code).toBe(0);
  expect(out).toContain(`rubric ${before.version}`);
  expect(out).toContain(after.version);
  expect(out).toContain('~ data.weights.C1.D1: 15 → 20');
  expect(out).toContain('    + Penalise invented numbers.');
  expect(out).toContain(`- ${D2_OLD}`);
  expect(renderDiff({ label: 'x', version: 'v' }, { label: 'y', version: 'v' }, [])).toContain('no changes');
});

test('rubric show and diff accept rubric versions and run ids stored in the results store', async () => {
  const home = tempDir('jf-rubric-home-');
  const prevHome = process.env.JUDGEFLOW_HOME;
  const prevStore = process.env.JUDGEFLOW_STORE;
  process.env.JUDGEFLOW_HOME = home;
  delete process.env.JUDGEFLOW_STORE;
  try {
    const dir = copyRubric();
    editOnce(path.join(dir, 'rubric.yaml'), D2_OLD, D2_NEW);
    const edited = latticeProtocol.loadRubric(dir);
    const original = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir);
    const store = new SqliteStore(path.join(home, 'results.db'));
    await store.putRubric(edited.version, 'lattice', edited.content);
    await store.putRubric(original.version, 'lattice', original.content);
    await store.createRun({
      runId: 'run-old',
      protocol: 'lattice',
      snapshotId: 's',
      rubricVersion: original.version,
      judge: { model: 'm', baseURL: 'http://x', temperature: 0 },
      copilots: ['A'],
      startedAt: '2025-01-01T00:00:00Z',
      sourceRunId: null,
      config: {},
    });
    await store.close();
    fs.rmSync(dir, { recursive: true }); // the stored version must not need the files any more

    const diff = await capture(() =>
      rubricCommand.run({ values: { json: true }, positionals: ['diff', 'run-old', edited.version] }),
    );
    const parsed = JSON.parse(diff.out);
    expect(parsed.a).toEqual({ version: original.version, source: 'run run-old' });
    expect(parsed.b).toEqual({ version: edited.version, source: 'stored' });
    expect(parsed.changes).toEqual([
      expect.objectContaining({ path: 'data.dimensions[D2].description', kind: 'changed' }),
    ]);

    const show = await capture(() => rubricCommand.run({ values: {}, positionals: ['show'] }));
    expect(show.out).toContain(`lattice rubric version ${original.version}`);
    expect(show.out).toMatch(/system {2}sha256 [0-9a-f]{12}/);

    await expect(rubricCommand.run({ values: {}, positionals: ['diff', 'nope', edited.version] })).rejects.toThrow(
      InputError,
    );
    await expect(rubricCommand.run({ values: {}, positionals: ['diff', 'nope', edited.version] })).rejects.toThrow(
      /"nope" is not a rubric directory, nor a rubric version or run id/,
    );
    await expect(rubricCommand.run({ values: {}, positionals: ['frobnicate'] })).rejects.toThrow(
      /unknown action "frobnicate"/,
    );
    await expect(rubricCommand.run({ values: { rubric: home }, positionals: ['show'] })).rejects.toThrow(
      /cannot tell which protocol/,
    );
  } finally {
    if (prevHome === undefined) delete process.env.JUDGEFLOW_HOME;
    else process.env.JUDGEFLOW_HOME = prevHome;
    if (prevStore !== undefined) process.env.JUDGEFLOW_STORE = prevStore;
  }
});

test('judgeVersion: weights and the rubric name only aggregate (same judgeVersion); a prompt or dimension text change reaches the judge', () => {
  const base = latticeProtocol.loadRubric(copyRubric('lattice'));
  const reweighted = copyRubric('lattice');
  editOnce(path.join(reweighted, 'rubric.yaml'), 'C1: { D1: 15, D2: 25,', 'C1: { D1: 25, D2: 15,');
  editOnce(path.join(reweighted, 'rubric.yaml'), 'name: LATTICE', 'name: LATTICE (team weights)');
  const weights = latticeProtocol.loadRubric(reweighted);
  expect(weights.version).not.toBe(base.version);
  expect(weights.judgeVersion).toBe(base.judgeVersion);

  const reworded = copyRubric('lattice');
  editOnce(path.join(reworded, 'rubric.yaml'), D2_OLD, D2_NEW);
  expect(latticeProtocol.loadRubric(reworded).judgeVersion).not.toBe(base.judgeVersion);
  const prompt = copyRubric('lattice');
  fs.appendFileSync(path.join(prompt, 'judge-system.md'), '\nBe strict.\n');
  expect(latticeProtocol.loadRubric(prompt).judgeVersion).not.toBe(base.judgeVersion);
  // A task's name is shown to the judge ("Task type: T1 Protocol Mechanism Interpretation"), so it is judge-facing too.
  const task = copyRubric('lattice');
  editOnce(path.join(task, 'rubric.yaml'), 'name: Protocol Mechanism Interpretation', 'name: Protocol Mechanics');
  expect(latticeProtocol.loadRubric(task).judgeVersion).not.toBe(base.judgeVersion);
});
