import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { finished } from 'node:stream/promises';
import { InputError } from '../model/inputError';

/** A temp name no other writer uses (another process, or a concurrent write in this one), beside `file` so rename stays atomic. */
function tempNameFor(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`,
  );
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

/**
 * Fill a new directory, then put it in place of `dir` whole: a reader (or a crash) sees the old set of files or the new
 * one, never a mix or half of one. The new directory is made beside `dir` (same filesystem, so the renames are atomic);
 * whatever `dir` holds that `fill` did not write moves along unchanged. Between the two renames `dir` is briefly absent.
 */
export async function replaceDirWhole(dir: string, fill: (tmp: string) => Promise<void>): Promise<void> {
  const parent = path.dirname(dir);
  fs.mkdirSync(parent, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(parent, `.${path.basename(dir)}.${process.pid}.`));
  const old = `${tmp}.old`;
  try {
    fs.chmodSync(tmp, fs.existsSync(dir) ? fs.statSync(dir).mode & 0o7777 : 0o777 & ~process.umask());
    await fill(tmp);
    for (let attempt = 0; ; attempt++) {
      if (fs.existsSync(dir)) {
        for (const name of fs.readdirSync(dir))
          if (!fs.existsSync(path.join(tmp, name))) fs.renameSync(path.join(dir, name), path.join(tmp, name));
        try {
          fs.renameSync(dir, old);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // another writer swapped it just now
        }
      }
      try {
        fs.renameSync(tmp, dir);
        break;
      } catch (error) {
        // Another writer put its directory in place between our renames: take its place (ours is as new) once more.
        if (attempt >= 3 || !['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
  } finally {
    fs.rmSync(old, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true }); // only there when filling or the swap failed
  }
}

/**
 * The bytes of a file:// URL (a download address set to a local copy, e.g. JUDGEFLOW_DATASET_URL): fetch() does not
 * read file: URLs. A missing or unreadable file is an input error naming the file and the variable that gave it.
 */
export function readFileUrl(url: string, variable: string): Buffer {
  let file: string;
  try {
    file = fileURLToPath(url);
  } catch (error) {
    throw new InputError(
      `${variable}: ${url} is not a file URL (${(error as Error).message}); write it as file:///absolute/path`,
    );
  }
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new InputError(
      `${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set it to the URL of a file that exists`,
    );
  }
}

/**
 * Pieces of text written to a file in order, gathered to about 64 KB a write and waiting for the stream to drain. If
 * the pieces fail (a report's page reading the store), the file is closed before the error goes on, and the stream's
 * own error (the folder removed meanwhile, say) is the caller's no more: left unheard, it killed a report thread.
 */
export async function writeChunks(file: string, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const out = fs.createWriteStream(file);
  const written = finished(out);
  written.catch(() => undefined); // heard here at once; awaited below, where it fails the write
  try {
    let pending: string[] = [];
    let pendingChars = 0;
    const flush = async () => {
      const text = pending.join('');
      pending = [];
      pendingChars = 0;
      // A stream that fails while full never drains: its error ends the wait.
      if (!out.write(text))
        await Promise.race([new Promise<void>((resolve) => out.once('drain', () => resolve())), written]);
    };
    for await (const chunk of chunks) {
      pending.push(chunk);
      pendingChars += chunk.length;
      if (pendingChars >= 65_536) await flush();
    }
    if (pending.length) await flush();
    out.end();
  } catch (error) {
    out.destroy();
    await written.catch(() => undefined);
    throw error;
  }
  await written;
}

/** Moves `from` to `to`: a rename, or a copy and a removal where they are on different filesystems. */
export function moveFile(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    fs.copyFileSync(from, to);
    fs.rmSync(from, { force: true });
  }
}
