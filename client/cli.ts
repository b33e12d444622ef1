import { parseCommandArgs, type Command } from './args';
import { InputError } from '../core/model/inputError';
import { Interrupted, interruptedMessage } from './interrupted';

type Commands = typeof import('./commands/services');

/**
 * Every command, by name, in help order. A command's module (and whatever it needs: Temporal, the store, the SDKs)
 * is loaded only when that command runs, so `judgeflow status --help` does not load a worker or an Excel writer.
 */
const commandLoaders: Array<[name: string, load: () => Command]> = [
  ['run', () => (require('./commands/run') as typeof import('./commands/run')).runCommand],
  ['status', () => (require('./commands/status') as typeof import('./commands/status')).statusCommand],
  ['cancel', () => (require('./commands/cancel') as typeof import('./commands/cancel')).cancelCommand],
  ['pause', () => (require('./commands/pause') as typeof import('./commands/pause')).pauseCommand],
  ['resume', () => (require('./commands/resume') as typeof import('./commands/resume')).resumeCommand],
  ['tune', () => (require('./commands/tune') as typeof import('./commands/tune')).tuneCommand],
  ['report', () => (require('./commands/report') as typeof import('./commands/report')).reportCommand],
  ['export', () => (require('./commands/export') as typeof import('./commands/export')).exportCommand],
  ['import', () => (require('./commands/import') as typeof import('./commands/import')).importCommand],
  ['artefacts', () => (require('./commands/artefacts') as typeof import('./commands/artefacts')).artefactsCommand],
  ['world', () => (require('./commands/world') as typeof import('./commands/world')).worldCommand],
  ['worker', () => (require('./commands/services') as Commands).workerCommand],
  ['dev', () => (require('./commands/services') as Commands).devCommand],
  ['server', () => (require('./commands/services') as Commands).serverCommand],
  ['sim', () => (require('./commands/services') as Commands).simCommand],
  ['demo', () => (require('./commands/demo') as typeof import('./commands/demo')).demoCommand],
  ['retry', () => (require('./commands/retry') as typeof import('./commands/retry')).retryCommand],
  ['rejudge', () => (require('./commands/rejudge') as typeof import('./commands/rejudge')).rejudgeCommand],
  ['compare', () => (require('./commands/compare') as typeof import('./commands/compare')).compareCommand],
  ['gate', () => (require('./commands/gate') as typeof import('./commands/gate')).gateCommand],
  ['trend', () => (require('./commands/trend') as typeof import('./commands/trend')).trendCommand],
  ['stability', () => (require('./commands/stability') as typeof import('./commands/stability')).stabilityCommand],
  ['runs', () => (require('./commands/runs') as typeof import('./commands/runs')).runsCommand],
  ['rubric', () => (require('./commands/rubric') as typeof import('./commands/rubric')).rubricCommand],
  [
    'browser-login',
    () => (require('./commands/browserLogin') as typeof import('./commands/browserLogin')).browserLoginCommand,
  ],
  ['bench', () => (require('./commands/bench') as typeof import('./commands/bench')).benchCommand],
  ['snapshot', () => (require('./commands/snapshot') as typeof import('./commands/snapshot')).snapshotCommand],
  ['schedule', () => (require('./commands/schedule') as typeof import('./commands/schedule')).scheduleCommand],
  ['dataset', () => (require('./commands/dataset') as typeof import('./commands/dataset')).datasetCommand],
  ['study', () => (require('./commands/study') as typeof import('./commands/study')).studyCommand],
  ['view', () => (require('./commands/view') as typeof import('./commands/view')).viewCommand],
  ['store', () => (require('./commands/store') as typeof import('./commands/store')).storeCommand],
  ['doctor', () => (require('./commands/doctor') as typeof import('./commands/doctor')).doctorCommand],
  ['providers', () => (require('./commands/providers') as typeof import('./commands/providers')).providersCommand],
];

/** The command named `name`, its module loaded now; undefined for an unknown name. */
export function loadCommand(name: string): Command | undefined {
  return commandLoaders.find(([n]) => n === name)?.[1]();
}

/** The overview lists every command's summary, so it is the one place that loads them all. */
function help(): string {
  const commands = commandLoaders.map(([, load]) => load());
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'judgeflow — benchmark crypto AI copilots with LLM judges; every run is a durable Temporal workflow.',
    '',
    'Usage: judgeflow <command> [options]   (judgeflow <command> --help for details)',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_CERT/KEY, JUDGEFLOW_HOME (default ./.judgeflow), JUDGEFLOW_STORE (sqlite:PATH or postgres://…), JUDGEFLOW_TASK_QUEUE.',
  ].join('\n');
}

/** Entry point; returns the exit code (0 ok, 1 run failed, 2 bad input, 130/143 interrupted by SIGINT/SIGTERM). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name ? 0 : 2;
  }
  try {
    const command = loadCommand(name);
    if (!command) throw new InputError(`unknown command "${name}"\n\n${help()}`);
    if (name === 'sim') return await (require('./commands/services') as Commands).runSimCli(rest);
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
