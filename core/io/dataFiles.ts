import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { z } from 'zod';
import { InputError, parseWith } from '../model/inputError';

/**
 * A text file's contents without a leading UTF-8 byte-order mark (editors on Windows add one; it is not content).
 * Bytes that are not UTF-8 (a file saved as Latin-1 or Windows-1252) are refused, naming the line, rather than read as
 * U+FFFD and sent to every copilot and judge.
 */
export function readText(file: string, what: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT'
        ? `${what} ${file} cannot be read: the file is missing (ENOENT); check the path (in a config, relative paths are relative to the config file)`
        : `${what} ${file} cannot be read (${code ?? String(error)})`,
    );
  }
  try {
    return strictUtf8.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    const { line, column, byte } = firstInvalidUtf8(bytes);
    throw new InputError(
      `${file}:${line}: ${what} is not valid UTF-8 (byte 0x${byte.toString(16).padStart(2, '0')} at column ${column} of line ${line}); save the file as UTF-8 (e.g. iconv -f WINDOWS-1252 -t UTF-8)`,
    );
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Where the first byte that is not UTF-8 is: 1-based line and byte column. */
function firstInvalidUtf8(bytes: Buffer): { line: number; column: number; byte: number } {
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    const end = bytes.indexOf(0x0a, start);
    const slice = bytes.subarray(start, end === -1 ? bytes.length : end);
    try {
      strictUtf8.decode(slice);
    } catch {
      // Streaming, an incomplete sequence at the end is held back, not an error: the first prefix that throws ends at the bad byte.
      for (let n = 1; n <= slice.length; n++)
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(slice.subarray(0, n), { stream: true });
        } catch {
          // A byte that cannot continue an open sequence (é in Windows-1252 before a '"'): the bad byte is that sequence's lead.
          let lead = n - 2;
          while (lead >= 0 && slice[lead] >= 0x80 && slice[lead] < 0xc0) lead--;
          const at = (slice[n - 1] < 0x80 || slice[n - 1] >= 0xc0) && lead >= 0 && slice[lead] >= 0xc0 ? lead : n - 1;
          return { line, column: at + 1, byte: slice[at] };
        }
      return { line, column: slice.length, byte: slice[slice.length - 1] }; // a sequence cut off by the end of the line
    }
    if (end === -1) break;
    start = end + 1;
  }
  return { line: 1, column: 1, byte: bytes[0] ?? 0 };
}

const isInside = (root: string, target: string) => {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * Read `relative` (e.g. a rubric's prompt file) only if it lies inside `dir`, after resolving `..` and symlinks:
 * a rubric must not be able to send any other file on the machine to a judge.
 */
export function readTextInside(dir: string, relative: string, what: string): string {
  let root: string;
  try {
    root = fs.realpathSync(dir);
  } catch (error) {
    throw new InputError(
      `${what}: directory ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const target = path.resolve(root, relative);
  const outside = `${what} "${relative}" points outside the directory ${dir}; keep the file inside it and name it by a relative path`;
  if (!isInside(root, target)) throw new InputError(outside);
  let real: string | undefined;
  try {
    real = fs.realpathSync(target);
  } catch {
    // Missing: readText reports it.
  }
  if (real && !isInside(root, real)) throw new InputError(`${outside} (it is a symbolic link to ${real})`);
  return readText(target, what);
}

/** YAML or JSON (JSON is valid YAML) file → validated value. */

/** YAML or JSON (JSON is valid YAML) file → validated value. */
export function loadDataFile<S extends z.ZodType>(schema: S, file: string, what: string): z.infer<S> {
  const text = readText(file, what);
  let value: unknown;
  try {
    value = YAML.parse(text);
  } catch (error) {
    throw new InputError(`${file}: not valid YAML/JSON: ${(error as Error).message}`);
  }
  return parseWith(schema, value, file);
}
