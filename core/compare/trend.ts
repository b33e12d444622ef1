/**
 * A copilot's line over runs (a schedule's, or any list): each run's score and interval per copilot, and the paired
 * comparison with the run before it (core/compare/compare.ts; on the queries both runs share when their snapshots differ —
 * the overlap is part of the answer). Pure; fed from the store by services/storedComparison.ts.
 */
import { compareRuns, type CompareOptions, type CompareRun, type QueryPairing } from './compare';
import { gate } from './gate';
import { responseScoreOf, type ProtocolReading } from './compare';
import { mean, meanCI } from '../stats/stats';
import type { Query } from '../model/types';

export interface TrendInterval {
  low: number;
  high: number;
}

export interface TrendRunInput extends CompareRun {
  startedAt: string;
  status: string;
  queries: Query[];
}

export interface TrendVsPrevious {
  runId: string;
  /** Queries the two runs share (all of them on one snapshot; id + text across two). */
  overlap: QueryPairing;
  copilots: Record<
    string,
    {
      n: number;
      delta: number | null;
      ci95: TrendInterval | null;
      p: number | null;
      pHolm: number | null;
      significant: boolean;
    }
  >;
  /** Copilots significantly lower than in the previous run (the gate's verdict, max drop 0). */
  regressions: string[];
  improvements: string[];
}

export interface TrendRun {
  runId: string;
  startedAt: string;
  status: string;
  snapshotId: string;
  /** Mean per-response score (the protocol's headline: LATTICE's total, CryptoAnalystBench's mean of four dimensions) over the run's ok judgments, with its 95% interval. */
  copilots: Record<string, { score: number | null; ci95: TrendInterval | null; n: number }>;
  vsPrevious: TrendVsPrevious | null;
}

export interface Trend {
  runs: TrendRun[];
}

const interval = (x: { low: number; high: number } | null): TrendInterval | null =>
  x ? { low: x.low, high: x.high } : null;

export function trend(runs: TrendRunInput[], protocol: ProtocolReading, options: CompareOptions = {}): Trend {
  const ordered = [...runs].sort((a, b) =>
    a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.runId < b.runId ? -1 : 1,
  );
  return {
    runs: ordered.map((run, i) => {
      const copilots = Object.fromEntries(
        run.copilots.map((c) => {
          const score = responseScoreOf(protocol);
          const totals = run.judgments
            .filter((j) => j.copilot === c && j.status === 'ok' && score(j) !== null)
            .map((j) => score(j)!);
          return [
            c,
            {
              score: totals.length ? mean(totals) : null,
              ci95: interval(totals.length > 1 ? meanCI(totals, { seed: `trend:${run.runId}:${c}` }) : null),
              n: totals.length,
            },
          ];
        }),
      );
      let vsPrevious: TrendVsPrevious | null = null;
      if (i > 0) {
        const prev = ordered[i - 1];
        const comparison = compareRuns(
          prev,
          run,
          prev.snapshotId === run.snapshotId ? run.queries : { a: prev.queries, b: run.queries },
          protocol,
          { ...options, top: 0 },
        );
        const verdict = gate(comparison);
        vsPrevious = {
          runId: prev.runId,
          overlap: comparison.pairing,
          copilots: Object.fromEntries(
            Object.entries(comparison.copilots).map(([c, x]) => [
              c,
              {
                n: x.overall.n,
                delta: x.overall.delta,
                ci95: interval(x.overall.ci95),
                p: x.overall.pValue,
                pHolm: x.overall.pAdjusted,
                significant: x.overall.significant,
              },
            ]),
          ),
          regressions: verdict.regressions.map((r) => r.copilot),
          improvements: verdict.improvements.map((r) => r.copilot),
        };
      }
      return {
        runId: run.runId,
        startedAt: run.startedAt,
        status: run.status,
        snapshotId: run.snapshotId,
        copilots,
        vsPrevious,
      };
    }),
  };
}
