import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../core/model/inputError';

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options?: ParseArgsConfig['options'];
  run(args: {
    values: Record<string, string | boolean | string[] | undefined>;
    positionals: string[];
  }): Promise<number>;
}

/** Parse a command's arguments strictly; unknown flags are input errors that name the flag and point at --help. */
export function parseCommandArgs(command: Command, argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new InputError(`${(error as Error).message}\nUsage: ${command.usage}\nSee: judgeflow ${command.name} --help`);
  }
}

/** An option's text, or undefined when it is absent or empty. */
export const optionalString = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A flag's positive number (whole when `whole`), or undefined when absent; anything else is an input error naming the flag. */
export function optionalPositive(values: Record<string, unknown>, flag: string, whole: boolean): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n)))
    throw new InputError(`--${flag} must be a positive ${whole ? 'whole ' : ''}number, got "${String(raw)}"`);
  return n;
}

export function requireString(values: Record<string, unknown>, name: string, usage: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new InputError(`missing --${name}\nUsage: ${usage}`);
  return v;
}
