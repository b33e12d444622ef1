#!/usr/bin/env node
// judgeflow is written in TypeScript. It runs compiled from dist/ (built by `npm install`/`npm ci`, `npm test`,
// `npm run build`) when dist/ matches the sources; otherwise, or with JUDGEFLOW_DEV=1, tsx compiles the sources on the fly,
// so an edit takes effect at once (seconds of start-up instead of a fraction of one).
const path = require('node:path');
const { isBuilt } = require('../scripts/build.js');

const root = path.resolve(__dirname, '..');
const built = !process.env.JUDGEFLOW_DEV && isBuilt(root);
if (built) {
  if (process.env.JUDGEFLOW_DEBUG) process.setSourceMapsEnabled(true); // stack traces name the .ts lines
} else {
  require('tsx/cjs');
}
const argv = process.argv.slice(2);
// `judgeflow worker`/`dev` run in a process started with the worker's heap and malloc settings (worker/workerProcess.ts).
const { relaunchAsWorkerProcess } = require(built ? '../dist/worker/workerProcess.js' : '../worker/workerProcess.ts');
const exitCode =
  relaunchAsWorkerProcess(argv, __filename) ?? require(built ? '../dist/client/cli.js' : '../client/cli.ts').main(argv);
exitCode.then((code) => process.exit(code));
