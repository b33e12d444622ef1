#!/usr/bin/env node
// `npm test`: provision what the tests need (Chromium from Debian; the Temporal CLI is installed by jest's global setup),
// type-check, check the formatting, compile dist/ if it is stale (tests start the CLI as users do), run jest, and print one closing
// "passed, failed" line.
require('tsx/cjs');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ensureChromium } = require('../client/chromium.ts');
const { ensureBuilt } = require('./build.js');

async function main() {
  const root = path.resolve(__dirname, '..');
  await ensureChromium((line) => console.log(line));
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', root, '--noEmit'], {
    stdio: 'inherit',
    cwd: root,
  });
  if (tsc.status !== 0) {
    console.log('typecheck: 0 passed, 1 failed');
    return 1;
  }
  // The formatter's check (Prettier, .prettierrc): `npm run format` rewrites what it lists.
  const format = spawnSync(
    process.execPath,
    [require.resolve('prettier/bin/prettier.cjs'), '--check', '--log-level', 'warn', '.'],
    { stdio: 'inherit', cwd: root },
  );
  if (format.status !== 0) {
    console.log('format: 0 passed, 1 failed (npm run format rewrites the files listed above)');
    return 1;
  }
  if (!(await ensureBuilt(root))) {
    console.log('build: 0 passed, 1 failed');
    return 1;
  }
  const results = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'judgeflow-jest-')), 'results.json');
  const jest = spawnSync(
    process.execPath,
    [require.resolve('jest/bin/jest'), '--json', `--outputFile=${results}`, ...process.argv.slice(2)],
    { stdio: 'inherit', cwd: root },
  );
  let summary = null;
  try {
    summary = JSON.parse(fs.readFileSync(results, 'utf8'));
  } catch {
    // jest died before writing results; its exit code decides.
  }
  if (summary)
    console.log(
      `\njest: ${summary.numPassedTests} passed, ${summary.numFailedTests + summary.numRuntimeErrorTestSuites} failed, ${summary.numPendingTests} skipped`,
    );
  return jest.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
