import type { z } from 'zod';

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
      if (issue.code === 'unrecognized_keys')
        return `${where}: ${field}: unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${where}: ${field}: ${issue.message}`;
    })
    .join('\n');
}

/** Validate with zod; a bad value is an InputError naming `where` and each field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new InputError(describeZodError(result.error, where));
  return result.data;
}
