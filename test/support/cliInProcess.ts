import { parseCommandArgs } from '../../client/args';
import { commands } from '../../client/cli';
import { InputError } from '../../core/validate';

/**
 * Run one CLI command object in this process (no process start-up cost) with extra environment, capturing output.
 * main() is skipped because it installs the Temporal runtime, which a test worker already did; the exit code
 * mapping is main()'s: 0 ok, 2 for an InputError (message on stderr). `env` is restored afterwards.
 */
export async function cliInProcess(argv: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const [name, ...rest] = argv;
    const command = commands.find((c) => c.name === name);
    if (!command) throw new Error(`no command ${name}`);
    const code = await command.run(parseCommandArgs(command, rest) as never).catch((e: unknown) => {
      if (!(e instanceof InputError)) throw e;
      err.push(`judgeflow ${name}: ${e.message}`);
      return 2;
    });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
