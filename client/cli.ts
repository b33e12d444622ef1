import { DefaultLogger, Runtime } from '@temporalio/worker';
import { parseCommandArgs, type Command } from './args';
import { InputError } from '../core/validate';
import { runCommand } from './commands/run';
import { statusCommand } from './commands/status';
import { reportCommand } from './commands/report';
import { devCommand, runSimCli, serverCommand, simCommand, workerCommand } from './commands/services';
import { demoCommand } from './commands/demo';
import { browserLoginCommand } from './commands/browserLogin';
import { benchCommand } from './commands/bench';
import { rejudgeCommand } from './commands/rejudge';
import { compareCommand } from './commands/compare';
import { runsCommand } from './commands/runs';
import { rubricCommand } from './commands/rubric';
import { snapshotCommand } from './commands/snapshot';
import { scheduleCommand } from './commands/schedule';
import { cancelCommand } from './commands/cancel';
import { studyCommand } from './commands/study';
import { viewCommand } from './commands/view';
import { Interrupted, interruptedMessage } from './runWorkflow';
import { datasetCommand } from './commands/dataset';

export const commands: Command[] = [runCommand, statusCommand, cancelCommand, reportCommand, workerCommand, devCommand, serverCommand, simCommand, demoCommand, rejudgeCommand, compareCommand, runsCommand, rubricCommand, browserLoginCommand, benchCommand, snapshotCommand, scheduleCommand, datasetCommand, studyCommand, viewCommand];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'judgeflow — benchmark crypto AI copilots with LLM judges; every run is a durable Temporal workflow.',
    '',
    'Usage: judgeflow <command> [options]   (judgeflow <command> --help for details)',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_CERT/KEY, JUDGEFLOW_HOME (default ./.judgeflow), JUDGEFLOW_TASK_QUEUE.',
  ].join('\n');
}

/** Worker chatter (bundling, state changes) stays out of the user's way unless asked for. */
function installQuietRuntime(): void {
  const level = (process.env.JUDGEFLOW_LOG_LEVEL ?? 'WARN').toUpperCase() as 'WARN';
  try {
    Runtime.install({ logger: new DefaultLogger(level) });
  } catch {
    // Already installed (by a worker or an earlier main() in this process, e.g. in a test): keep the existing runtime.
  }
}

/** Entry point; returns the exit code (0 ok, 1 run failed, 2 bad input, 130/143 interrupted by SIGINT/SIGTERM). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  installQuietRuntime();
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  try {
    if (!command) throw new InputError(`unknown command "${name}"\n\n${help()}`);
    if (command === simCommand) return await runSimCli(rest);
    const args = parseCommandArgs(command, rest);
    if (args.values.help) {
      console.log(`${command.summary}\n\nUsage: ${command.usage}`);
      return 0;
    }
    return await command.run(args as never);
  } catch (error) {
    if (error instanceof Interrupted) {
      console.error(interruptedMessage(error));
      return error.signal === 'SIGTERM' ? 143 : 130;
    }
    if (error instanceof InputError) {
      console.error(`judgeflow ${name}: ${error.message}`);
      return 2;
    }
    const e = error as Error & { cause?: Error };
    console.error(`judgeflow ${name} failed: ${e.cause?.message ? `${e.message}: ${e.cause.message}` : e.message}`);
    if (process.env.JUDGEFLOW_DEBUG) console.error(e.stack);
    return 1;
  }
}
