import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A temp name no other writer uses (another process, or a concurrent write in this one), beside `file` so rename stays atomic. */
function tempNameFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
}

/** Write a file whole, then rename it into place, so a crash never leaves a half-written report or export. */
export async function writeFileAtomic(file: string, content: string | ((tmp: string) => Promise<void>)): Promise<void> {
  if (typeof content === 'string') return writeTextAtomic(file, content);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempNameFor(file);
  try {
    await content(tmp);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true }); // only left behind when writing failed
  }
}

export function writeTextAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempNameFor(file);
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** An existing regular file (symlinks followed) this process may execute: a binary we can run, not a directory of that name. */
export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
