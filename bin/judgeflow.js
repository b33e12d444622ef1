#!/usr/bin/env node
// judgeflow is written in TypeScript. It runs compiled from dist/ (built by `npm install`/`npm ci`, `npm test`,
// `npm run build`) when dist/ matches the sources; otherwise, or with JUDGEFLOW_DEV=1, tsx compiles the sources on the fly,
// so an edit takes effect at once (seconds of start-up instead of a fraction of one).
const path = require('node:path');
const { isBuilt } = require('../scripts/build.js');

const root = path.resolve(__dirname, '..');
let cli;
if (!process.env.JUDGEFLOW_DEV && isBuilt(root)) {
  if (process.env.JUDGEFLOW_DEBUG) process.setSourceMapsEnabled(true); // stack traces name the .ts lines
  cli = require('../dist/client/cli.js');
} else {
  require('tsx/cjs');
  cli = require('../client/cli.ts');
}
cli.main(process.argv.slice(2)).then((code) => process.exit(code));
