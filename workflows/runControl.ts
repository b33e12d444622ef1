import { ApplicationFailure, condition, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { controlQuery, heldQuery, pauseUpdate, resumeUpdate, unreported, describeBudget } from '../contract/control';
import { checkReplacement, handleTune, replaceConfig, type LaneSlot } from './retune';
import type { Budget, PauseState, ResumeRequest, RunControl, Spend } from '../contract/run';

export const initialControl = (budget?: Budget): RunControl => ({
  paused: null,
  ...(budget ? { budget: { ...budget } } : {}),
  warnings: [],
  history: [],
});

/** Share of the budget at which the run records a warning. */
const WARN_AT = 0.8;
const WARNING_PREFIX = '80% of the budget reached: ';
/** What a first look past the cap records instead (the run did pass 80% on the way, but "80%" would be untrue). */
const REACHED_PREFIX = 'budget reached, paused at ';
const isBudgetWarning = (w: string) => w.startsWith(WARNING_PREFIX) || w.startsWith(REACHED_PREFIX);
/** How a warning names each cap ("of the $25 budget"), so it is written once per cap and dropped when the cap changes. */
const currentCaps = (budget: Budget) => [
  ...(budget.usd !== undefined ? [`of the $${budget.usd} budget`] : []),
  ...(budget.tokens !== undefined ? [`of the ${budget.tokens}-token budget`] : []),
];

/**
 * `judgeflow pause` / `judgeflow resume` as Temporal Updates: validated (a paused run cannot be paused again, a running
 * one not resumed), recorded, and answered with the run's controls. While paused no new copilot or judge call starts
 * (each endpoint lane waits on `held`); calls in flight finish and are kept. A paused run is an open workflow waiting
 * on a condition: it costs nothing, survives worker and server restarts, and waits for as long as it takes.
 */
export function handleRunControl(control: RunControl, slot: LaneSlot, isOpen: () => boolean): void {
  setHandler(
    pauseUpdate,
    ({ reason }) => {
      pause(control, reason || 'paused by judgeflow pause', 'user');
      return control;
    },
    {
      validator: (_request: { reason?: string }) => {
        if (!isOpen()) throw new Error('the run has finished collecting and judging; there is nothing left to pause');
        if (control.paused)
          throw new Error(`the run is already paused (${control.paused.reason}, since ${control.paused.at})`);
      },
    },
  );
  // Two resumes may pass their validators in one workflow task (both see the run paused); the first handler to run
  // claims the resume synchronously, so the other is refused with the reason instead of being told "config replaced".
  let resuming = false;
  setHandler(
    resumeUpdate,
    async ({ reason, budgetUsd, budgetTokens, config }) => {
      if (resuming || !control.paused)
        throw ApplicationFailure.nonRetryable(
          resuming
            ? 'another resume of this run is being applied; see judgeflow status, then resume again if it is still paused'
            : 'the run is not paused (another resume came first)',
          'ResumeRefused',
        );
      const was = control.paused;
      const before = JSON.stringify(control.budget ?? null);
      resuming = true;
      try {
        if (config) await replaceConfig(control, slot, config);
      } finally {
        resuming = false;
      }
      const newCap = newCaps(control, before, budgetUsd, budgetTokens);
      control.paused = null;
      control.history.push({
        action: 'resume',
        reason:
          reason || `resumed after: ${was.reason}${newCap ? `; budget now ${describeBudget(control.budget)}` : ''}`,
        by: 'user',
        at: new Date().toISOString(),
        ...(newCap ? { budget: { ...control.budget } } : {}),
      });
      log.info('run resumed', { after: was.reason });
      return control;
    },
    {
      validator: (request: ResumeRequest) => validateResume(control, slot, isOpen, resuming, request),
    },
  );
  handleTune(control, slot, isOpen);
  setHandler(controlQuery, () => control);
  setHandler(heldQuery, () => control.paused !== null);
}

/** A resume is refused before it is applied: a finished run, a running one, a second resume, a cap still spent. */
function validateResume(
  control: RunControl,
  slot: LaneSlot,
  isOpen: () => boolean,
  resuming: boolean,
  { budgetUsd, budgetTokens, config }: ResumeRequest,
): void {
  if (!isOpen())
    throw new Error(
      'the run has finished collecting and judging (its pause held nothing back); it completes with what it has, so there is nothing to resume',
    );
  if (!control.paused) throw new Error('the run is not paused');
  if (resuming) throw new Error('another resume of this run is being applied; see judgeflow status');
  if (config) checkReplacement(slot, config);
  if (control.paused.by !== 'budget') return;
  // Resumed at the same cap, the next look at the spend would pause it again at once.
  const caps = {
    ...(config?.budget ?? control.budget),
    ...(budgetUsd !== undefined ? { usd: budgetUsd } : {}),
    ...(budgetTokens !== undefined ? { tokens: budgetTokens } : {}),
  };
  const over = overBudget(control.spent, caps) ?? nextBatchOver(control.paused, control.spent, caps);
  if (over)
    throw new Error(
      `the run is paused at its budget: ${over}; raise it above what was spent (judgeflow resume RUN_ID --budget-usd N or --budget-tokens N)`,
    );
}

/**
 * A resume's new caps (`--budget-usd`/`--budget-tokens`) over what the budget was before it (`before`, JSON), with the
 * warnings about caps the run no longer has dropped (they would mislead status; the history keeps what happened).
 * Whether the caps changed.
 */
function newCaps(control: RunControl, before: string, budgetUsd?: number, budgetTokens?: number): boolean {
  if (budgetUsd !== undefined || budgetTokens !== undefined)
    control.budget = {
      ...control.budget,
      ...(budgetUsd !== undefined ? { usd: budgetUsd } : {}),
      ...(budgetTokens !== undefined ? { tokens: budgetTokens } : {}),
    };
  const changed = JSON.stringify(control.budget ?? null) !== before;
  if (changed)
    control.warnings = control.warnings.filter(
      (w) => !isBudgetWarning(w) || (control.budget && currentCaps(control.budget).some((cap) => w.includes(cap))),
    );
  return changed;
}

/** Pause the run (by a person, or by the run itself when a budget or a failing endpoint says so). */
export function pause(control: RunControl, reason: string, by: PauseState['by']): void {
  if (control.paused) return;
  const at = new Date().toISOString();
  control.paused = { reason, by, at };
  control.history.push({ action: 'pause', reason, by, at });
  log.info('run paused', { reason, by });
}

/**
 * Collecting and judging ended while the run was paused: the calls in flight when it was paused were the last ones, so
 * the pause held nothing back and the run goes on to its report. Recorded, so status and the report say so instead of
 * "paused" while the run completes.
 */
export function endPauseWithNothingLeft(control: RunControl): void {
  if (!control.paused) return;
  const was = control.paused;
  control.paused = null;
  control.history.push({
    action: 'resume',
    reason: `nothing was left to ask: the calls in flight when it was paused (${was.reason}) finished the run`,
    by: was.by,
    at: new Date().toISOString(),
  });
  log.info('pause ended: nothing left to ask', { after: was.reason });
}

/** What the spend reached of the caps ("$1.20 of $1.00"), or null while under every cap. */
function overBudget(spent: Spend | undefined, budget: Budget | undefined): string | null {
  if (!spent || !budget) return null;
  if (budget.usd !== undefined && spent.usd !== null && spent.usd >= budget.usd)
    return `$${spent.usd.toFixed(4)} spent of $${budget.usd}`;
  if (budget.tokens !== undefined && spent.tokens >= budget.tokens)
    return `${spent.tokens} tokens used of ${budget.tokens}`;
  return null;
}

/** A pause before a batch round: the caps must leave room for its price, or the next look pauses the run again. */
function nextBatchOver(paused: PauseState, spent: Spend | undefined, caps: Budget): string | null {
  if (paused.nextBatchUsd !== undefined && caps.usd !== undefined && (spent?.usd ?? 0) + paused.nextBatchUsd > caps.usd)
    return `$${(spent?.usd ?? 0).toFixed(4)} spent of $${caps.usd}, and the next batch costs about $${paused.nextBatchUsd.toFixed(4)}`;
  if (
    paused.nextBatchTokens !== undefined &&
    caps.tokens !== undefined &&
    (spent?.tokens ?? 0) + paused.nextBatchTokens > caps.tokens
  )
    return `${spent?.tokens ?? 0} tokens used of ${caps.tokens}, and the next batch needs about ${paused.nextBatchTokens}`;
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
  if (budget.usd !== undefined && spent.usd !== null)
    shares.push([`$${spent.usd.toFixed(4)} of the $${budget.usd} budget`, spent.usd / budget.usd]);
  if (budget.tokens !== undefined)
    shares.push([`${spent.tokens} of the ${budget.tokens}-token budget`, spent.tokens / budget.tokens]);
  for (const [what, share] of shares) {
    const warning = `${share >= 1 ? REACHED_PREFIX : WARNING_PREFIX}${what} spent${unreported(spent)}`;
    // Once per cap: "of the $25 budget" names it, whatever was spent when the warning was written.
    const cap = what.replace(/^[^ ]+ /, '');
    // Also when one look finds the spend past the cap already: the run did pass 80% on the way.
    if (share >= WARN_AT && !control.warnings.some((w) => isBudgetWarning(w) && w.includes(cap))) {
      control.warnings.push(warning);
      log.warn(warning);
    }
  }
  if (!control.paused && overBudget(spent, budget)) budgetPause(control, spent, budget, {});
}

/** The run paused by its budget, with what was spent of what (and what the next batch would have cost). */
function budgetPause(
  control: RunControl,
  spent: Spend,
  budget: Budget,
  next: Pick<PauseState, 'nextBatchUsd' | 'nextBatchTokens'>,
): void {
  pause(control, 'budget', 'budget');
  Object.assign(control.paused!, {
    ...(budget.usd !== undefined ? { spentUsd: spent.usd, budgetUsd: budget.usd } : {}),
    ...(budget.tokens !== undefined ? { spentTokens: spent.tokens, budgetTokens: budget.tokens } : {}),
    ...next,
  });
}

/** A batch round whose first item's lines cost more than is left of the budget: the run pauses before submitting it. */
export function pauseBeforeBatch(control: RunControl, price: { usd: number; tokens: number }): void {
  if (control.paused || !control.budget) return;
  const { budget } = control;
  budgetPause(control, control.spent ?? { usd: 0, tokens: 0, callsWithoutUsage: 0 }, budget, {
    ...(budget.usd !== undefined ? { nextBatchUsd: price.usd } : {}),
    ...(budget.tokens !== undefined ? { nextBatchTokens: price.tokens } : {}),
  });
  log.warn('run paused before a batch round over its budget', {
    nextBatchUsd: price.usd,
    nextBatchTokens: price.tokens,
  });
}

/** At most this long between two looks at a budget while calls finish (each look reads the run's call records). */
const BUDGET_CHECK_MS = 3_000;

/**
 * The budget watch of one history: the spend, priced as the report prices it, looked at again when the items finished
 * since the last look would bring it within a window of the cap at the average price of an item so far (itemsUntilCap:
 * at most a window of items, the sum of the endpoints' concurrencies; at least one), and at least every 3 s while calls
 * run; noteSpend warns at 80% and pauses at the cap. So the look that pauses comes at about the cap, and what runs on
 * after it is the calls in flight.
 * A run without a budget waits for one (`resume --budget-usd`) and is watched from then on.
 */
export async function watchBudget(
  runId: string,
  control: RunControl,
  done: () => boolean,
  finished: { count: number },
  window: number,
): Promise<void> {
  const { runSpend } = proxyActivities<BenchmarkActivities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3 },
  });
  let first: { count: number; spent: Spend } | undefined;
  for (;;) {
    if (!control.budget) await condition(() => done() || control.budget !== undefined);
    if (done() && !control.budget) return;
    const seen = finished.count;
    const step =
      first && control.spent
        ? itemsUntilCap(control.budget!, first, { count: seen, spent: control.spent }, window)
        : window;
    await condition(() => done() || finished.count - seen >= step || !control.budget, BUDGET_CHECK_MS);
    if (control.budget && (finished.count > seen || done() || !first)) {
      noteSpend(control, await runSpend({ runId }));
      first ??= { count: finished.count, spent: control.spent! };
    }
    if (done()) return;
  }
}

/**
 * Items that may finish before the next look: what the cap's remainder buys at this history's average item price, less
 * a window (the calls in flight), at least one and at most a window.
 */
export function itemsUntilCap(
  budget: Budget,
  first: { count: number; spent: Spend },
  now: { count: number; spent: Spend },
  window: number,
): number {
  const items = now.count - first.count;
  if (items <= 0) return window;
  const left: number[] = [];
  if (budget.usd !== undefined && now.spent.usd !== null && first.spent.usd !== null && now.spent.usd > first.spent.usd)
    left.push((budget.usd - now.spent.usd) / ((now.spent.usd - first.spent.usd) / items));
  if (budget.tokens !== undefined && now.spent.tokens > first.spent.tokens)
    left.push((budget.tokens - now.spent.tokens) / ((now.spent.tokens - first.spent.tokens) / items));
  // A window early: near the cap the run looks after every item, so the look that pauses is at most an item late.
  return Math.max(1, Math.min(window, Math.floor(Math.min(window * 2, ...left) + 1e-9) - window));
}
