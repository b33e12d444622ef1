import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { z } from 'zod';
import { InputError, parseWith } from './inputError';

/** A text file's contents without a leading UTF-8 byte-order mark (editors on Windows add one; it is not content). */
export function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(`${what} ${file} cannot be read (${code ?? String(error)})`);
  }
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
    throw new InputError(`${what}: directory ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
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
