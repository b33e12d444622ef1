import { collectActivities } from './collect';
import type { ActivityDeps } from './deps';
import { runActivities } from './run';
import { curateActivities } from './snapshotCurate';
import { generateActivities } from './snapshotGenerate';
import { refreshActivities } from './snapshotRefresh';

/** All activities of a benchmark run, bound to one results store. Plain async functions with typed inputs. */
export function createActivities(deps: ActivityDeps) {
  return { ...runActivities(deps), ...collectActivities(deps), ...generateActivities(deps), ...curateActivities(deps), ...refreshActivities(deps) };
}

export type RunActivities = ReturnType<typeof createActivities>;
export type { ActivityDeps };
