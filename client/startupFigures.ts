import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isServerUp, temporalTarget } from './temporalServer';

/** The checkout (compiled code sees its source folder as __dirname: see scripts/build.js). */
const PACKAGE_ROOT = path.resolve(__dirname, '..');
const CLI_PATH = path.join(PACKAGE_ROOT, 'bin', 'judgeflow.js');

/** Whether dist/ matches the sources, so `node bin/judgeflow.js` (a bench's worker too) runs compiled, not through tsx. */
export function runsCompiled(): boolean {
  const { isBuilt } = require(path.join(PACKAGE_ROOT, 'scripts', 'build.js')) as { isBuilt: (root: string) => boolean };
  return isBuilt(PACKAGE_ROOT);
}

/** Linux reports CPU times in clock ticks; 100 per second on every platform Node supports there. */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, ms) of this process's exited children so far, from /proc; undefined off Linux. */
function childrenCpuMs(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND; // cutime, cstime (fields 16, 17)
  } catch {
    return undefined;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median wall and CPU time of `runs` starts of `node bin/judgeflow.js ...args`. */
function timeCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  runs: number,
): { wallMs: number; cpuMs?: number; exit: number | null } {
  const walls: number[] = [];
  const cpus: number[] = [];
  let exit: number | null = null;
  for (let i = 0; i < runs; i++) {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const child = spawnSync(process.execPath, [CLI_PATH, ...args], { env, cwd, stdio: 'ignore' });
    walls.push(performance.now() - started);
    const cpuAfter = childrenCpuMs();
    if (cpuBefore !== undefined && cpuAfter !== undefined) cpus.push(cpuAfter - cpuBefore);
    exit = child.status;
  }
  return { wallMs: median(walls), cpuMs: cpus.length ? median(cpus) : undefined, exit };
}

/**
 * How long short commands take from `node bin/judgeflow.js` to exit: compiled (dist/) and from source through tsx
 * (JUDGEFLOW_DEV=1), median of `runs` starts each, in an empty JUDGEFLOW_HOME. CPU time is printed beside wall time
 * because on a busy machine the wall time mostly measures the other processes.
 */
export async function printStartupFigures(log: (line: string) => void, options: { runs?: number } = {}): Promise<void> {
  const runs = options.runs ?? 5;
  const built = runsCompiled();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'judgeflow-startup-'));
  const env: NodeJS.ProcessEnv = { ...process.env, JUDGEFLOW_HOME: home };
  delete env.JUDGEFLOW_DEV;
  const commands: string[][] = [['--help'], ['status', '--help'], ['status'], ['runs']];
  const target = temporalTarget(env);
  const serverUp = await isServerUp(target.address);
  if (serverUp) commands.push(['status', 'startup-bench-no-such-run']);
  const modes: Array<[label: string, env: NodeJS.ProcessEnv]> = [];
  if (built) modes.push(['compiled (dist/)', env]);
  modes.push(['tsx (JUDGEFLOW_DEV=1)', { ...env, JUDGEFLOW_DEV: '1' }]);
  log(
    `\nStart-up: node bin/judgeflow.js <command> to exit, median of ${runs} runs, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`,
  );
  if (!built) log(`dist/ is missing or out of date: no compiled figures (npm run build, in ${PACKAGE_ROOT})`);
  if (!serverUp)
    log(`no Temporal server at ${target.address}: "status RUN_ID" is left out (judgeflow server starts one)`);
  const width = Math.max(...commands.map((c) => c.join(' ').length));
  log(`  ${'command'.padEnd(width)}  ${modes.map(([label]) => label.padStart(28)).join('')}`);
  for (const args of commands) {
    const cells = modes.map(([, modeEnv]) => {
      const t = timeCommand(args, modeEnv, home, runs);
      return `${t.wallMs.toFixed(0)} ms${t.cpuMs === undefined ? '' : ` (cpu ${t.cpuMs.toFixed(0)})`} exit ${t.exit}`.padStart(
        28,
      );
    });
    log(`  ${args.join(' ').padEnd(width)}  ${cells.join('')}`);
  }
  fs.rmSync(home, { recursive: true, force: true });
}
