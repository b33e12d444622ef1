import { sleep } from '@temporalio/workflow';

/**
 * Run `task` over `items` with at most `concurrency` in flight, starting at most one every `minIntervalMs`.
 * Deterministic: it uses only workflow timers and promises, so it replays exactly. (Snapshot generation and curation
 * fan out with it; a benchmark run's endpoints have their own lanes, see workflows/endpointLane.ts.)
 */
export async function runPool<T>(
  items: T[],
  concurrency: number,
  minIntervalMs: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let gate: Promise<void> = Promise.resolve();
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (minIntervalMs > 0) {
        // Serialise starts through one gate so the rate holds across lanes.
        const turn = gate;
        let release!: () => void;
        gate = new Promise((resolve) => (release = resolve));
        await turn;
        const started = task(item);
        // Observe the task now: if it rejects while this lane sleeps (a fast-failing activity, or a cancelled run),
        // an unobserved rejection would fail every workflow task for ever. `await started` below still rethrows it.
        started.catch(() => undefined);
        try {
          // Nothing left to start: waiting out the interval would only delay the end (a minute at 1 rpm).
          if (next < items.length) await sleep(minIntervalMs);
        } finally {
          release(); // a cancelled sleep must not leave the other lanes waiting at the gate
        }
        await started;
      } else await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}
