import type { IntervalMethod, MeanInterval } from './interval';

/**
 * Intervals a report's code will ask meanCI for, computed before it asks: a report rendered on the report thread
 * (worker/reportThread.ts) has them computed on two threads (worker/intervalHelper.ts) while it reads the rest of the
 * store, instead of one after another inside the protocol's buildReport. The BCa bootstraps are most of a report's own
 * work: 70 million draws, about 170 ms of a 0.6 s report of 1,200 × 4 LATTICE answers (issue 29, docs/bench.md).
 *
 * Pure JavaScript (no node: imports), like stats.ts, which asks `activeIntervalsAhead()` first. An interval known ahead is
 * the one meanCI would compute from the same values, seed and options (meanCI is deterministic); one asked for with
 * anything different is computed as usual, so an incomplete or stale list costs time, never a wrong figure.
 */

/** One meanCI call: its values, seed and options after meanCI's defaults. */
export interface IntervalRequest {
  values: number[];
  seed: string;
  iterations: number;
  level: number;
  method?: IntervalMethod | 'auto';
}

/** What meanCI asks before it computes: the interval, or undefined to compute it. */
export interface IntervalsAhead {
  known(request: IntervalRequest): MeanInterval | null | undefined;
}

/** A report's requests being computed elsewhere (worker/intervalHelper.ts): `finish()` completes them all. */
export interface PendingIntervals {
  finish(): IntervalsAhead;
  /** The report stopped before finish(): no more of its requests are computed. */
  cancel(): void;
}

let active: IntervalsAhead | undefined;

/** The intervals meanCI consults now (set only inside withIntervalsAhead). */
export function activeIntervalsAhead(): IntervalsAhead | undefined {
  return active;
}

/** Runs `fn` (synchronous: nothing else runs meanCI meanwhile) with meanCI consulting `ahead` first. */
export function withIntervalsAhead<T>(ahead: IntervalsAhead, fn: () => T): T {
  const previous = active;
  active = ahead;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/** The meanCI calls `fn` makes, recorded and answered null without computing anything (a protocol's reportIntervals). */
export function intervalRequestsOf(fn: () => void): IntervalRequest[] {
  const requests: IntervalRequest[] = [];
  withIntervalsAhead(
    {
      known: (request) => {
        requests.push({ ...request, values: request.values.slice() });
        return null;
      },
    },
    fn,
  );
  return requests;
}

function sameRequest(a: IntervalRequest, b: IntervalRequest): boolean {
  if (
    a.seed !== b.seed ||
    a.iterations !== b.iterations ||
    a.level !== b.level ||
    (a.method ?? 'auto') !== (b.method ?? 'auto') ||
    a.values.length !== b.values.length
  )
    return false;
  for (let i = 0; i < a.values.length; i++) if (!Object.is(a.values[i], b.values[i])) return false;
  return true;
}

/** Intervals computed ahead, found by seed and used only for a request equal to the one they were computed for. */
export function precomputedIntervals(computed: Array<[IntervalRequest, MeanInterval | null]>): IntervalsAhead {
  const bySeed = new Map<string, Array<[IntervalRequest, MeanInterval | null]>>();
  for (const entry of computed) bySeed.set(entry[0].seed, [...(bySeed.get(entry[0].seed) ?? []), entry]);
  return {
    known(request) {
      const hit = bySeed.get(request.seed)?.find(([asked]) => sameRequest(asked, request));
      return hit === undefined ? undefined : hit[1] && { ...hit[1] };
    },
  };
}
