import { consensusVerdicts } from '../activities/deps';
import { failureReasons, type FailureReason } from '../core/failureReasons';
import { openExistingStore } from '../stores';

/** The top failure reasons of a run, from the results store (none when the store or the run is not there). */
export async function runFailureReasons(runId: string, env: NodeJS.ProcessEnv = process.env): Promise<FailureReason[]> {
  const store = await openExistingStore(env);
  const run = await store?.getRun(runId);
  if (!store || !run) return [];
  return failureReasons(await store.responses(runId), await consensusVerdicts(store, run));
}
