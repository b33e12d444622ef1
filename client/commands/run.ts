import { openInBrowser } from '../reportPointer';
import type { Command } from '../args';
import { printFailures } from '../failureSummary';
import { requireString } from '../args';
import { loadRunConfig } from '../config';
import { startBenchmark } from '../startRun';
import { parsePriorityFlag } from '../runPriority';
import { ensureChromium } from '../chromium';
import { describeDryRun, dryRunPlan } from '../dryRun';
import { progressMode } from '../progress';
import { InputError } from '../../core/model/inputError';
import { findSameRun, runIdentity, type SameRun } from '../runIdentity';
import { ensureLocalServer } from '../temporalServer';
import { withClient } from '../runWorkflow';
import { taskQueue } from '../connection';
import { openExistingStore, openStoreMigrating, storeExists, storeTarget } from '../../stores';

export const runCommand: Command = {
  name: 'run',
  summary: 'start a benchmark run from a config file and wait for its report (the same command again continues it)',
  usage:
    'judgeflow run --config FILE [--dry-run] [--detach] [--new [--reuse-judgments]] [--priority 1-5] [--json] [--progress auto|bars|lines]\n\n' +
    '  A run is identified by its config (without output paths), its snapshot and its rubric version. Run the same\n' +
    '  command again after a crash, Ctrl-C or a closed laptop: it attaches to the open run (or reports the finished one)\n' +
    '  instead of asking everything again.\n' +
    '  --new                a fresh run even though one with this config exists (new samples of every copilot and judge)\n' +
    '  --reuse-judgments    with --new: answer byte-identical judge requests from the results store (no call, counted in the cost table)\n' +
    "  --priority N         its place on a shared cluster: 1 first (CI gates) … 5 last (big sweeps); default the config's priority:, else 3\n" +
    '  --detach             start (or find) the run and print its id; a worker must run it (judgeflow worker)',
  options: {
    config: { type: 'string', short: 'c' },
    'dry-run': { type: 'boolean' },
    detach: { type: 'boolean' },
    new: { type: 'boolean' },
    'reuse-judgments': { type: 'boolean' },
    json: { type: 'boolean' },
    progress: { type: 'string' },
    priority: { type: 'string' },
  },
  async run({ values }) {
    const config = loadRunConfig(requireString(values, 'config', this.usage));
    const asJson = Boolean(values.json);
    const progress = progressMode(values.progress, asJson);
    const priority = parsePriorityFlag(values.priority);
    if (values['reuse-judgments'] && !values.new)
      throw new InputError(
        `--reuse-judgments goes with --new (a run with this config that exists already is continued or reported, not asked again)\nUsage: ${this.usage}`,
      );
    if (values['dry-run']) {
      const plan = dryRunPlan(config);
      console.log(values.json ? JSON.stringify({ dryRun: true, ...plan }) : describeDryRun(plan));
      return 0;
    }
    const print = (line: string) => (asJson ? console.error(line) : console.log(line));
    const detach = Boolean(values.detach);
    const identity = runIdentity(config);
    // `run` migrates an older store, saying which migrations it applied (read-only commands never do); a new one is
    // created by the worker.
    if (await storeExists(storeTarget())) await openStoreMigrating(print);
    const same = values.new ? null : await sameRun(identity.key, print);
    if (same?.state === 'completed') {
      const { run } = same;
      print(
        `Run ${run.runId} with this config, snapshot and rubric completed at ${run.finishedAt ?? '?'}; its report is ${run.reportPath ?? '(none written)'}.\nNothing was asked again; judgeflow run --new --config … runs it afresh.`,
      );
      if (asJson) console.log(JSON.stringify({ runId: run.runId, reportPath: run.reportPath, existing: 'completed' }));
      return 0;
    }
    if (same?.state === 'failed')
      print(
        `Note: run ${same.run.runId} with this config ended without completing (${failureOf(same)}); starting a new run. judgeflow resume ${same.run.runId} would continue that one from what the results store holds instead.`,
      );
    const attachTo = same?.state === 'open' ? same.runId : undefined;
    if (attachTo) {
      print(
        `Run ${attachTo} with this config, snapshot and rubric is already open${same?.state === 'open' && same.startedAt ? ` (started ${same.startedAt})` : ''}: ${detach ? 'not starting another' : 'attaching to it'} (--new starts a fresh run).`,
      );
      if (detach) {
        if (asJson) console.log(JSON.stringify({ runId: attachTo, existing: 'open' }));
        else
          print(
            `Run ${attachTo} is open; a worker must be running (judgeflow worker). Follow it with: judgeflow status ${attachTo}`,
          );
        return 0;
      }
    }
    if (!detach && config.copilots.some((c) => c.type === 'browser')) await ensureChromium();
    const { runId, result } = await startBenchmark({
      config,
      detach,
      print,
      progress,
      runKey: identity.key,
      runId: attachTo,
      attach: Boolean(attachTo),
      reuseJudgments: Boolean(values['reuse-judgments']),
      priority,
    });
    if (!result)
      print(
        `Run ${runId} started; a worker must be running (judgeflow worker). Follow it with: judgeflow status ${runId}`,
      );
    else {
      print(`Run ${runId} completed.\nReport: ${result.reportPath}${openInBrowser(result.reportPath)}`);
      await printFailures(runId, result.progress.failures, print);
    }
    // With --json the last stdout line is the machine-readable result; everything else went to stderr.
    if (asJson) console.log(JSON.stringify(result ? { runId, reportPath: result.reportPath } : { runId }));
    return 0;
  },
};

/** The run this config already made, asked of the cluster and the results store (client/runIdentity.ts). */
async function sameRun(key: string, print: (line: string) => void): Promise<SameRun | null> {
  await ensureLocalServer({ log: print });
  // The process's shared store (stores/index.ts): never closed here, the worker this process runs next uses it.
  const store = await openExistingStore();
  const queue = await taskQueue();
  return withClient((client) => findSameRun({ key, client, taskQueue: queue, store }));
}

function failureOf(same: Extract<SameRun, { state: 'failed' }>): string {
  const summary = same.run.summary as { error?: unknown } | null;
  return typeof summary?.error === 'string' ? summary.error : same.run.status;
}
