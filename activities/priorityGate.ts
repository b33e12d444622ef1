import { Context } from '@temporalio/activity';
import type { ResultsStore } from '../core/model/store';

/** Temporal's default priority key, which a run started without one has (client/runPriority.ts). */
const DEFAULT_PRIORITY_KEY = 3;
/** How often a worker notes a run in the store and asks again (concurrent calls of one run share one answer). */
export const NOTE_EVERY_MS = 250;
/** A run counts as making calls this long after its last one was noted (the gaps between one run's activities). */
export const ACTIVE_WITHIN_MS = 1_500;
/** The longest one call yields, so a run of a lower priority slows down beside a stream of others but never stops. */
export const MAX_YIELD_MS = 10_000;

type Noted = { at: number; top: number | null; asking: Promise<number> | null };
/** Per run, on this worker: when it was last noted, the last answer, and the question in flight (pruned as runs go quiet). */
const notes = new Map<string, Noted>();

/** A run's priority as its workflow holds it, per workflow id on this worker, asked again after this long. */
const PRIORITY_KNOWN_MS = 60_000;
const workflowPriorities = new Map<string, { at: number; key: number | null }>();

/**
 * The priority key of the current activity's run (1 first … 5 last), as the server holds it for the run's workflow.
 * Not the activity's own `info.priority` alone: an activity that inherits its workflow's priority (judgeflow's all do)
 * was seen to carry none when handed to the worker eagerly, which would count a CI gate's calls at the default. The
 * workflow is described once per run and worker a minute, in the background: no call waits for it (until it has
 * answered, and if it cannot, the activity's own priority counts).
 */
export function currentPriorityKey(now = Date.now()): number {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return DEFAULT_PRIORITY_KEY; // not inside an activity (a unit test calling the function itself)
  }
  const own = context.info.priority?.priorityKey || DEFAULT_PRIORITY_KEY;
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!workflowId) return own;
  const known = workflowPriorities.get(workflowId);
  if (!known || now - known.at >= PRIORITY_KNOWN_MS) {
    if (workflowPriorities.size > 1_000) workflowPriorities.clear();
    const entry = { at: now, key: known?.key ?? null };
    workflowPriorities.set(workflowId, entry);
    try {
      context.client.workflow
        .getHandle(workflowId)
        .describe()
        .then(
          (d) => void (entry.key = d.raw.workflowExecutionInfo?.priority?.priorityKey || own),
          () => undefined, // asked again after PRIORITY_KNOWN_MS; the activity's own counts till then
        );
    } catch {
      // no client in this context (a test's mock environment)
    }
  }
  return workflowPriorities.get(workflowId)?.key ?? own;
}

/**
 * Before a call: wait while a run of a higher priority is making calls on any worker sharing this results store.
 * Temporal's priority orders the tasks waiting in a queue, but a worker's slots rarely fill (activities are handed to
 * the worker eagerly), so a CI gate's calls would otherwise share the workers' CPU, the store and the server evenly
 * with a big sweep's. Each run notes itself in the store every NOTE_EVERY_MS (per worker) and reads the highest
 * priority noted in the last ACTIVE_WITHIN_MS; a run below it waits, heartbeating, at most MAX_YIELD_MS per call. Runs
 * at one priority never wait for each other. A store that cannot answer holds nothing back.
 */
export async function yieldToHigherPriority(
  store: Pick<ResultsStore, 'notePriority'>,
  runId: string,
  key?: number,
  clock: { now(): number; sleep(ms: number): Promise<void>; beat(): void } = activityClock,
): Promise<number> {
  const priorityKey = key ?? currentPriorityKey();
  const started = clock.now();
  for (;;) {
    const top = await noted(store, runId, priorityKey, clock.now(), clock.now() > started).catch(() => priorityKey);
    const waited = clock.now() - started;
    if (top >= priorityKey || waited >= MAX_YIELD_MS) return waited;
    clock.beat();
    await clock.sleep(Math.min(NOTE_EVERY_MS, MAX_YIELD_MS - waited));
  }
}

/**
 * The highest priority noted lately, as this worker last heard it. Only a run's first call on a worker waits for the
 * store: after that the answer it has is used, and one older than NOTE_EVERY_MS is asked again in the background, so
 * a call of the run at the top never waits for a round trip.
 */
async function noted(
  store: Pick<ResultsStore, 'notePriority'>,
  runId: string,
  key: number,
  at: number,
  fresh: boolean,
): Promise<number> {
  let entry = notes.get(runId);
  if (!entry) {
    if (notes.size > 1_000) for (const [id, n] of notes) if (at - n.at > ACTIVE_WITHIN_MS) notes.delete(id);
    entry = { at: -Infinity, top: null, asking: null };
    notes.set(runId, entry);
  }
  const e = entry;
  if (!e.asking && at - e.at >= NOTE_EVERY_MS) {
    e.at = at;
    e.asking = store.notePriority(runId, key, at, ACTIVE_WITHIN_MS).then(
      (top) => ((e.top = top), (e.asking = null), top),
      (error: unknown) => ((e.top = null), (e.asking = null), Promise.reject(error)),
    );
    e.asking.catch(() => undefined); // a refresh nobody waits for must not be an unhandled rejection
  }
  // A call already waiting waits for the fresh answer too: it was going to wait anyway.
  return (fresh || e.top === null) && e.asking ? e.asking : (e.top ?? key);
}

/** Forget what this worker noted (tests). */
export function forgetPriorityNotes(): void {
  notes.clear();
}

/** Inside an activity, its own cancellable sleep and heartbeat (a cancelled activity stops yielding at once). */
const activityClock = {
  now: () => Date.now(),
  sleep: (ms: number) => insideActivity()?.sleep(ms) ?? new Promise<void>((resolve) => setTimeout(resolve, ms)),
  beat: () => insideActivity()?.heartbeat(),
};

function insideActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // a unit test calling the gate outside an activity
  }
}
