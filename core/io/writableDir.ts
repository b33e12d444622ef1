import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../model/inputError';

/**
 * `dir` is (or can be created as) a directory this process can write into. Checked when a config is loaded, so an
 * output path that is a file or read-only fails before a single copilot or judge call is paid for.
 */
export function assertWritableDir(dir: string, what: string): void {
  let existing = path.resolve(dir);
  // The directory itself, or the nearest ancestor that exists (the rest is created at report time).
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(existing);
    } catch (error) {
      if (!['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? ''))
        throw new InputError(`${what} ${dir} cannot be used (${(error as NodeJS.ErrnoException).code})`);
    }
    if (stat) {
      if (!stat.isDirectory())
        throw new InputError(
          existing === path.resolve(dir)
            ? `${what} ${dir} is a file, not a directory; point it at a directory (it is created when missing)`
            : `${what} ${dir} cannot be created: ${existing} is a file, not a directory`,
        );
      break;
    }
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new InputError(
      `${what} ${dir} is not writable (${existing} does not allow this user to create files); pick a directory you can write to`,
    );
  }
}
