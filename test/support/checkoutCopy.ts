import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './harness';

/** What a copy of the checkout needs to build and run the CLI (test/ and docs/ stay behind). */
export const CHECKOUT_ENTRIES = [
  'bin',
  'scripts',
  'contract',
  'services',
  'workflows',
  'activities',
  'worker',
  'client',
  'rubrics',
  'core',
  'stores',
  'sim',
  'tsconfig.json',
  'package.json',
];

/** Copy the checkout's code into `copy` (an empty temp folder), node_modules linked, so a test can edit and build it freely. */
export function copyCheckout(copy: string): void {
  for (const entry of CHECKOUT_ENTRIES)
    if (fs.existsSync(path.join(REPO, entry)))
      fs.cpSync(path.join(REPO, entry), path.join(copy, entry), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
}

/** Run the copy's bin/judgeflow.js; JUDGEFLOW_DEV comes only from `env` (so the launcher's own choice is what is tested). */
export function launchCopy(
  copy: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const childEnv = { ...process.env, ...env };
  if (!('JUDGEFLOW_DEV' in env)) delete childEnv.JUDGEFLOW_DEV;
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [path.join(copy, 'bin', 'judgeflow.js'), ...args],
      { env: childEnv, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}
