#!/usr/bin/env node
// Compiles judgeflow's TypeScript once into dist/, so a command starts in a fraction of a second instead of compiling
// on every start. Plain JavaScript on purpose: bin/judgeflow.js asks `isBuilt` on every start, before any TypeScript
// can be loaded.
//
//   node scripts/build.js              build (npm run build; npm install / npm ci run it as `prepare`)
//   node scripts/build.js --if-stale   build only when dist/ does not match the sources (npm test, demo, bench)
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
/** The folders compiled into dist/ (the layout's code folders; test/ and scripts/ run through jest and tsx). */
const SOURCE_DIRS = [
  'contract',
  'services',
  'workflows',
  'activities',
  'worker',
  'client',
  'rubrics',
  'core',
  'stores',
  'sim',
];
/** Files outside SOURCE_DIRS that change what the build produces. */
const BUILD_INPUTS = ['tsconfig.json', 'scripts/build.js'];
const STAMP = '.build-stamp.json';

/** Every .ts file under the source folders, relative to `root`, sorted. */
function sourceFiles(root) {
  const files = [];
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(child);
    }
  };
  for (const dir of SOURCE_DIRS) if (fs.existsSync(path.join(root, dir))) walk(dir);
  return files.sort();
}

/**
 * What dist/ was built from: path, size and mtime of every input. Stat only, no reading, so the check on every start
 * costs a few milliseconds; an edit, a checkout, an added or a deleted file all change it.
 */
function sourceFingerprint(root) {
  const hash = crypto.createHash('sha256');
  for (const rel of [...BUILD_INPUTS, ...sourceFiles(root)]) {
    let stat;
    try {
      stat = fs.statSync(path.join(root, rel));
    } catch {
      continue; // an optional input that is absent
    }
    hash.update(`${rel}\0${stat.size}\0${Math.trunc(stat.mtimeMs)}\n`);
  }
  return hash.digest('hex');
}

/** True when `root`/dist was built from exactly the sources now in `root`. */
function isBuilt(root = ROOT) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(root, 'dist', STAMP), 'utf8'));
  } catch {
    return false;
  }
  return stamp.fingerprint === sourceFingerprint(root);
}

/**
 * Compiled code sees its source folder as `__dirname`, so the files it reads beside itself (rubric YAML and prompts,
 * report page CSS/JS, study page) are the checkout's own: dist/ holds only JavaScript, an edited prompt needs no build,
 * and paths shown to users (`judgeflow rubric show`, prompt errors) never point into dist/.
 */
function sourceDirnamePlugin(root) {
  return {
    name: 'source-dirname',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, 'utf8');
        if (!/\b__dirname\b/.test(text)) return undefined;
        const sourceDir = path.dirname(args.path);
        const up = path
          .relative(path.join(root, 'dist', path.relative(root, sourceDir)), sourceDir)
          .split(path.sep)
          .join('/');
        return {
          contents: text.replace(/\b__dirname\b/g, `require('node:path').join(__dirname, ${JSON.stringify(up)})`),
          loader: 'ts',
        };
      });
    },
  };
}

/**
 * Compile every .ts file with esbuild (the compiler tsx uses on the fly, so dist/ runs what JUDGEFLOW_DEV=1 runs;
 * types are checked by `npm run typecheck` and `npm test`, not here) into a new folder that then replaces dist/ whole:
 * a running judgeflow that loads a module late never reads a half-written file, and nothing of a deleted source
 * survives. Takes a few seconds (most of it bundling the workflows).
 */
async function build(root = ROOT, log = (line) => console.log(line)) {
  let esbuild;
  try {
    esbuild = require(require.resolve('esbuild', { paths: [root] }));
  } catch {
    log('judgeflow build: esbuild is not installed (run npm install); commands run from source via tsx');
    return false;
  }
  const started = Date.now();
  removeAbandonedBuilds(root);
  const fingerprint = sourceFingerprint(root); // before compiling: an edit made during the build leaves dist/ stale
  const sources = sourceFiles(root);
  const next = path.join(root, `dist.new-${process.pid}`);
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: sources,
      outdir: next,
      outbase: '.',
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      tsconfig: 'tsconfig.json',
      logLevel: 'error',
      plugins: [sourceDirnamePlugin(root)],
    });
  } catch {
    fs.rmSync(next, { recursive: true, force: true });
    log('judgeflow build: esbuild failed (see above); dist/ is left as it was');
    return false;
  }
  try {
    await bundleWorkflows(root, next);
  } catch (error) {
    fs.rmSync(next, { recursive: true, force: true });
    log(`judgeflow build: bundling the workflows failed (${error.message}); dist/ is left as it was`);
    return false;
  }
  fs.writeFileSync(path.join(next, STAMP), JSON.stringify({ fingerprint, builtAt: new Date().toISOString() }) + '\n');
  const dist = path.join(root, 'dist');
  const old = path.join(root, `dist.old-${process.pid}`);
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  try {
    fs.renameSync(next, dist);
  } catch (error) {
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    fs.rmSync(next, { recursive: true, force: true }); // a build running at the same time put its dist/ there first
  }
  fs.rmSync(old, { recursive: true, force: true });
  log(
    `judgeflow build: ${sources.length} modules compiled and the workflows bundled into dist/ in ${Date.now() - started} ms`,
  );
  return true;
}

/**
 * The workflow code, bundled once here (dist/workflow-bundle.js, which a compiled worker loads) instead of by webpack in
 * every worker at start-up: that bundling takes seconds and leaves the worker's heap some 70 MB larger for its lifetime.
 */
async function bundleWorkflows(root, out) {
  const { bundleWorkflowCode } = require(require.resolve('@temporalio/worker', { paths: [root] }));
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (message) => console.error(message) };
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(out, 'workflows'), logger: quiet });
  fs.writeFileSync(path.join(out, 'workflow-bundle.js'), code);
}

/** dist.new-PID / dist.old-PID folders left by a build that was killed (its process is gone). */
function removeAbandonedBuilds(root) {
  for (const name of fs.readdirSync(root)) {
    const pid = /^dist\.(?:new|old)-(\d+)$/.exec(name)?.[1];
    if (pid && !isAlive(Number(pid))) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Builds when dist/ is missing or stale; true when dist/ is (now) current. */
async function ensureBuilt(root = ROOT, log) {
  return isBuilt(root) || build(root, log);
}

module.exports = { isBuilt, build, ensureBuilt };

if (require.main === module) {
  const ifStale = process.argv.includes('--if-stale');
  (ifStale ? ensureBuilt() : build()).then((ok) => process.exit(ok ? 0 : 1));
}
