import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../support/harness';
import { tempDir } from '../support/harness';

/**
 * The test environment (test/support/quietEnvironment.js) fails a test file that leaves a timer pending after its tests
 * (such a timer kept a jest worker process alive past the end of `npm test`: "A worker process has failed to exit
 * gracefully"), naming where the timer was set; a file whose timers are cleared, or unref'd, passes. It closes the
 * shared results stores a file opened (left open, they made the worker's exit itself too slow).
 */
jest.setTimeout(120_000);

function jestOn(dir: string): Promise<{ code: number; output: string }> {
  const config = {
    rootDir: dir,
    testEnvironment: path.join(REPO, 'test', 'support', 'quietEnvironment.js'),
    testMatch: ['**/*.test.js'],
    transform: {},
  };
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--config', JSON.stringify(config), '--ci'],
      { cwd: dir, timeout: 110_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

test('a file that leaves a timer pending fails, with where it was set; cleared and unref’d timers pass', async () => {
  const dir = tempDir('jf-quiet-env-');
  const bound = (clear: string) =>
    `test('a call raced against a bound', async () => {\n` +
    `  let timer;\n` +
    `  await Promise.race([Promise.resolve(), new Promise((r) => (timer = setTimeout(r, 60000)))]);\n` +
    `  ${clear}\n});\n`;
  fs.writeFileSync(path.join(dir, 'leaves.test.js'), bound(''));
  fs.writeFileSync(path.join(dir, 'clears.test.js'), bound('clearTimeout(timer);'));
  fs.writeFileSync(path.join(dir, 'unrefs.test.js'), bound('timer.unref();'));
  const { code, output } = await jestOn(dir);
  expect(code).toBe(1);
  expect(output).toMatch(/FAIL \S*leaves\.test\.js/);
  expect(output).toMatch(
    /left 1 timer\(s\) pending after its tests[^]*setTimeout\(…, 60000\) at \S*leaves\.test\.js:3/,
  );
  expect(output).toMatch(/PASS \S*clears\.test\.js/);
  expect(output).toMatch(/PASS \S*unrefs\.test\.js/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('after each file, the environment closes the shared results stores the file registered (stores/index.ts)', async () => {
  const dir = tempDir('jf-quiet-env-stores-');
  const marker = path.join(dir, 'closed');
  fs.writeFileSync(
    path.join(dir, 'stores.test.js'),
    // Its modules are loaded while the file runs (jest refuses a require once it is tearing the file down).
    `const fs = require('node:fs');\n` +
      `test('a file whose code opened shared stores', () => {\n` +
      `  globalThis[Symbol.for('judgeflow.closeStores')] = async () => fs.writeFileSync(${JSON.stringify(marker)}, 'closed');\n` +
      `  expect(fs.existsSync(${JSON.stringify(marker)})).toBe(false);\n});\n`,
  );
  const { code, output } = await jestOn(dir);
  expect(output).toMatch(/PASS \S*stores\.test\.js/);
  expect(code).toBe(0);
  expect(fs.readFileSync(marker, 'utf8')).toBe('closed');
  fs.rmSync(dir, { recursive: true, force: true });
});
