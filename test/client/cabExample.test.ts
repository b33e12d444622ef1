import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadRunConfig } from '../../client/config';
import { CAB_DATASET_DEFAULT_OUT } from '../../client/commands/dataset';
import { InputError } from '../../core/model/inputError';
import { REPO, tempDir } from '../support/harness';

/** examples/cab-demo.yaml, docs/protocols.md and `judgeflow dataset fetch cab` agree on where the dataset lives. */
test('the CryptoAnalystBench example reads the file `judgeflow dataset fetch cab` writes from the repository root, which git ignores', () => {
  const example = YAML.parse(fs.readFileSync(path.join(REPO, 'examples', 'cab-demo.yaml'), 'utf8')) as {
    queries: string;
  };
  expect(path.resolve(REPO, 'examples', example.queries)).toBe(path.resolve(REPO, CAB_DATASET_DEFAULT_OUT));
  const docs = fs.readFileSync(path.join(REPO, 'docs', 'protocols.md'), 'utf8');
  expect(docs).toContain(`\`${CAB_DATASET_DEFAULT_OUT}\` (git-ignored), where \`examples/cab-demo.yaml\` expects it`);
  expect(docs).not.toContain('../shared/datasets/cryptoanalystbench/dataset.csv');
  // git check-ignore exits 0 for an ignored path (it need not exist).
  expect(execFileSync('git', ['check-ignore', CAB_DATASET_DEFAULT_OUT], { cwd: REPO, encoding: 'utf8' }).trim()).toBe(
    CAB_DATASET_DEFAULT_OUT,
  );
});

test('a missing CryptoAnalystBench dataset is an input error that says the file is missing and how to fetch it there', () => {
  const root = tempDir('jf-cab-missing-');
  fs.mkdirSync(path.join(root, 'examples'));
  fs.copyFileSync(path.join(REPO, 'examples', 'cab-demo.yaml'), path.join(root, 'examples', 'cab-demo.yaml'));
  const expected = path.join(root, CAB_DATASET_DEFAULT_OUT);
  let error: unknown;
  try {
    loadRunConfig(path.join(root, 'examples', 'cab-demo.yaml'));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InputError);
  expect((error as Error).message).toContain(`${expected}: CryptoAnalystBench query file is missing.`);
  expect((error as Error).message).toContain(`judgeflow dataset fetch cab --out ${expected}`);
  expect((error as Error).message).not.toMatch(/^[^:]*\(ENOENT\)$/);
});
