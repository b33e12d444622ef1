import type { Priority } from '@temporalio/common';
import { InputError } from '../core/model/inputError';

/**
 * How a run shares task queues and workers with other runs (docs/scaling.md, "Many runs, one cluster"). Set on the
 * run's workflow start only: Temporal gives its activities and child workflows the same Priority, so workflow code
 * (and its replay histories) stays as it is.
 *
 * - priorityKey: Temporal's 1 (first) … 5 (last). A backlogged queue hands out every task of a lower key before any
 *   of a higher one. CI gates go at 1, big sweeps at 5; a run that names none gets 3, Temporal's own default.
 * - fairnessKey: the run id, so runs at one priority are dispatched in turn (weight 1 each) instead of first come,
 *   first served: a 72,000-item sweep cannot hold back a 200-item run started after it.
 */
export const PRIORITY_HIGHEST = 1;
export const PRIORITY_LOWEST = 5;
export const DEFAULT_PRIORITY = 3;

/** Temporal limits a fairness key to 64 bytes; run ids are ASCII and shorter, but a long custom one is cut, not refused. */
const FAIRNESS_KEY_BYTES = 64;

export function runPriority(runId: string, priority: number | undefined): Priority {
  return {
    priorityKey: priority ?? DEFAULT_PRIORITY,
    fairnessKey: Buffer.from(runId).subarray(0, FAIRNESS_KEY_BYTES).toString('utf8'),
  };
}

/** `--priority N` as given on the command line: an integer 1 … 5, or a clear error. */
export function parsePriorityFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value === 'string' && Number.isInteger(n) && n >= PRIORITY_HIGHEST && n <= PRIORITY_LOWEST) return n;
  throw new InputError(
    `--priority must be an integer from ${PRIORITY_HIGHEST} (first: CI gates) to ${PRIORITY_LOWEST} (last: big sweeps), got "${String(value)}"; without it the config's priority: (default ${DEFAULT_PRIORITY}) is used`,
  );
}
