import type { Command } from '../args';
import { printFailures } from '../failureSummary';
import { requireString } from '../args';
import { loadRunConfig } from '../config';
import { startBenchmark } from '../startRun';
import { ensureChromium } from '../chromium';
import { describeDryRun, dryRunPlan } from '../dryRun';
import { progressMode } from '../progress';

export const runCommand: Command = {
  name: 'run',
  summary: 'start a benchmark run from a config file and wait for its report',
  usage: 'judgeflow run --config FILE [--dry-run] [--detach] [--json] [--progress auto|bars|lines]',
  options: { config: { type: 'string', short: 'c' }, 'dry-run': { type: 'boolean' }, detach: { type: 'boolean' }, json: { type: 'boolean' }, progress: { type: 'string' } },
  async run({ values }) {
    const config = loadRunConfig(requireString(values, 'config', this.usage));
    const asJson = Boolean(values.json);
    const progress = progressMode(values.progress, asJson);
    if (values['dry-run']) {
      const plan = dryRunPlan(config);
      console.log(values.json ? JSON.stringify({ dryRun: true, ...plan }) : describeDryRun(plan));
      return 0;
    }
    if (!values.detach && config.copilots.some((c) => c.type === 'browser')) await ensureChromium();
    const print = (line: string) => (asJson ? console.error(line) : console.log(line));
    const { runId, result } = await startBenchmark({ config, detach: Boolean(values.detach), print, progress });
    if (!result) print(`Run ${runId} started; a worker must be running (judgeflow worker). Follow it with: judgeflow status ${runId}`);
    else {
      print(`Run ${runId} completed.\nReport: ${result.reportPath}`);
      await printFailures(runId, result.progress.failures, print);
    }
    // With --json the last stdout line is the machine-readable result; everything else went to stderr.
    if (asJson) console.log(JSON.stringify(result ? { runId, reportPath: result.reportPath } : { runId }));
    return 0;
  },
};
