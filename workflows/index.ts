// Every workflow the worker registers. Keep this file to re-exports: it is the bundle's entry point.
export { benchmarkRun, progressQuery } from './benchmarkRun';
export { snapshotGenerate } from './snapshotGenerate';
export { stageProgressQuery } from './stageProgress';
export { snapshotCurate } from './snapshotCurate';
export { refreshSnapshot } from './refreshSnapshot';
export { studyWorkflow } from './study';
export { pauseUpdate, resumeUpdate } from './control';
