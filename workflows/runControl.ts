import { defineQuery, defineUpdate, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { compareRunConfigs } from './configChange';
import { failFastFrom, type Breaker, type FailFast } from './breaker';
import type { Limiter, LimiterOptions } from './limits/limiter';
import type { BenchmarkRunInput } from './types';

/** Why a run is paused, and since when; null while it runs. A budget pause says what was spent of what. */
export interface PauseState {
  /** `budget` for a budget pause; otherwise the words of whoever paused it. */
  reason: string;
  /** Who paused it: a person (`judgeflow pause`), or the run itself (a budget, a failing endpoint). */
  by: 'user' | 'budget' | 'breaker';
  at: string;
  spentUsd?: number | null;
  budgetUsd?: number;
  spentTokens?: number;
  budgetTokens?: number;
}

/** The run's spending cap (config `budget`, raised by `judgeflow resume --budget-usd/--budget-tokens`). */
export interface Budget {
  usd?: number;
  tokens?: number;
}

/** What the run's calls have cost so far (activities/spend.ts). */
export interface Spend {
  usd: number | null;
  tokens: number;
  callsWithoutUsage: number;
  /** Of those, the calls whose tokens are estimated from their request and reply size (≈ 4 characters a token). */
  callsEstimated?: number;
}

/** A limit `judgeflow tune` changes. */
export type LimitName = 'concurrency' | 'requestsPerMinute' | 'tokensPerMinute';
export const LIMIT_NAMES: LimitName[] = ['concurrency', 'requestsPerMinute', 'tokensPerMinute'];

/** One limit of one endpoint changed: what, from (null: unset) → to. */
export interface LimitChange {
  /** `copilot NAME`, `judge NAME` (a panel member) or `the judge`. */
  endpoint: string;
  limit: LimitName;
  from: number | null;
  to: number;
}

/** One step of a run's control history: a pause, a resume, new limits (`tune`) or endpoint settings replaced (`config`). */
export interface ControlStep {
  action: 'pause' | 'resume' | 'tune' | 'config';
  reason: string;
  by: PauseState['by'];
  at: string;
  /** `tune`: every limit changed. */
  limits?: LimitChange[];
  /** `config` (resume --config): the settings replaced ("copilot MyAPI answerPath"). */
  settings?: string[];
}

/** A run's controls, carried across continue-as-new: whether it is paused, its budget, its tuned limits, and what was done to it. */
export interface RunControl {
  paused: PauseState | null;
  budget?: Budget;
  spent?: Spend;
  /** Warnings recorded on the way (80% of the budget), shown by status and in the report. */
  warnings: string[];
  /** Every pause, resume, tune and config replacement, in order (recorded in the run's report). */
  history: ControlStep[];
  /** Limits set by `judgeflow tune`, per limiter key (`copilot:NAME`, `judge`, `judge:LANE`), over the config's. */
  limits?: Record<string, Partial<Record<LimitName, number>>>;
}

/** A resume may raise the budget a budget pause stopped at, and (`--config`) replace the endpoints' settings. */
export interface ResumeRequest {
  reason?: string;
  budgetUsd?: number;
  budgetTokens?: number;
  /** The run's config, loaded and validated as `judgeflow run` loads it (env var names only, never their values). */
  config?: BenchmarkRunInput['config'];
}

/** New limits for one endpoint: a copilot by name, or the judge (a panel's member by name). */
export interface TuneTarget {
  copilot?: string;
  judge?: string;
  concurrency?: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export interface TuneRequest {
  reason?: string;
  endpoints: TuneTarget[];
}

export const pauseUpdate = defineUpdate<RunControl, [{ reason?: string }]>('pause');
export const resumeUpdate = defineUpdate<RunControl, [ResumeRequest]>('resume');
export const tuneUpdate = defineUpdate<RunControl, [TuneRequest]>('tune');
/** The run's controls as they stand (status --json shows the history and the tuned limits). */
export const controlQuery = defineQuery<RunControl>('control');

/**
 * What the collect-and-judge stage lends the controls while it runs (workflows/collectAndJudge.ts): the workflow
 * input's config (replaced in place by resume --config, so continue-as-new carries it), and each endpoint's limiter and
 * breaker, so a tune or a new config reaches them at once. Not serialised: each history's stage attaches its own.
 */
export interface ControlledLanes {
  runId: string;
  config: BenchmarkRunInput['config'];
  /** The copilots asked live (CSV copilots have no lane and no limits). */
  live: string[];
  limiters: Map<string, Limiter>;
  breakers: Map<string, Breaker>;
  /** Per judge lane, the concurrency the judge planner keeps work ready for (changed in place with the judge's limit). */
  judgeConcurrencies: number[];
}

/** New limits reach the endpoint's limiter, and for a judge the planner's look-ahead too. */
function applyLimits(lanes: ControlledLanes, key: string, limits: LimiterOptions): void {
  lanes.limiters.get(key)?.setLimits(limits);
  const lane = key === 'judge' ? 0 : key.startsWith('judge:') ? Number(key.slice('judge:'.length)) : undefined;
  if (lane !== undefined && lane < lanes.judgeConcurrencies.length) lanes.judgeConcurrencies[lane] = limits.concurrency;
}

const attached = new WeakMap<RunControl, ControlledLanes>();

export function attachLanes(control: RunControl, lanes: ControlledLanes): void {
  attached.set(control, lanes);
}

const { replaceRunConfig } = proxyActivities<BenchmarkActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] } });

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
  setHandler(tuneUpdate, (request) => tune(control, request), { validator: (request: TuneRequest) => void tuneChanges(control, request, isOpen) });
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

/** What the spend says of calls reported without usage: how many are estimated, how many not counted. */
export function unreported(spent: Spend): string {
  const estimated = spent.callsEstimated ?? 0;
  const uncounted = spent.callsWithoutUsage - estimated;
  const parts = [estimated ? `${estimated} call(s) reported no usage and are estimated from their request and reply size` : '', uncounted ? `${uncounted} call(s) reported no usage and are not counted` : ''].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
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
    if (share >= WARN_AT && share < 1 && !control.warnings.some((w) => w.startsWith('80% of the budget reached: ') && w.includes(cap))) {
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

/** An endpoint of the run as tune names it: its limiter key, how the history names it, and the config's limits. */
interface Endpoint {
  key: string;
  label: string;
  configured: LimiterOptions;
}

/** Every endpoint the run's lanes call: its live copilots, and its judge or each panel member. */
function endpointsOf(lanes: ControlledLanes): { copilots: Map<string, Endpoint>; judges: Map<string, Endpoint> } {
  const limits = (l: LimiterOptions): LimiterOptions => ({ concurrency: l.concurrency, requestsPerMinute: l.requestsPerMinute, tokensPerMinute: l.tokensPerMinute });
  const copilots = new Map(lanes.config.copilots.filter((c) => lanes.live.includes(c.name)).map((c) => [c.name, { key: `copilot:${c.name}`, label: `copilot ${c.name}`, configured: limits(c) }]));
  const panel = lanes.config.judges;
  const judges = panel?.length
    ? new Map(panel.map((j, lane) => [j.name ?? String(lane + 1), { key: `judge:${lane}`, label: `judge ${j.name ?? lane + 1}`, configured: limits(j) }]))
    : new Map([['', { key: 'judge', label: 'the judge', configured: limits(lanes.config.judge!) }]]);
  return { copilots, judges };
}

/** An endpoint's limits now: the config's, with what tune set over them. */
export function limitsOf(control: RunControl, key: string, configured: LimiterOptions): LimiterOptions {
  return { ...configured, ...control.limits?.[key] };
}

/** The changes a tune request makes, validated (what is refused says what would be accepted). */
function tuneChanges(control: RunControl, request: TuneRequest, isOpen: () => boolean): Array<{ endpoint: Endpoint; limit: LimitName; from: number | null; to: number }> {
  if (!isOpen()) throw new Error('the run has finished collecting and judging; there is nothing left to tune');
  const lanes = attached.get(control);
  if (!lanes) throw new Error('the run is still preparing (storing its snapshot and rubric); tune it once it collects');
  const { copilots, judges } = endpointsOf(lanes);
  if (!request.endpoints?.length) throw new Error('nothing to change: give --judge-concurrency N, or --copilot NAME (or --judge NAME) with --concurrency, --requests-per-minute or --tokens-per-minute');
  return request.endpoints.flatMap((target) => {
    const endpoint = target.copilot !== undefined ? copilotOf(copilots, target.copilot) : judgeOf(judges, target.judge);
    const limits = LIMIT_NAMES.filter((limit) => target[limit] !== undefined);
    if (!limits.length) throw new Error(`nothing to change for ${endpoint.label}: give --concurrency, --requests-per-minute or --tokens-per-minute`);
    const now = limitsOf(control, endpoint.key, endpoint.configured);
    return limits.map((limit) => {
      const to = target[limit]!;
      if (!Number.isInteger(to) || to < 1) throw new Error(`${limit} of ${endpoint.label} must be a positive whole number, got ${to}`);
      return { endpoint, limit, from: now[limit] ?? null, to };
    });
  });
}

function copilotOf(copilots: Map<string, Endpoint>, name: string): Endpoint {
  const found = copilots.get(name);
  if (!found) throw new Error(`the run has no copilot "${name}" asked live; its copilots with limits are: ${[...copilots.keys()].join(', ') || 'none'}`);
  return found;
}

function judgeOf(judges: Map<string, Endpoint>, name: string | undefined): Endpoint {
  const names = [...judges.keys()];
  if (names.length === 1 && names[0] === '') {
    if (name) throw new Error(`the run has one judge (no panel): drop --judge ${name}`);
    return judges.get('')!;
  }
  const found = name !== undefined ? judges.get(name) : undefined;
  if (!found) throw new Error(`${name === undefined ? 'the run judges with a panel: say which member with --judge NAME' : `the run has no judge "${name}"`}; its judges are: ${names.join(', ')}`);
  return found;
}

/** Apply a tune: the limits are kept in the controls (carried across continue-as-new) and reach the limiters at once. */
function tune(control: RunControl, request: TuneRequest): RunControl {
  const changes = tuneChanges(control, request, () => true);
  const lanes = attached.get(control)!;
  control.limits ??= {};
  for (const { endpoint, limit, to } of changes) control.limits[endpoint.key] = { ...control.limits[endpoint.key], [limit]: to };
  for (const endpoint of new Set(changes.map((c) => c.endpoint))) applyLimits(lanes, endpoint.key, limitsOf(control, endpoint.key, endpoint.configured));
  const limits = changes.map(({ endpoint, limit, from, to }) => ({ endpoint: endpoint.label, limit, from, to }));
  control.history.push({ action: 'tune', reason: request.reason || 'tuned by judgeflow tune', by: 'user', at: new Date().toISOString(), limits });
  log.info('run tuned', { limits });
  return control;
}

/** A replacement config may change only endpoint settings (core/configChange.ts); the CLI checks first, the run again. */
function checkReplacement(control: RunControl, config: BenchmarkRunInput['config']): void {
  const lanes = attached.get(control);
  if (!lanes) throw new Error('the run is still preparing (storing its snapshot and rubric); resume it without --config, then pause it once it collects');
  const { refused } = compareRunConfigs(lanes.config, config);
  if (refused.length) throw new Error(`resume --config may change only how endpoints are reached, limited and priced; it would change ${refused.join(', ')}`);
}

/**
 * resume --config: the stored run record's config is replaced first (activities read it), then the workflow's own
 * (continue-as-new carries it); each changed endpoint's limiter takes its new limits (a limit the new config changes
 * replaces what tune set) and its breaker starts afresh, as do all of them when failFast changed.
 */
async function replaceConfig(control: RunControl, config: BenchmarkRunInput['config']): Promise<void> {
  const lanes = attached.get(control)!;
  const { changed, endpoints } = compareRunConfigs(lanes.config, config);
  if (!changed.length) return;
  const before = endpointsOf(lanes);
  await replaceRunConfig({ runId: lanes.runId, config });
  Object.assign(lanes.config, config);
  const after = endpointsOf(lanes);
  for (const key of endpoints) {
    const [was, now] = [before, after].map((e) => [...e.copilots.values(), ...e.judges.values()].find((x) => x.key === key));
    if (!now) continue;
    const tuned = control.limits?.[key];
    if (tuned) for (const limit of LIMIT_NAMES) if (was?.configured[limit] !== now.configured[limit]) delete tuned[limit];
    applyLimits(lanes, key, limitsOf(control, key, now.configured));
  }
  const failFast = failFastFrom(config.failFast as Partial<FailFast> | false | undefined);
  for (const [key, breaker] of lanes.breakers) if (changed.includes('failFast') || endpoints.includes(key)) breaker.reset(failFast);
  if (changed.includes('budget')) control.budget = config.budget ? { ...(config.budget as Budget) } : undefined;
  control.history.push({ action: 'config', reason: `config replaced: ${changed.join(', ')}`, by: 'user', at: new Date().toISOString(), settings: changed });
  log.info('run config replaced', { changed });
}
