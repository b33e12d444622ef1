import os from 'node:os';
import { seededRandom } from '../../core/stats/random';
import { groupNearDuplicates } from '../../core/snapshots/text';
import { buildPresentationDesign } from '../../rubrics/cab/presentation';
import { printStatisticsFigures } from '../../rubrics/cab/statisticsSimulation';
import { printStudyStatisticsFigures } from '../../core/stats/statsSimulation';
import type { Command } from '../args';
import { measureRun, type RunFigures, type RunScenario } from '../benchRuns';
import { benchLatticeFiles } from '../benchLattice';
import { printStartupFigures } from '../startupFigures';

/** The run scenarios of issue 13: latency-bound (the measured 1.83× case) and paper scale against rate-limited endpoints. */
const SCENARIOS: RunScenario[] = [
  { name: 'latency-bound', queries: 80, copilots: 6, latencyMs: 400, copilotConcurrency: 4, judgeConcurrency: 8 },
  // Each copilot endpoint allows 6 requests a second and the judge 40; unthrottled, the concurrencies would send 20 and 80.
  {
    name: 'paper-scale, rate-limited',
    queries: 1200,
    copilots: 6,
    latencyMs: 200,
    copilotConcurrency: 4,
    judgeConcurrency: 16,
    copilotPerSecond: 6,
    judgePerSecond: 40,
  },
  // The same run with the results in PostgreSQL and two workers, each in its own directory and home (two "machines").
  {
    name: 'paper-scale, rate-limited, PostgreSQL, 2 workers',
    queries: 1200,
    copilots: 6,
    latencyMs: 200,
    copilotConcurrency: 4,
    judgeConcurrency: 16,
    copilotPerSecond: 6,
    judgePerSecond: 40,
    store: 'postgres',
    workers: 2,
  },
];

/**
 * The CryptoAnalystBench judging phase as a re-judge has it (issue 19): 198 queries × 4 held answers, one shared
 * conversation per query with a 400 ms judge, at judge concurrency 3 and 8.
 */
const CAB_JUDGING: RunScenario[] = [3, 8].map((judgeConcurrency) => ({
  name: `cab-judging, judge concurrency ${judgeConcurrency}`,
  kind: 'cab-judging',
  queries: 198,
  copilots: 4,
  latencyMs: 400,
  copilotConcurrency: 1,
  judgeConcurrency,
}));

/**
 * How cost grows (issue 35): the paper's 1,200 × 6 at `factor` times its size against the simulator at zero latency
 * (so the figures are judgeflow's own, not a provider's), on SQLite with one worker and on PostgreSQL with two. The
 * PostgreSQL run also times a 34-query run (204 answers) alone and with it in flight.
 */
export function scaleScenarios(factor: number): RunScenario[] {
  const base = {
    queries: Math.max(1, Math.round(1200 * factor)),
    copilots: 6,
    latencyMs: 0,
    copilotConcurrency: 4,
    judgeConcurrency: 16,
    kind: 'lattice' as const,
  };
  return [
    { ...base, name: `scale ${factor}×, SQLite` },
    {
      ...base,
      name: `scale ${factor}×, PostgreSQL, 2 workers`,
      store: 'postgres',
      workers: 2,
      alongside: { queries: Math.min(34, base.queries) },
    },
  ];
}

/** Paper-scale throughput, limits and resources, measured against the local simulator. Figures, not assertions. */
export const benchCommand: Command = {
  name: 'bench',
  summary:
    'measure the statistics by simulation, command start-up, and LATTICE runs against the simulator (latency-bound 80 × 6, paper-scale 1,200 × 6 rate-limited on SQLite and on PostgreSQL with two workers) as a table',
  usage:
    'judgeflow bench [--only stats|startup|runs|latency|cab-judging|lattice-files|scale] [--scale 1,3,10] [--store sqlite|postgres (with scale or runs)] [--sims 5000] [--paper-queries 1200] [--cab-queries 198] [--lattice-queries 1200]',
  options: {
    only: { type: 'string' },
    scale: { type: 'string' },
    store: { type: 'string' },
    sims: { type: 'string' },
    'paper-queries': { type: 'string' },
    'cab-queries': { type: 'string' },
    'lattice-queries': { type: 'string' },
  },
  async run({ values }) {
    const only = values.only as string | undefined;
    if (
      only !== undefined &&
      !['stats', 'startup', 'runs', 'latency', 'cab-judging', 'lattice-files', 'scale'].includes(only)
    ) {
      console.error(
        `judgeflow bench: --only must be stats, startup, runs, latency (the latency-bound run alone), cab-judging (the CryptoAnalystBench judging phase), lattice-files (the LATTICE reference's files judged independently and jointly) or scale (the paper's run at --scale times its size), got "${only}"`,
      );
      return 2;
    }
    const store = values.store as 'sqlite' | 'postgres' | undefined;
    if (store !== undefined && store !== 'sqlite' && store !== 'postgres') {
      console.error(
        `judgeflow bench: --store must be sqlite or postgres (only that store's scale scenarios, or with --only runs its run rows), got "${store}"`,
      );
      return 2;
    }
    if (store !== undefined && only !== 'scale' && only !== 'runs') {
      console.error('judgeflow bench: --store goes with --only scale or --only runs');
      return 2;
    }
    if (only === 'scale') {
      const factors = scaleFactors(values.scale);
      return factors ? benchScale(factors, store) : 2;
    }
    const sims = positiveInteger(values.sims, '--sims');
    const paperQueries = positiveInteger(values['paper-queries'], '--paper-queries');
    const cabQueries = positiveInteger(values['cab-queries'], '--cab-queries');
    const latticeQueries = positiveInteger(values['lattice-queries'], '--lattice-queries');
    if (sims === null || paperQueries === null || cabQueries === null || latticeQueries === null) return 2;
    if (only === 'cab-judging') return benchCabJudging(cabQueries);
    if (only === 'lattice-files') return benchLatticeFiles(console.log, latticeQueries);
    let rowFailed = false;
    if (only === undefined || only === 'stats') {
      printStatisticsFigures(console.log, { sims });
      // Issue 33's rows: 400 runs per figure at the default (--sims / 5). A row whose interval contradicts its target
      // makes `--only stats` exit 1 (one with too few runs to tell is listed as NOT SHOWN).
      const checks = printStudyStatisticsFigures(console.log, { sims: Math.max(100, Math.round((sims ?? 2000) / 5)) });
      rowFailed = checks.some((c) => c.verdict === 'FAIL');
    }
    if (only === 'stats') return rowFailed ? 1 : 0;
    if (only === undefined || only === 'startup') await printStartupFigures(console.log);
    if (only === 'startup') return 0;
    benchAlgorithms();
    const rows: RunFigures[] = [];
    // `--only runs --store postgres`: the two-worker PostgreSQL row alone (the pacing of issue 35, docs/scaling.md).
    const scenarios =
      only === 'latency'
        ? SCENARIOS.slice(0, 1)
        : store
          ? SCENARIOS.filter((x) => x.copilotPerSecond && (x.store ?? 'sqlite') === store)
          : SCENARIOS;
    for (const scenario of scenarios) {
      const s = scenario.copilotPerSecond && paperQueries ? { ...scenario, queries: paperQueries } : scenario;
      console.log(`\nrunning ${s.name}: ${s.queries} queries × ${s.copilots} copilots …`);
      rows.push(await measureRun(s, console.log));
    }
    console.log('\n' + runTable(rows));
    // The LATTICE reference files' rows (issue 29): part of the whole bench, skipped with the reason when ../shared is absent.
    if (only === undefined) return benchLatticeFiles(console.log, latticeQueries);
    return 0;
  },
};

/** The CryptoAnalystBench judging phase at each concurrency: wall ÷ bound, and where a judge slot stands idle. */
async function benchCabJudging(queries: number | undefined): Promise<number> {
  const rows: RunFigures[] = [];
  for (const scenario of CAB_JUDGING) {
    const s = queries ? { ...scenario, queries } : scenario;
    console.log(
      `\nrunning ${s.name}: ${s.queries} queries × ${s.copilots} held answers, ${s.latencyMs} ms per judge call …`,
    );
    const row = await measureRun(s, console.log);
    rows.push(row);
    console.log(
      `${s.name}: judging ${row.judgingS!.toFixed(1)} s (the whole run ${row.wallS.toFixed(1)} s), bound ${row.boundS.toFixed(1)} s, judging ÷ bound ${(row.judgingS! / row.boundS).toFixed(3)}×; ` +
        `a judge place idle between turns ${row.gaps!.betweenTurnsMs.toFixed(1)} ms, between conversations ${row.gaps!.betweenUnitsMs.toFixed(1)} ms (means)`,
    );
  }
  console.log('\n' + runTable(rows));
  return 0;
}

/** `--scale 1,3,10`: positive numbers (0.05 is a 60-query smoke run), default 1,3,10. */
function scaleFactors(value: unknown): number[] | null {
  const factors =
    value === undefined
      ? [1, 3, 10]
      : String(value)
          .split(',')
          .map((x) => Number(x.trim()));
  if (factors.length && factors.every((f) => Number.isFinite(f) && f > 0)) return factors;
  console.error(
    `judgeflow bench: --scale must be positive numbers separated by commas (times the paper's 1,200 queries × 6 copilots), e.g. 1,3,10; got "${String(value)}"`,
  );
  return null;
}

/** The scale scenarios, each factor on SQLite then on PostgreSQL with two workers; the table after every run, so a long 10× leaves the rows before it. */
async function benchScale(factors: number[], store?: 'sqlite' | 'postgres'): Promise<number> {
  const rows: RunFigures[] = [];
  for (const factor of factors)
    for (const s of scaleScenarios(factor).filter((x) => !store || (x.store ?? 'sqlite') === store)) {
      console.log(
        `\nrunning ${s.name}: ${s.queries} queries × ${s.copilots} copilots at zero latency (load ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}) …`,
      );
      rows.push(await measureRun(s, console.log));
      console.log(
        `load after: ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      console.log('\n' + scaleTable(rows) + '\n\n' + scaleChart(rows));
    }
  return 0;
}

/**
 * One row per scale run: throughput, cost per item, memory, histories, store and report (docs/bench.md copies it).
 * items/s is the run's own; CPU and store per item count the small runs' items too (RunScenario.alongside).
 */
export function scaleTable(rows: RunFigures[]): string {
  const header = [
    'scenario',
    'items',
    'wall s',
    'items/s',
    'worker CPU ms / item',
    'worker peak RSS MB',
    'histories',
    'largest history (events / MB)',
    'store MB',
    'store KB / item',
    'report s',
    'RSS in report MB',
    'PostgreSQL rows written / transactions per s',
    'small run alone / same priority / priority 1 (s)',
  ];
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  const body = rows.map((r) => {
    const items = 2 * r.scenario.queries * r.scenario.copilots; // answers and judgments
    const a = r.alongside;
    // The workers also did the two small runs timed beside it, and the store holds those and the one timed alone.
    const smallItems = a ? 2 * a.queries * r.scenario.copilots : 0;
    const worked = items + 2 * smallItems;
    const stored = items + 3 * smallItems;
    return line([
      r.scenario.name,
      items,
      r.wallS.toFixed(1),
      (items / r.wallS).toFixed(1),
      (r.workerCpuMs / worked).toFixed(1),
      r.workerPeakMB.toFixed(0),
      r.histories,
      `${r.largestHistory} / ${(r.largestHistoryBytes / 1e6).toFixed(2)}`,
      r.storeMB.toFixed(1),
      ((1000 * r.storeMB) / stored).toFixed(2),
      r.reportS?.toFixed(1) ?? '–',
      r.reportPeakMB?.toFixed(0) ?? '–',
      r.postgresWrites ? `${r.postgresWrites.rowsPerS.toFixed(0)} / ${r.postgresWrites.commitsPerS.toFixed(0)}` : '–',
      a
        ? `${a.aloneS.toFixed(1)} / ${a.samePriorityS.toFixed(1)} (${(a.samePriorityS / a.aloneS).toFixed(2)}×) / ${a.firstPriorityS.toFixed(1)} (${(a.firstPriorityS / a.aloneS).toFixed(2)}×)`
        : '–',
    ]);
  });
  return [line(header), line(header.map(() => '---')), ...body].join('\n');
}

/** Throughput and peak memory per run as ASCII bars: flat bars are linear cost. */
export function scaleChart(rows: RunFigures[]): string {
  const bar = (value: number, max: number) => '█'.repeat(Math.max(1, Math.round((30 * value) / max)));
  const throughput = rows.map((r) => (2 * r.scenario.queries * r.scenario.copilots) / r.wallS);
  const maxT = Math.max(...throughput);
  const maxM = Math.max(...rows.map((r) => r.workerPeakMB));
  const width = Math.max(...rows.map((r) => r.scenario.name.length));
  return [
    'items/s',
    ...rows.map(
      (r, i) => `  ${r.scenario.name.padEnd(width)}  ${bar(throughput[i], maxT)} ${throughput[i].toFixed(1)}`,
    ),
    'worker peak RSS MB',
    ...rows.map((r) => `  ${r.scenario.name.padEnd(width)}  ${bar(r.workerPeakMB, maxM)} ${r.workerPeakMB.toFixed(0)}`),
  ].join('\n');
}

function positiveInteger(value: unknown, flag: string): number | undefined | null {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (Number.isInteger(n) && n > 0) return n;
  console.error(`judgeflow bench: ${flag} must be a positive integer, got "${value}"`);
  return null;
}

/** One row per scenario, in Markdown (README's bench section copies it). */
export function runTable(rows: RunFigures[]): string {
  const header = [
    'scenario',
    'wall s',
    'bound s',
    'wall ÷ bound',
    'LLM calls',
    '429s',
    'worker CPU ms / call (all workers)',
    'worker peak RSS MB (largest)',
    'server peak RSS MB',
    'largest history (events)',
    'store MB',
    'judged while collecting',
  ];
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  const body = rows.map((r) =>
    line([
      `${r.scenario.name} (${r.scenario.queries} × ${r.scenario.copilots}, ${r.scenario.latencyMs} ms/call${r.scenario.copilotPerSecond ? `, copilots ${r.scenario.copilotPerSecond}/s, judge ${r.scenario.judgePerSecond}/s` : ''})`,
      r.wallS.toFixed(1),
      r.boundS.toFixed(1),
      `${(r.wallS / r.boundS).toFixed(2)}×`,
      r.llmCalls,
      `${r.refused} (${((100 * r.refused) / r.llmCalls).toFixed(1)}%)`,
      (r.workerCpuMs / r.llmCalls).toFixed(1),
      r.workerPeakMB.toFixed(0),
      r.serverPeakMB.toFixed(0),
      `${r.largestHistory} (${r.histories} histories)`,
      r.storeMB.toFixed(1),
      r.overlapped ? 'yes' : 'no',
    ]),
  );
  return [line(header), line(header.map(() => '---')), ...body].join('\n');
}

/** In-process figures for the pure algorithms whose speed tests no longer time (they assert the work saved instead). */
function benchAlgorithms(): void {
  const copilots = Array.from({ length: 12 }, (_, i) => `C${i + 1}`);
  const queries = Array.from({ length: 10_000 }, (_, i) => ({ queryId: `q${i}`, copilots }));
  let started = performance.now();
  buildPresentationDesign({ seed: 'bench', queries });
  console.log(
    `CAB presentation design: 10,000 queries × 12 copilots in ${(performance.now() - started).toFixed(0)} ms`,
  );

  const rand = seededRandom('bench');
  const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
  const texts = Array.from({ length: 5000 }, () =>
    Array.from({ length: 4 + Math.floor(rand() * 8) }, () => words[Math.floor(rand() * words.length)]).join(' '),
  );
  const stats = { comparisons: 0 };
  started = performance.now();
  groupNearDuplicates(texts, { stats });
  const pairs = (texts.length * (texts.length - 1)) / 2;
  console.log(
    `near-duplicate grouping: 5,000 texts in ${(performance.now() - started).toFixed(0)} ms, ${stats.comparisons} similarity comparisons (${((100 * stats.comparisons) / pairs).toFixed(1)}% of all pairs)`,
  );
}
