/**
 * What the simulated judge's own log says about a judging span (issue 29): how long the simulator itself held each
 * answer beyond its latency (its CPU on the event loop it shares with the bench), how many calls were open at once,
 * and how long a freed slot stood empty before the client's next call arrived. Splits a judging span's excess over its
 * bound between the simulator and the client under test.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { SimRequestLog } from '../sim/types';

export interface SimSpanFigures {
  calls: number;
  /** Answer written minus arrival minus latency (ms): the simulator's own delay, queueing on its event loop included. */
  overheadMs: { mean: number; p50: number; p95: number };
  /** Synchronous parse + answer time per call (ms): the simulator's CPU per call. */
  workMs: number;
  /** Time-weighted mean of open calls between the first arrival and the last answer. */
  meanInFlight: number;
  /** A slot's idle time: from one answer written to the next arrival it is matched with (ms, mean). */
  slotGapMs: number;
  /**
   * Those gaps' spread: a client's own time per call shows in the median, a pause between calls (an activity ending and
   * the next one's start, a busy event loop) in the gaps of 10 ms or more (how many, and their ms in all).
   */
  slotGaps: { p50: number; p90: number; p99: number; long: number; longMs: number };
  /** The span's excess over a perfect pipeline, split (s): simulator overhead per round, client gaps per round. */
  spanS: number;
}

/**
 * One call of a simulated endpoint as a bench's requests.json keeps it: [arrival ms, 1 if refused (429) else 0, when the
 * answer's last byte left (ms, null for a refusal or an answer not timed)]. Both ms since the epoch.
 */
export function requestLogEntry(r: SimRequestLog): [number, 0 | 1, number | null] {
  return [r.at, r.rateLimited ? 1 : 0, r.answeredAt ?? null];
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function simSpanFigures(requests: SimRequestLog[], latencyMs: number): SimSpanFigures | undefined {
  const timed = requests.filter((r) => r.answeredAt !== undefined);
  if (!timed.length) return undefined;
  const overheads = timed.map((r) => r.answeredAt! - r.at - latencyMs).sort((a, b) => a - b);
  const first = Math.min(...timed.map((r) => r.at));
  const last = Math.max(...timed.map((r) => r.answeredAt!));
  const open = timed.reduce((sum, r) => sum + (r.answeredAt! - r.at), 0);
  const ends = timed.map((r) => r.answeredAt!).sort((a, b) => a - b);
  const gaps: number[] = [];
  let from = 0;
  // Each arrival takes the earliest answer not yet taken that came before it: the slot it reuses.
  for (const start of timed.map((r) => r.at).sort((a, b) => a - b)) {
    if (from < ends.length && ends[from] <= start) gaps.push(start - ends[from++]);
  }
  return {
    calls: timed.length,
    overheadMs: { mean: mean(overheads), p50: quantile(overheads, 0.5), p95: quantile(overheads, 0.95) },
    workMs: mean(timed.map((r) => r.workMs ?? 0)),
    meanInFlight: open / Math.max(1, last - first),
    slotGapMs: mean(gaps),
    slotGaps: slotGapSpread(gaps),
    spanS: (last - first) / 1000,
  };
}

/** SimSpanFigures.slotGaps of a span's gaps (ms). */
function slotGapSpread(gaps: number[]): SimSpanFigures['slotGaps'] {
  const sorted = [...gaps].sort((a, b) => a - b);
  const long = sorted.filter((g) => g >= 10);
  return {
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    long: long.length,
    longMs: long.reduce((a, b) => a + b, 0),
  };
}

export function simSpanLine(name: string, f: SimSpanFigures | undefined, delay?: EventLoopDelayFigures): string {
  if (!f) return `${name}: the simulator timed no answers`;
  return `${name}, simulator's view: ${f.calls} calls over ${f.spanS.toFixed(1)} s; held beyond its latency ${f.overheadMs.mean.toFixed(1)} ms on average (p50 ${f.overheadMs.p50.toFixed(0)}, p95 ${f.overheadMs.p95.toFixed(0)}), ${f.workMs.toFixed(2)} ms of its own work per call; ${f.meanInFlight.toFixed(2)} calls open on average; a freed slot empty ${f.slotGapMs.toFixed(1)} ms before the next call (p50 ${f.slotGaps.p50.toFixed(0)}, p90 ${f.slotGaps.p90.toFixed(0)}, p99 ${f.slotGaps.p99.toFixed(0)}; ${f.slotGaps.long} gaps of 10 ms or more, ${(f.slotGaps.longMs / 1000).toFixed(1)} s in all)${delay ? `; the bench's event loop delayed ${delay.meanMs.toFixed(1)} ms on average (p99 ${delay.p99Ms.toFixed(0)}, max ${delay.maxMs.toFixed(0)})` : ''}`;
}

export interface EventLoopDelayFigures {
  meanMs: number;
  p99Ms: number;
  maxMs: number;
}

/** The delay of this process's event loop (where the simulator runs) from now until the returned function is called. */
export function watchEventLoop(): () => EventLoopDelayFigures {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return () => {
    h.disable();
    return { meanMs: h.mean / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6 };
  };
}
