#!/usr/bin/env node
// Compiles judgeflow once (tsc -> dist/, plus the non-TypeScript files the code reads at run time), so a command starts
// in a fraction of a second instead of compiling TypeScript on every start. Plain JavaScript on purpose: bin/judgeflow.js
// asks `isBuilt` on every start, before any TypeScript can be loaded.
//
//   node scripts/build.js              build (npm run build; npm install / npm ci run it as `prepare`)
//   node scripts/build.js --if-stale   build only when dist/ does not match the sources (npm test, demo, bench)
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
/** The folders tsconfig.build.json compiles; every other file in them (rubric YAML, prompts, page CSS/JS) is copied. */
const SOURCE_DIRS = ['workflows', 'activities', 'worker', 'client', 'rubrics', 'core', 'stores', 'sim'];
/** Files outside SOURCE_DIRS that change what the build produces. */
const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json'];
const STAMP = '.build-stamp.json';
const TSBUILDINFO = '.tsbuildinfo';

/** Every file under the source folders, relative to `root`, sorted. */
function sourceFiles(root) {
  const files = [];
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.push(child);
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

/** Output paths (relative to dist/) that a source file produces. */
function outputsOf(rel) {
  if (rel.endsWith('.d.ts')) return [];
  if (rel.endsWith('.ts')) {
    const js = rel.slice(0, -3) + '.js';
    return [js, js + '.map'];
  }
  return [rel];
}

/** Compile into dist/ (incrementally), copy the other files, drop outputs whose source is gone, then stamp. */
function build(root = ROOT, log = (line) => console.log(line)) {
  const dist = path.join(root, 'dist');
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    // An install without devDependencies: the launcher runs the sources through tsx instead.
    log('judgeflow build: typescript is not installed (npm install without dev dependencies?); commands will run from source via tsx');
    return true;
  }
  const fingerprint = sourceFingerprint(root);
  // Unstamp first: while the build runs, and if it fails, the launcher falls back to the sources.
  fs.rmSync(path.join(dist, STAMP), { force: true });
  const started = Date.now();
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) {
    log('judgeflow build: tsc failed (see above); dist/ is not used until a build succeeds');
    return false;
  }
  const files = sourceFiles(root);
  const expected = new Set([STAMP, TSBUILDINFO]);
  for (const rel of files) {
    for (const out of outputsOf(rel)) expected.add(out);
    if (!rel.endsWith('.ts')) {
      fs.mkdirSync(path.join(dist, path.dirname(rel)), { recursive: true });
      fs.copyFileSync(path.join(root, rel), path.join(dist, rel));
    }
  }
  pruneOutputs(dist, '', expected);
  fs.writeFileSync(path.join(dist, STAMP), JSON.stringify({ fingerprint, builtAt: new Date().toISOString() }) + '\n');
  log(`judgeflow build: dist/ compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

/** Removes files in dist/ that no current source produces (a renamed or deleted module must not linger). */
function pruneOutputs(dist, rel, expected) {
  for (const entry of fs.readdirSync(path.join(dist, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) {
      pruneOutputs(dist, child, expected);
      if (fs.readdirSync(path.join(dist, child)).length === 0) fs.rmdirSync(path.join(dist, child));
    } else if (!expected.has(child)) fs.rmSync(path.join(dist, child));
  }
}

/** Builds when dist/ is missing or stale; true when dist/ is (now) usable or cannot be built for want of typescript. */
function ensureBuilt(root = ROOT, log) {
  return isBuilt(root) || build(root, log);
}

module.exports = { isBuilt, build, ensureBuilt, sourceFingerprint };

if (require.main === module) {
  const ifStale = process.argv.includes('--if-stale');
  const ok = ifStale ? ensureBuilt() : build();
  process.exit(ok ? 0 : 1);
}
