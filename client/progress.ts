/**
 * Progress on the terminal: one bar per stage (done/total, failures, rate, ETA), redrawn in place by
 * cli-progress when the output is a terminal; plain lines when it is not, or with --json.
 */
import cliProgress from 'cli-progress';
import { InputError } from '../core/model/inputError';

import type { StageProgress } from '../contract/stageProgress';
import type { PauseState } from '../contract/run';
export type { StageProgress };

export type ProgressMode = 'bars' | 'lines';

/**
 * `--progress auto|bars|lines` (or JUDGEFLOW_PROGRESS): auto draws bars only on a terminal and never with --json,
 * whose stdout is for machines. `bars` forces them (e.g. under a CI log viewer that renders carriage returns).
 */
export function progressMode(
  option: unknown,
  json: boolean,
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): ProgressMode {
  const wanted = typeof option === 'string' && option ? option : env.JUDGEFLOW_PROGRESS || 'auto';
  if (wanted === 'bars' || wanted === 'lines') return wanted;
  if (wanted !== 'auto') throw new InputError(`--progress must be auto, bars or lines (got "${wanted}")`);
  return !json && stream.isTTY ? 'bars' : 'lines';
}

export interface ProgressView {
  update(p: StageProgress): void;
  /** A message that must not be overdrawn by the bars. */
  log(line: string): void;
  stop(): void;
}

export function describeStage(p: StageProgress): string {
  return stageLines(p).join('\n');
}

/** One line per stage; stages running together (a run's collect and judge) get one line each. */
function stageLines(p: StageProgress): string[] {
  if (p.stage === 'load') return ['[load] reading the snapshot and rubric'];
  const line = (stage: string, s: { done: number; total: number; failures: number }) =>
    `[${stage}] ${s.done}/${s.total} done${s.failures ? `, ${s.failures} failed` : ''}`;
  const together = Object.entries(p.stages ?? {}).map(([stage, s]) => line(stage, s));
  return p.stages && p.stage in p.stages ? together : [...together, line(p.stage, p)];
}

/** Plain lines: one whenever a stage's progress changes. */
function linesView(print: (line: string) => void): ProgressView {
  const last = new Map<string, string>();
  return {
    update(p) {
      for (const line of stageLines(p)) {
        const stage = line.slice(0, line.indexOf(']') + 1);
        if (last.get(stage) !== line) print(line);
        last.set(stage, line);
      }
    },
    log: print,
    stop() {},
  };
}

/** Stages that count nothing of their own (they carry the previous stage's figures): a line, not a bar. */
const UNCOUNTED = new Set(['load', 'plan', 'report', 'store', 'done', 'failed']);

/** One bar per counting stage; a stage that has moved on is drawn complete. Other stages are lines above the bars. */
function barsView(stream: NodeJS.WritableStream, forced: boolean): ProgressView {
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      format: '{stage} |{bar}| {value}/{total} | {failures} failed | {rate}/s | ETA {eta_formatted}',
      barCompleteChar: '\u2588',
      barIncompleteChar: '\u2591',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 20,
      fps: 5,
      // A forced redraw on something that is not a terminal still draws in place (carriage returns).
      noTTYOutput: forced,
      notTTYSchedule: 500,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, { bar: cliProgress.SingleBar; started: number; failuresBefore: number }>();
  let failuresSoFar = 0;
  let lastStage = '';
  const view: ProgressView = {
    update(p) {
      // Stages running together (collect and judge): one bar each, from their own figures.
      if (p.stages) {
        for (const [stage, s] of Object.entries(p.stages)) {
          if (s.total <= 0) continue;
          let entry = bars.get(stage);
          if (!entry) {
            entry = {
              bar: multibar.create(s.total, 0, { stage: stage.padEnd(8), failures: 0, rate: '0.0' }),
              started: Date.now(),
              failuresBefore: 0,
            };
            bars.set(stage, entry);
          }
          const seconds = Math.max(0.001, (Date.now() - entry.started) / 1000);
          entry.bar.setTotal(s.total);
          entry.bar.update(s.done, { failures: s.failures, rate: (s.done / seconds).toFixed(1) });
        }
        failuresSoFar = p.failures;
        if (p.stage in p.stages) {
          lastStage = p.stage;
          return;
        }
      }
      if (p.stage !== lastStage) {
        const previous = bars.get(lastStage);
        if (previous) previous.bar.update(previous.bar.getTotal());
      }
      if (p.total <= 0 || UNCOUNTED.has(p.stage)) {
        if (p.stage !== lastStage) multibar.log(`[${p.stage}]\n`);
        lastStage = p.stage;
        return;
      }
      let entry = bars.get(p.stage);
      if (!entry) {
        entry = {
          bar: multibar.create(p.total, 0, { stage: p.stage.padEnd(8), failures: 0, rate: '0.0' }),
          started: Date.now(),
          failuresBefore: failuresSoFar,
        };
        bars.set(p.stage, entry);
      }
      lastStage = p.stage;
      failuresSoFar = p.failures;
      const seconds = Math.max(0.001, (Date.now() - entry.started) / 1000);
      entry.bar.setTotal(p.total);
      entry.bar.update(p.done, { failures: p.failures - entry.failuresBefore, rate: (p.done / seconds).toFixed(1) });
    },
    log(line) {
      multibar.log(`${line}\n`);
    },
    stop() {
      multibar.stop();
    },
  };
  return view;
}

export function progressView(
  mode: ProgressMode,
  print: (line: string) => void,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): ProgressView {
  const view = mode === 'bars' ? barsView(stream, !stream.isTTY) : linesView(print);
  const notes = runNotes();
  return {
    update(p) {
      view.update(p);
      for (const line of notes(p)) view.log(line);
    },
    log: (line) => view.log(line),
    stop: () => view.stop(),
  };
}

/** What a run's progress carries beyond its counts (contract/run.ts Progress). */
interface RunState {
  runId?: string;
  paused?: PauseState | null;
  warnings?: string[];
}

/**
 * The lines an attached run prints besides its counts: one when it pauses (why, and how to go on), one when it goes on,
 * and each warning once. A budget warning is printed only below the cap: past it, the pause line says so.
 */
export function runNotes(): (p: StageProgress & RunState) => string[] {
  let wasPaused: PauseState | null = null;
  const warned = new Set<string>();
  return (p) => {
    const lines: string[] = [];
    for (const w of p.warnings ?? []) {
      if (warned.has(w)) continue;
      warned.add(w);
      if (!pastTheCap(w)) lines.push(`Warning: ${w}`);
    }
    const paused = p.paused ?? null;
    if (paused && paused.at !== wasPaused?.at) lines.push(pauseLine(paused, p.runId ?? 'RUN_ID'));
    else if (!paused && wasPaused)
      lines.push(`Resumed${p.runId ? ` ${p.runId}` : ''}: the run goes on where it paused.`);
    wasPaused = paused;
    return lines;
  };
}

/** "80% of the budget reached: $0.0542 of the $0.05 budget spent" is past the cap, not at 80% of it. */
function pastTheCap(warning: string): boolean {
  if (warning.startsWith('budget reached, paused at ')) return true; // the pause line says it
  const usd = /^80% of the budget reached: \$([\d.]+) of the \$([\d.]+) budget/.exec(warning);
  const tokens = /^80% of the budget reached: (\d+) of the (\d+)-token budget/.exec(warning);
  const m = usd ?? tokens;
  return m !== null && Number(m[1]) >= Number(m[2]);
}

export function pauseLine(paused: PauseState, runId: string): string {
  const resume = `judgeflow resume ${runId}`;
  if (paused.by === 'budget') {
    const usd =
      paused.budgetUsd !== undefined &&
      paused.spentUsd !== undefined &&
      paused.spentUsd !== null &&
      paused.spentUsd >= paused.budgetUsd;
    const spent = usd
      ? `$${paused.spentUsd!.toFixed(4)} spent of the $${paused.budgetUsd} budget`
      : paused.budgetTokens !== undefined && paused.spentTokens !== undefined
        ? `${paused.spentTokens} tokens used of the ${paused.budgetTokens}-token budget`
        : 'the budget is spent';
    const raise = usd || paused.budgetTokens === undefined ? '--budget-usd N' : '--budget-tokens N';
    return `Paused ${runId} at its budget (${spent}). Calls in flight finish and are kept; nothing new starts. Raise the budget with ${resume} ${raise}, or stop with judgeflow cancel ${runId}.`;
  }
  if (paused.by === 'breaker')
    return `Paused ${runId}: ${paused.reason}. Fix the endpoint, then ${resume} (with --config FILE for new endpoint settings).`;
  return `Paused ${runId}${paused.reason === 'paused by judgeflow pause' ? ' by judgeflow pause' : `: ${paused.reason}`}. Calls in flight finish and are kept. Go on with ${resume}.`;
}
