import type { Command } from '../args';
import { InputError } from '../../core/model/inputError';
import { HELD_FRESH_MS, pauseUpdate } from '../../contract/control';
// The validator's words are the innermost cause of the SDK's WorkflowUpdateFailedError.
import { rootCause } from '../../contract/errors';
import { withClient } from '../runWorkflow';
import { describeRun } from './status';
import { ensureLocalServer } from '../temporalServer';

/**
 * Pause a running run (a Temporal Update, validated by the run): within seconds no new copilot or judge call starts;
 * calls in flight finish and are kept. The paused run waits — across worker and server restarts, for as long as it
 * takes — until `judgeflow resume RUN_ID`.
 */
export const pauseCommand: Command = {
  name: 'pause',
  summary:
    'pause a running run: no new copilot or judge call starts until judgeflow resume RUN_ID (calls in flight finish)',
  usage: 'judgeflow pause RUN_ID [--reason TEXT] [--json]',
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  async run({ positionals, values }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    await ensureLocalServer({ log: console.error });
    return withClient(async (client) => {
      const handle = client.workflow.getHandle(runId);
      const description = await describeRun(handle, runId);
      if (description.status.name !== 'RUNNING')
        throw new InputError(
          `run ${runId} is ${description.status.name.toLowerCase()}; only a running run can be paused`,
        );
      const reason = typeof values.reason === 'string' && values.reason ? values.reason : 'paused by judgeflow pause';
      const control = await handle.executeUpdate(pauseUpdate, { args: [{ reason }] }).catch((error: Error) => {
        // The run's validator refused (already paused, nothing left to pause): the user's to know, not a crash.
        throw new InputError(`run ${runId} was not paused: ${rootCause(error)}`);
      });
      // A batch of items may rely on a `held` answer asked up to HELD_FRESH_MS before the pause: said paused once
      // that has passed, so from the moment this prints no new call starts.
      await new Promise((resolve) => setTimeout(resolve, HELD_FRESH_MS));
      if (values.json) console.log(JSON.stringify({ runId, paused: control.paused }));
      else
        console.log(
          `Run ${runId} is paused (${control.paused!.reason}); calls in flight finish. Continue it with: judgeflow resume ${runId}`,
        );
      return 0;
    });
  },
};
