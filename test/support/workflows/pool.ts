import { sleep } from '@temporalio/workflow';
import { runPool } from '../../../workflows/pool';

/** runPool with a task that fails fast (before the rate interval has passed): the pool must reject, not wedge the workflow. */
export async function poolWithFastFailure(minIntervalMs: number): Promise<string> {
  try {
    await runPool([1, 2], 1, minIntervalMs, async (item) => {
      await sleep(10);
      throw new Error(`task ${item} failed fast`); // a plain Error: unobserved, it fails the workflow task (a TemporalFailure is ignored)
    });
    return 'resolved';
  } catch (error) {
    return `rejected: ${(error as Error).message}`;
  }
}
