import { consensusVerdicts } from '../activities/deps';
import { failureReasonLines, failureReasons, type FailureReason } from '../core/stats/failureReasons';
import { openExistingStore } from '../stores';

/** The top failure reasons of a run, from the results store (none when the store or the run is not there). */
export async function runFailureReasons(runId: string, env: NodeJS.ProcessEnv = process.env): Promise<FailureReason[]> {
  const store = await openExistingStore(env);
  const run = await store?.getRun(runId);
  if (!store || !run) return [];
  return failureReasons(await store.responses(runId), await consensusVerdicts(store, run));
}

/**
 * After a run completes (run, resume, retry, rejudge): how many items failed and the top reasons why, in the
 * endpoints' words — not only a count — and how to ask them again.
 */
export async function printFailures(runId: string, failures: number, print: (line: string) => void): Promise<void> {
  if (!failures) return;
  print(
    `Note: ${failures} item(s) failed to collect or judge; the report counts them as missing data (see results.csv and responses.jsonl). Why:`,
  );
  for (const line of failureReasonLines(await runFailureReasons(runId))) print(line);
  print(`Ask them again, once the cause is fixed: judgeflow retry ${runId} --failed`);
}
