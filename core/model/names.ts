import { z } from 'zod';
import { InputError } from './inputError';

/**
 * Names chosen by users that end up in Temporal workflow ids (copilots, schedules), file names (artefacts,
 * exports), CSV column names and report keys. Bounded so every derived workflow id stays far below Temporal's
 * id limit (1,000 bytes), and restricted to characters that are safe in file names on every OS.
 */
export const NAME_MAX_CHARS = 64;

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// Device names Windows refuses as file names whatever the extension.
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** Why `name` is not a usable name, or null. `what` says what it names (e.g. "copilot name"). */
export function nameProblem(name: string, what: string): string | null {
  if (!name) return `${what} is empty`;
  if (name.length > NAME_MAX_CHARS)
    return `${what} "${name.slice(0, 24)}…" is ${name.length} characters; use at most ${NAME_MAX_CHARS} (it becomes part of workflow ids and file names)`;
  if (!NAME_PATTERN.test(name))
    return `${what} "${name}": use letters, digits, "_", "." or "-", starting with a letter or digit (it becomes part of workflow ids, file names and CSV columns)`;
  if (name.endsWith('.')) return `${what} "${name}" must not end with "." (not a valid file name everywhere)`;
  if (RESERVED.test(name)) return `${what} "${name}" is a reserved device name on Windows; pick another`;
  return null;
}

export function nameSchema(what: string) {
  return z.string().superRefine((name, ctx) => {
    const problem = nameProblem(name, what);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

export function assertName(name: string | undefined, what: string, usage?: string): string {
  const problem = nameProblem(name ?? '', what);
  if (problem) throw new InputError(usage ? `${problem}\nUsage: ${usage}` : problem);
  return name!;
}

/** Indexes of names equal to an earlier one ignoring case (`Alpha` and `alpha` would collide as file names and report keys). */
export function caseInsensitiveDuplicates(names: string[]): Array<{ index: number; first: number }> {
  const seen = new Map<string, number>();
  const out: Array<{ index: number; first: number }> = [];
  names.forEach((name, index) => {
    const key = name.toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else out.push({ index, first });
  });
  return out;
}
