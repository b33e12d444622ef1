import { collectActivities } from './collect';
import type { ActivityDeps } from './deps';
import { planActivities } from './plan';
import { runActivities } from './run';
import { curateActivities } from './curate';
import { generateActivities } from './generate';
import { alertActivities } from './scheduleAlert';
import { spendActivities } from './spend';
import { runConfigActivities } from './runConfig';
import { refreshActivities } from './snapshotRefresh';
import { worldRefreshActivities } from './worldRefresh';
import { studyActivities } from './studyAnswers';
import { outageTolerantStore } from './storeOutage';

/** A benchmark run's activities (prepare, collect, plan, judge, report), bound to one results store. */
export function benchmarkActivities(deps: ActivityDeps) {
  return {
    ...runActivities(deps),
    ...collectActivities(deps),
    ...planActivities(deps),
    ...spendActivities(deps),
    ...runConfigActivities(deps),
  };
}

/** The snapshot workflows' activities: generation, curation, the scheduled refresh's bookkeeping and its alert. */
export function snapshotActivities(deps: ActivityDeps) {
  return {
    ...generateActivities(deps),
    ...curateActivities(deps),
    ...refreshActivities(deps),
    ...worldRefreshActivities(deps),
    ...alertActivities(deps),
  };
}

/**
 * Every activity a worker registers. Plain async functions with typed inputs; their names are in recorded histories.
 * They reach the store through outageTolerantStore: an unreachable database is waited for, not charged to a copilot or judge.
 */
export function createActivities(given: ActivityDeps) {
  const deps = { ...given, store: outageTolerantStore(given.store) };
  return { ...benchmarkActivities(deps), ...snapshotActivities(deps), ...studyActivities(deps) };
}

export type BenchmarkActivities = ReturnType<typeof benchmarkActivities>;
export type SnapshotActivities = ReturnType<typeof snapshotActivities>;
/** The study workflow's activities (record an answer, close, remind). */
export type StudyActivities = ReturnType<typeof studyActivities>;
export type { ActivityDeps };
