import type { Command } from '../args';
import { optionalPositive, optionalString } from '../args';
import { InputError } from '../../core/model/inputError';
import { describeLimitChange } from '../../contract/configChange';
import { tuneUpdate } from '../../contract/control';
import type { TuneTarget } from '../../contract/run';
// The validator's words are the innermost cause of the SDK's WorkflowUpdateFailedError.
import { rootCause } from '../../contract/errors';
import { withClient } from '../runWorkflow';
import { describeRun } from './status';
import { ensureLocalServer } from '../temporalServer';

const USAGE = `judgeflow tune RUN_ID [--judge-concurrency N] [--judge NAME] [--copilot NAME] [--concurrency N] [--requests-per-minute N] [--tokens-per-minute N] [--reason TEXT] [--json]

  --judge-concurrency N     the judge's concurrency (a panel: the member --judge NAME names)
  --copilot NAME            the copilot that --concurrency, --requests-per-minute and --tokens-per-minute change
  --judge NAME              a panel's member; without --copilot, those three change this judge
  --concurrency N           most calls in flight (a lower one lets calls in flight finish and starts none beyond it)
  --requests-per-minute N   hard cap on requests a minute, across every worker
  --tokens-per-minute N     hard cap on reported tokens a minute, across every worker
  --reason TEXT             recorded with the change (status --json, report.json and report.md)

Every value is a positive whole number. The change applies at once, holds for the rest of the run (across
continue-as-new and worker restarts) and is recorded; see docs/cost-and-control.md.`;

/**
 * Change a running run's limits (a Temporal Update, validated by the run): an endpoint's concurrency and rate caps,
 * applied to its limiter at once and kept for the rest of the run, each change recorded with the old and new value.
 */
export const tuneCommand: Command = {
  name: 'tune',
  summary: "change a running run's limits (a copilot's or the judge's concurrency and rate caps), at once and recorded",
  usage: USAGE,
  options: {
    'judge-concurrency': { type: 'string' },
    judge: { type: 'string' },
    copilot: { type: 'string' },
    concurrency: { type: 'string' },
    'requests-per-minute': { type: 'string' },
    'tokens-per-minute': { type: 'string' },
    reason: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ positionals, values }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${USAGE}`);
    const endpoints = tuneTargets(values);
    await ensureLocalServer({ log: console.error });
    return withClient(async (client) => {
      const handle = client.workflow.getHandle(runId);
      const description = await describeRun(handle, runId);
      if (description.status.name !== 'RUNNING')
        throw new InputError(
          `run ${runId} is ${description.status.name.toLowerCase()}; only a running run can be tuned`,
        );
      const reason = optionalString(values.reason);
      const control = await handle
        .executeUpdate(tuneUpdate, { args: [{ endpoints, ...(reason ? { reason } : {}) }] })
        .catch((error: Error) => {
          throw new InputError(`run ${runId} was not tuned: ${rootCause(error)}`);
        });
      const step = control.history[control.history.length - 1];
      if (values.json) console.log(JSON.stringify({ runId, limits: step.limits, at: step.at }));
      else console.log(`Run ${runId} tuned: ${(step.limits ?? []).map(describeLimitChange).join('; ')}.`);
      return 0;
    });
  },
};

/** The flags as the Update's targets: --judge-concurrency for the judge, the other limits for --copilot (or --judge). */
function tuneTargets(values: Record<string, unknown>): TuneTarget[] {
  const number = (flag: string) => optionalPositive(values, flag, true);
  const judge = optionalString(values.judge);
  const copilot = optionalString(values.copilot);
  const limits = {
    concurrency: number('concurrency'),
    requestsPerMinute: number('requests-per-minute'),
    tokensPerMinute: number('tokens-per-minute'),
  };
  const given = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  const judgeConcurrency = number('judge-concurrency');
  const targets: TuneTarget[] = [];
  if (Object.keys(given).length) {
    if (!copilot && !judge)
      throw new InputError(
        `say which endpoint --concurrency, --requests-per-minute and --tokens-per-minute change: --copilot NAME or --judge NAME\nUsage: ${USAGE}`,
      );
    targets.push(copilot ? { copilot, ...given } : { judge, ...given });
  } else if (copilot)
    throw new InputError(
      `--copilot ${copilot}: give --concurrency, --requests-per-minute or --tokens-per-minute to change\nUsage: ${USAGE}`,
    );
  if (judgeConcurrency !== undefined) {
    const same = targets.find((t) => t.judge !== undefined || (!copilot && judge === undefined));
    if (same && same.concurrency !== undefined)
      throw new InputError("give the judge's concurrency once: --judge-concurrency or --concurrency with --judge");
    if (same) same.concurrency = judgeConcurrency;
    else targets.push({ ...(judge ? { judge } : {}), concurrency: judgeConcurrency });
  }
  if (!targets.length)
    throw new InputError(
      `nothing to change: give --judge-concurrency N, or --copilot NAME with --concurrency N, --requests-per-minute N or --tokens-per-minute N\nUsage: ${USAGE}`,
    );
  return targets;
}
