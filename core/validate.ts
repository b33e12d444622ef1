import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import YAML from 'yaml';
import { z } from 'zod';

/** A user-facing input error: what, where, how to fix. The CLI prints it without a stack trace and exits 2. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

function pathText(p: ReadonlyArray<PropertyKey>): string {
  if (p.length === 0) return '(top level)';
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
}

/** One line per problem, each naming the file and the field. */
export function describeZodError(error: z.ZodError, where: string): string {
  return error.issues
    .map((issue) => {
      const field = pathText(issue.path);
      if (issue.code === 'unrecognized_keys') return `${where}: ${field}: unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${where}: ${field}: ${issue.message}`;
    })
    .join('\n');
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new InputError(describeZodError(result.error, where));
  return result.data;
}

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

/** Stable JSON (sorted keys) so equal content always hashes equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function contentHash(value: unknown, length = 12): string {
  return crypto.createHash('sha256').update(typeof value === 'string' ? value : canonicalJson(value)).digest('hex').slice(0, length);
}

/** `{{name}}` placeholders; an unknown placeholder is a rubric bug, so it fails loudly. */
export function renderTemplate(template: string, vars: Record<string, string>, where: string): string {
  return template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in vars)) throw new InputError(`${where}: unknown placeholder {{${name}}}; available: ${Object.keys(vars).join(', ')}`);
    return vars[name];
  });
}

/** A rendered prompt must show what the judge is there to grade; a template that drops it fails at load. */
export function requireShown(rendered: string, samples: Record<string, string>, where: string): void {
  for (const [placeholder, sample] of Object.entries(samples)) {
    if (!rendered.includes(sample)) throw new InputError(`${where}: the prompt must contain ${placeholder}`);
  }
}

/** A system + user prompt pair read from files, versioned by the hash of both texts (change a word, get a new version). */
export interface PromptPair {
  system: string;
  user: string;
  version: string;
}

export function loadPromptPair(dir: string, systemFile: string, userFile: string, what: string): PromptPair {
  const system = readText(path.join(dir, systemFile), what);
  const user = readText(path.join(dir, userFile), what);
  return { system, user, version: contentHash({ system, user }) };
}
