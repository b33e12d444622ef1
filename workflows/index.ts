// Every workflow the worker registers. Keep this file to re-exports: it is the bundle's entry point. The messages the
// client sends them are in contract/control.ts (contract/ after the layout change), not here.
export { benchmarkRun } from './benchmarkRun';
export { snapshotGenerate } from './snapshotGenerate';
export { snapshotCurate } from './snapshotCurate';
export { refreshSnapshot } from './refreshSnapshot';
export { studyWorkflow } from './study';
