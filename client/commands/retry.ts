import { openInBrowser } from '../reportPointer';
import { InputError } from '../../core/model/inputError';
import { optionalString, type Command } from '../args';
import { openExistingStore, storeLocation } from '../../stores';
import { planRetry } from '../retry';
import { runWorkflow } from '../runWorkflow';
import { benchmarkRun } from '../../workflows';
import { progressMode, progressView } from '../progress';
import { watch } from '../startRun';
import { printFailures } from '../failureSummary';

export const retryCommand: Command = {
  name: 'retry',
  summary: 'ask again the items a finished run recorded as failed (same run; nothing that succeeded is asked again)',
  usage:
    'judgeflow retry RUN_ID --failed [--copilot NAME] [--kind KIND] [--detach] [--json] [--progress auto|bars|lines]',
  options: {
    failed: { type: 'boolean' },
    copilot: { type: 'string' },
    kind: { type: 'string' },
    detach: { type: 'boolean' },
    json: { type: 'boolean' },
    progress: { type: 'string' },
  },
  async run({ values, positionals }) {
    const runId = positionals[0];
    if (!runId || positionals.length > 1) throw new InputError(`expected exactly one RUN_ID\nUsage: ${this.usage}`);
    if (!values.failed)
      throw new InputError(`say what to retry: --failed (the items the run recorded as failed)\nUsage: ${this.usage}`);
    const store = await openExistingStore();
    if (!store)
      throw new InputError(
        `there is no results store at ${storeLocation()}; set JUDGEFLOW_HOME or JUDGEFLOW_STORE to where run ${runId} was stored`,
      );
    const plan = await planRetry(store, runId, {
      copilot: optionalString(values.copilot),
      kind: optionalString(values.kind),
    });
    const asJson = Boolean(values.json);
    const print = (line: string) => (asJson ? console.error(line) : console.log(line));
    const { responses, judgments } = plan.reopened;
    if (!responses.length && !judgments.length) {
      if (asJson) console.log(JSON.stringify({ runId, responses: 0, judgments: 0 }));
      else console.log(`Run ${runId} has no recorded failures matching that; nothing to retry.`);
      return 0;
    }
    print(
      `Retrying run ${runId}: ${responses.length} failed answer(s) asked again, ${judgments.length} judgment(s) judged again.`,
    );
    const result = await runWorkflow({
      workflow: benchmarkRun,
      workflowId: plan.workflowId,
      input: plan.input,
      detach: Boolean(values.detach),
      print,
      wait: (handle) => watch(handle, progressView(progressMode(values.progress, asJson), print)),
    });
    if (result) print(`Run ${runId} completed again.\nReport: ${result.reportPath}${openInBrowser(result.reportPath)}`);
    if (result) await printFailures(runId, result.progress.failures, print);
    if (asJson)
      console.log(
        JSON.stringify({
          runId,
          workflowId: plan.workflowId,
          responses: responses.length,
          judgments: judgments.length,
          ...(result ? { reportPath: result.reportPath } : {}),
        }),
      );
    else if (!result)
      console.log(
        `Retry of run ${runId} started as ${plan.workflowId}; a worker must be running (judgeflow worker). Follow it with: judgeflow status ${runId}`,
      );
    return 0;
  },
};
