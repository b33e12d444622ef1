#!/usr/bin/env node
// judgeflow is written in TypeScript; tsx compiles it on the fly so there is no build step to forget.
require('tsx/cjs');
const { main } = require('../client/cli.ts');
main(process.argv.slice(2)).then((code) => process.exit(code));
