import { log, setHandler } from '@temporalio/workflow';
import { controlQuery, pauseUpdate, resumeUpdate, unreported } from './control';
import { checkReplacement, handleTune, replaceConfig } from './retune';
import type { Budget, PauseState, ResumeRequest, RunControl, Spend } from './types';
// Re-exported: code written before contract/ existed imports the run's control types and messages from here.
export type { Budget, ControlStep, PauseState, ResumeRequest, RunControl, Spend } from './types';
export { controlQuery, pauseUpdate, resumeUpdate, unreported } from './control';

export const initialControl = (budget?: Budget): RunControl => ({ paused: null, ...(budget ? { budget: { ...budget } } : {}), warnings: [], history: [] });

/** Share of the budget at which the run records a warning. */
const WARN_AT = 0.8;

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
    async ({ reason, budgetUsd, budgetTokens, config }) => {
      const was = control.paused!;
      if (config) await replaceConfig(control, config);
      if (budgetUsd !== undefined || budgetTokens !== undefined) control.budget = { ...control.budget, ...(budgetUsd !== undefined ? { usd: budgetUsd } : {}), ...(budgetTokens !== undefined ? { tokens: budgetTokens } : {}) };
      control.paused = null;
      control.history.push({ action: 'resume', reason: reason || `resumed after: ${was.reason}`, by: 'user', at: new Date().toISOString() });
      log.info('run resumed', { after: was.reason });
      return control;
    },
    {
      validator: ({ budgetUsd, budgetTokens, config }: ResumeRequest) => {
        if (!control.paused) throw new Error('the run is not paused');
        if (config) checkReplacement(control, config);
        if (control.paused.by !== 'budget') return;
        // Resumed at the same cap, the next look at the spend would pause it again at once.
        const caps = { ...((config?.budget as Budget | undefined) ?? control.budget), ...(budgetUsd !== undefined ? { usd: budgetUsd } : {}), ...(budgetTokens !== undefined ? { tokens: budgetTokens } : {}) };
        const over = overBudget(control.spent, caps);
        if (over) throw new Error(`the run is paused at its budget: ${over}; raise it above what was spent (judgeflow resume RUN_ID --budget-usd N or --budget-tokens N)`);
      },
    },
  );
  handleTune(control, isOpen);
  setHandler(controlQuery, () => control);
}

/** Pause the run (by a person, or by the run itself when a budget or a failing endpoint says so). */
export function pause(control: RunControl, reason: string, by: PauseState['by']): void {
  if (control.paused) return;
  const at = new Date().toISOString();
  control.paused = { reason, by, at };
  control.history.push({ action: 'pause', reason, by, at });
  log.info('run paused', { reason, by });
}

/** What the spend reached of the caps ("$1.20 of $1.00"), or null while under every cap. */
function overBudget(spent: Spend | undefined, budget: Budget | undefined): string | null {
  if (!spent || !budget) return null;
  if (budget.usd !== undefined && spent.usd !== null && spent.usd >= budget.usd) return `$${spent.usd.toFixed(4)} spent of $${budget.usd}`;
  if (budget.tokens !== undefined && spent.tokens >= budget.tokens) return `${spent.tokens} tokens used of ${budget.tokens}`;
  return null;
}

/**
 * The run's spend, measured again: at 80% of a cap a warning is recorded (once per cap), at the cap the run pauses
 * with reason `budget` — no new call starts; those in flight finish and are kept.
 */
export function noteSpend(control: RunControl, spent: Spend): void {
  control.spent = spent;
  const budget = control.budget;
  if (!budget) return;
  const shares: Array<[string, number]> = [];
  if (budget.usd !== undefined && spent.usd !== null) shares.push([`$${spent.usd.toFixed(4)} of the $${budget.usd} budget`, spent.usd / budget.usd]);
  if (budget.tokens !== undefined) shares.push([`${spent.tokens} of the ${budget.tokens}-token budget`, spent.tokens / budget.tokens]);
  for (const [what, share] of shares) {
    const warning = `80% of the budget reached: ${what} spent${unreported(spent)}`;
    // Once per cap: "of the $25 budget" names it, whatever was spent when the warning was written.
    const cap = what.replace(/^[^ ]+ /, '');
    // Also when one look finds the spend past the cap already: the run did pass 80% on the way.
    if (share >= WARN_AT && !control.warnings.some((w) => w.startsWith('80% of the budget reached: ') && w.includes(cap))) {
      control.warnings.push(warning);
      log.warn(warning);
    }
  }
  if (!control.paused && overBudget(spent, budget)) {
    pause(control, 'budget', 'budget');
    Object.assign(control.paused!, {
      ...(budget.usd !== undefined ? { spentUsd: spent.usd, budgetUsd: budget.usd } : {}),
      ...(budget.tokens !== undefined ? { spentTokens: spent.tokens, budgetTokens: budget.tokens } : {}),
    });
  }
}
