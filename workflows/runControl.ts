import { defineUpdate, log, setHandler } from '@temporalio/workflow';

/** Why a run is paused, and since when; null while it runs. */
export interface PauseState {
  reason: string;
  /** Who paused it: a person (`judgeflow pause`), or the run itself (a budget, a failing endpoint). */
  by: 'user' | 'budget' | 'breaker';
  at: string;
}

/** A run's controls, carried across continue-as-new: whether it is paused, and what was done to it. */
export interface RunControl {
  paused: PauseState | null;
  /** Every pause and resume, in order (recorded in the run's report). */
  history: Array<{ action: 'pause' | 'resume'; reason: string; by: PauseState['by']; at: string }>;
}

export const pauseUpdate = defineUpdate<RunControl, [{ reason?: string }]>('pause');
export const resumeUpdate = defineUpdate<RunControl, [{ reason?: string }]>('resume');

export const initialControl = (): RunControl => ({ paused: null, history: [] });

/**
 * `judgeflow pause` / `judgeflow resume` as Temporal Updates: validated (a paused run cannot be paused again, a running
 * one not resumed), recorded, and answered with the run's controls. While paused no new copilot or judge call starts
 * (each endpoint lane waits on `held`); calls in flight finish and are kept. A paused run is an open workflow waiting
 * on a condition: it costs nothing, survives worker and server restarts, and waits for as long as it takes.
 */
export function handleRunControl(control: RunControl, isOpen: () => boolean): void {
  setHandler(
    pauseUpdate,
    ({ reason }) => {
      pause(control, reason || 'paused by judgeflow pause', 'user');
      return control;
    },
    {
      validator: (_request: { reason?: string }) => {
        if (!isOpen()) throw new Error('the run has finished collecting and judging; there is nothing left to pause');
        if (control.paused) throw new Error(`the run is already paused (${control.paused.reason}, since ${control.paused.at})`);
      },
    },
  );
  setHandler(
    resumeUpdate,
    ({ reason }) => {
      const was = control.paused!;
      control.paused = null;
      control.history.push({ action: 'resume', reason: reason || `resumed after: ${was.reason}`, by: 'user', at: new Date().toISOString() });
      log.info('run resumed', { after: was.reason });
      return control;
    },
    {
      validator: (_request: { reason?: string }) => {
        if (!control.paused) throw new Error('the run is not paused');
      },
    },
  );
}

/** Pause the run (by a person, or by the run itself when a budget or a failing endpoint says so). */
export function pause(control: RunControl, reason: string, by: PauseState['by']): void {
  if (control.paused) return;
  const at = new Date().toISOString();
  control.paused = { reason, by, at };
  control.history.push({ action: 'pause', reason, by, at });
  log.info('run paused', { reason, by });
}
