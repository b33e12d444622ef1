import fs from 'node:fs';
import path from 'node:path';
import { runIdentity } from '../../client/runIdentity';
import { runConfig, latticeGrid, tempDir } from '../support/harness';
import { copyRubric } from '../support/rubricCopy';

const base = (dir: string, fields: Record<string, unknown> = {}) =>
  runConfig(dir, {
    protocol: 'lattice',
    queries: latticeGrid(2, 2),
    judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'judge' },
    copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
    ...fields,
  });

test('the same config, queries and rubric give the same key wherever the reports go', () => {
  const dir = tempDir();
  const a = runIdentity(base(dir));
  const b = runIdentity({ ...base(dir), output: path.join(dir, 'elsewhere') });
  expect(b).toEqual(a);
  expect(a.key).toMatch(/^run-[0-9a-f]{24}$/);
});

test('what is asked or how it is judged changes the key: a query, the judge model, a copilot, the rubric', () => {
  const dir = tempDir();
  const first = runIdentity(base(dir));
  const otherQueries = tempDir();
  expect(
    runIdentity(runConfig(otherQueries, { ...base(otherQueries), queries: latticeGrid(2, 3) })).snapshotId,
  ).not.toBe(first.snapshotId);
  expect(runIdentity({ ...base(dir), judge: { ...base(dir).judge!, model: 'other' } }).key).not.toBe(first.key);
  expect(
    runIdentity({ ...base(dir), copilots: [...base(dir).copilots, { ...base(dir).copilots[0], name: 'B' }] }).key,
  ).not.toBe(first.key);
  const rubricDir = copyRubric('lattice');
  fs.appendFileSync(path.join(rubricDir, 'judge-system.md'), '\nOne more rule.\n');
  const changed = runIdentity({ ...base(dir), rubric: rubricDir });
  expect(changed.rubricVersion).not.toBe(first.rubricVersion);
  expect(changed.key).not.toBe(first.key);
});

test('the key carries no secret: it is a hash, and the config holds only the name of the key variable', () => {
  const dir = tempDir();
  process.env.JF_TEST_SECRET = 'sk-very-secret';
  const withKey = runIdentity(
    base(dir, { judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'judge', apiKeyEnv: 'JF_TEST_SECRET' } }),
  );
  process.env.JF_TEST_SECRET = 'sk-another-secret';
  expect(
    runIdentity(base(dir, { judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'judge', apiKeyEnv: 'JF_TEST_SECRET' } }))
      .key,
  ).toBe(withKey.key);
  expect(withKey.key).not.toContain('secret');
});
