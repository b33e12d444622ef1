import { log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { compareRunConfigs } from '../contract/configChange';
import { failFastFrom, type Breaker } from './breaker';
import type { Limiter, LimiterOptions } from './limits/limiter';
import { LIMIT_NAMES, tuneUpdate } from '../contract/control';
import type { LimitName, RunControl, TuneRequest, WorkflowRunConfig } from '../contract/run';
// Re-exported: code written before contract/ existed imports the tune types and message from here.
export type { LimitChange, LimitName, TuneRequest, TuneTarget } from '../contract/run';
export { LIMIT_NAMES, tuneUpdate } from '../contract/control';

/**
 * Retuning a running run: `judgeflow tune` (new limits for an endpoint) and `judgeflow resume --config` (new endpoint
 * settings), both reaching the lanes' limiters and breakers at once and recorded in the run's control history
 * (workflows/runControl.ts holds pause, resume and the budget).
 */

/**
 * What the collect-and-judge stage lends the controls while it runs (workflows/collectAndJudge.ts): the workflow
 * input's config (replaced in place by resume --config, so continue-as-new carries it), and each endpoint's limiter and
 * breaker, so a tune or a new config reaches them at once. Not serialised: each history's stage attaches its own.
 */
export interface ControlledLanes {
  runId: string;
  config: WorkflowRunConfig;
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

/**
 * Where the stage running now lends its lanes to the run's controls: benchmarkRun makes it empty, collectAndJudge
 * fills it, and the update handlers and the progress query are handed it (no lanes yet: the run is still preparing).
 */
export interface LaneSlot {
  lanes?: ControlledLanes;
}

/** Calls the run's endpoints have in flight: what a paused run still finishes before it is idle. */
export function callsInFlight(slot: LaneSlot): number {
  let calls = 0;
  for (const limiter of slot.lanes?.limiters.values() ?? []) calls += limiter.callsInFlight;
  return calls;
}

/** Endpoints a Retry-After holds now, as status shows them ("copilot X: waiting 60 s (Retry-After) after HTTP 503, …"). */
export function waitingEndpoints(slot: LaneSlot): string[] {
  const out: string[] = [];
  for (const [key, limiter] of slot.lanes?.limiters ?? []) {
    const waiting = limiter.waitingFor();
    if (waiting) out.push(`${key === 'judge' ? 'the judge' : key.replace(':', ' ')}: ${waiting}`);
  }
  return out;
}

const { replaceRunConfig } = proxyActivities<BenchmarkActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/** An endpoint of the run as tune names it: its limiter key, how the history names it, and the config's limits. */
interface Endpoint {
  key: string;
  label: string;
  configured: LimiterOptions;
}

/** Every endpoint the run's lanes call: its live copilots, and its judge or each panel member. */
function endpointsOf(lanes: ControlledLanes): { copilots: Map<string, Endpoint>; judges: Map<string, Endpoint> } {
  const limits = (l: LimiterOptions): LimiterOptions => ({
    concurrency: l.concurrency,
    requestsPerMinute: l.requestsPerMinute,
    tokensPerMinute: l.tokensPerMinute,
  });
  const copilots = new Map(
    lanes.config.copilots
      .filter((c) => lanes.live.includes(c.name))
      .map((c) => [c.name, { key: `copilot:${c.name}`, label: `copilot ${c.name}`, configured: limits(c) }]),
  );
  const panel = lanes.config.judges;
  const judges = panel?.length
    ? new Map(
        panel.map((j, lane) => [
          j.name ?? String(lane + 1),
          { key: `judge:${lane}`, label: `judge ${j.name ?? lane + 1}`, configured: limits(j) },
        ]),
      )
    : new Map([['', { key: 'judge', label: 'the judge', configured: limits(lanes.config.judge!) }]]);
  return { copilots, judges };
}

/** An endpoint's limits now: the config's, with what tune set over them. */
export function limitsOf(control: RunControl, key: string, configured: LimiterOptions): LimiterOptions {
  return { ...configured, ...control.limits?.[key] };
}

/** The changes a tune request makes, validated (what is refused says what would be accepted). */
function tuneChanges(
  control: RunControl,
  slot: LaneSlot,
  request: TuneRequest,
  isOpen: () => boolean,
): Array<{ endpoint: Endpoint; limit: LimitName; from: number | null; to: number }> {
  if (!isOpen()) throw new Error('the run has finished collecting and judging; there is nothing left to tune');
  const { lanes } = slot;
  if (!lanes) throw new Error('the run is still preparing (storing its snapshot and rubric); tune it once it collects');
  const { copilots, judges } = endpointsOf(lanes);
  if (!request.endpoints?.length)
    throw new Error(
      'nothing to change: give --judge-concurrency N, or --copilot NAME (or --judge NAME) with --concurrency, --requests-per-minute or --tokens-per-minute',
    );
  return request.endpoints.flatMap((target) => {
    const endpoint = target.copilot !== undefined ? copilotOf(copilots, target.copilot) : judgeOf(judges, target.judge);
    const limits = LIMIT_NAMES.filter((limit) => target[limit] !== undefined);
    if (!limits.length)
      throw new Error(
        `nothing to change for ${endpoint.label}: give --concurrency, --requests-per-minute or --tokens-per-minute`,
      );
    const now = limitsOf(control, endpoint.key, endpoint.configured);
    return limits.map((limit) => {
      const to = target[limit]!;
      if (!Number.isInteger(to) || to < 1)
        throw new Error(`${limit} of ${endpoint.label} must be a positive whole number, got ${to}`);
      return { endpoint, limit, from: now[limit] ?? null, to };
    });
  });
}

function copilotOf(copilots: Map<string, Endpoint>, name: string): Endpoint {
  const found = copilots.get(name);
  if (!found)
    throw new Error(
      `the run has no copilot "${name}" asked live; its copilots with limits are: ${[...copilots.keys()].join(', ') || 'none'}`,
    );
  return found;
}

function judgeOf(judges: Map<string, Endpoint>, name: string | undefined): Endpoint {
  const names = [...judges.keys()];
  if (names.length === 1 && names[0] === '') {
    if (name) throw new Error(`the run has one judge (no panel): drop --judge ${name}`);
    return judges.get('')!;
  }
  const found = name !== undefined ? judges.get(name) : undefined;
  if (!found)
    throw new Error(
      `${name === undefined ? 'the run judges with a panel: say which member with --judge NAME' : `the run has no judge "${name}"`}; its judges are: ${names.join(', ')}`,
    );
  return found;
}

/** Apply a tune: the limits are kept in the controls (carried across continue-as-new) and reach the limiters at once. */
/** The `tune` Update: validated against the run's endpoints, applied, answered with the run's controls. */
export function handleTune(control: RunControl, slot: LaneSlot, isOpen: () => boolean): void {
  setHandler(tuneUpdate, (request) => tune(control, slot, request), {
    validator: (request: TuneRequest) => void tuneChanges(control, slot, request, isOpen),
  });
}

function tune(control: RunControl, slot: LaneSlot, request: TuneRequest): RunControl {
  const changes = tuneChanges(control, slot, request, () => true);
  const lanes = slot.lanes!;
  control.limits ??= {};
  for (const { endpoint, limit, to } of changes)
    control.limits[endpoint.key] = { ...control.limits[endpoint.key], [limit]: to };
  for (const endpoint of new Set(changes.map((c) => c.endpoint)))
    applyLimits(lanes, endpoint.key, limitsOf(control, endpoint.key, endpoint.configured));
  const limits = changes.map(({ endpoint, limit, from, to }) => ({ endpoint: endpoint.label, limit, from, to }));
  control.history.push({
    action: 'tune',
    reason: request.reason || 'tuned by judgeflow tune',
    by: 'user',
    at: new Date().toISOString(),
    limits,
  });
  log.info('run tuned', { limits });
  return control;
}

/** A replacement config may change only endpoint settings (contract/configChange.ts); the CLI checks first, the run again. */
export function checkReplacement(slot: LaneSlot, config: WorkflowRunConfig): void {
  const { lanes } = slot;
  if (!lanes)
    throw new Error(
      'the run is still preparing (storing its snapshot and rubric); resume it without --config, then pause it once it collects',
    );
  const { refused } = compareRunConfigs(lanes.config, config);
  if (refused.length)
    throw new Error(
      `resume --config may change only how endpoints are reached, limited and priced; it would change ${refused.join(', ')}`,
    );
}

/**
 * resume --config: the stored run record's config is replaced first (activities read it), then the workflow's own
 * (continue-as-new carries it); each changed endpoint's limiter takes its new limits (a limit the new config changes
 * replaces what tune set) and its breaker starts afresh, as do all of them when failFast changed.
 */
export async function replaceConfig(control: RunControl, slot: LaneSlot, config: WorkflowRunConfig): Promise<void> {
  const lanes = slot.lanes!;
  const { changed, endpoints } = compareRunConfigs(lanes.config, config);
  if (!changed.length) return;
  const before = endpointsOf(lanes);
  await replaceRunConfig({ runId: lanes.runId, config });
  Object.assign(lanes.config, config);
  const after = endpointsOf(lanes);
  for (const key of endpoints) {
    const [was, now] = [before, after].map((e) =>
      [...e.copilots.values(), ...e.judges.values()].find((x) => x.key === key),
    );
    if (!now) continue;
    const tuned = control.limits?.[key];
    if (tuned)
      for (const limit of LIMIT_NAMES) if (was?.configured[limit] !== now.configured[limit]) delete tuned[limit];
    applyLimits(lanes, key, limitsOf(control, key, now.configured));
  }
  const failFast = failFastFrom(config.failFast);
  for (const [key, breaker] of lanes.breakers)
    if (changed.includes('failFast') || endpoints.includes(key)) breaker.reset(failFast);
  if (changed.includes('budget')) control.budget = config.budget ? { ...config.budget } : undefined;
  control.history.push({
    action: 'config',
    reason: `config replaced: ${changed.join(', ')}`,
    by: 'user',
    at: new Date().toISOString(),
    settings: changed,
  });
  log.info('run config replaced', { changed });
}
