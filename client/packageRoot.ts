import fs from 'node:fs';
import path from 'node:path';

/** The folder holding package.json (and bin/, examples/), found from here whether this code runs from source or from dist/. */
export const PACKAGE_ROOT = findPackageRoot(__dirname);

/** The launcher users run; commands that start more judgeflow processes (a demo's workers) start it too. */
export const CLI_PATH = path.join(PACKAGE_ROOT, 'bin', 'judgeflow.js');

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
