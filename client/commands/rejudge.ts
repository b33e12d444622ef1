import { InputError } from '../../core/model/inputError';
import { printFailures } from '../failureSummary';
import { optionalString, type Command } from '../args';
import { planRejudge, type RejudgePlan } from '../rejudge';
import { openExistingStore, storeLocation } from '../../stores';
import { startBenchmark } from '../startRun';
import { progressMode } from '../progress';

export const rejudgeCommand: Command = {
  name: 'rejudge',
  summary: "judge a finished run's stored responses again (new rubric or judge) as a new run; zero copilot calls",
  usage:
    'judgeflow rejudge RUN_ID [--rubric DIR] [--judge-model M] [--judge-url URL] [--judge-key-env VAR] [--samples K] [--force | --reuse-answers] [--grounding [--grounding-rubric DIR]] [--dry-run] [--detach] [--json] [--progress auto|bars|lines]',
  options: {
    rubric: { type: 'string' },
    'judge-model': { type: 'string' },
    'judge-url': { type: 'string' },
    'judge-key-env': { type: 'string' },
    samples: { type: 'string' },
    force: { type: 'boolean' },
    'reuse-answers': { type: 'boolean' },
    grounding: { type: 'boolean' },
    'grounding-rubric': { type: 'string' },
    detach: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
    progress: { type: 'string' },
  },
  async run({ values, positionals }) {
    const sourceRunId = positionals[0];
    if (!sourceRunId || positionals.length > 1)
      throw new InputError(`expected exactly one RUN_ID\nUsage: ${this.usage}`);
    if (values.force && values['reuse-answers'])
      throw new InputError('--force and --reuse-answers contradict each other; pick one');
    const samples = values.samples === undefined ? undefined : Number(values.samples);
    if (samples !== undefined && !(Number.isInteger(samples) && samples >= 1 && samples <= 50))
      throw new InputError(`--samples must be a whole number from 1 to 50, got "${values.samples}"`);
    const store = await openExistingStore();
    if (!store)
      throw new InputError(
        `there is no results store at ${storeLocation()}; set JUDGEFLOW_HOME to where run ${sourceRunId} was stored`,
      );
    const plan = await planRejudge(store, {
      sourceRunId,
      rubricDir: optionalString(values.rubric),
      judgeModel: optionalString(values['judge-model']),
      judgeUrl: optionalString(values['judge-url']),
      judgeKeyEnv: optionalString(values['judge-key-env']),
      samples,
      force: Boolean(values.force),
      reuseAnswers: Boolean(values['reuse-answers']),
      grounding: Boolean(values.grounding),
      groundingRubricDir: optionalString(values['grounding-rubric']),
    });
    const asJson = Boolean(values.json);
    const print = (line: string) => (asJson ? console.error(line) : console.log(line));
    print(
      values.grounding
        ? `${describeRejudge(sourceRunId, plan).replace(/;[^;]*$/, ';')} only the grounding checks are asked afresh; every other verdict comes from the answers already stored.`
        : describeRejudge(sourceRunId, plan),
    );
    if (values['dry-run']) {
      if (asJson)
        console.log(
          JSON.stringify({
            dryRun: true,
            sourceRunId,
            rubricVersion: plan.rubricVersion,
            rubricChange: plan.rubricChange,
            judgeChanged: plan.judgeChanged,
            reuseJudgments: plan.reuseJudgments,
          }),
        );
      return 0;
    }
    const { runId, result } = await startBenchmark({
      config: plan.config,
      sourceRunId,
      reuseJudgments: plan.reuseJudgments,
      detach: Boolean(values.detach),
      print,
      progress: progressMode(values.progress, asJson),
    });
    const summary = {
      runId,
      sourceRunId,
      rubricVersion: plan.rubricVersion,
      rubricChange: plan.rubricChange,
      reuseJudgments: plan.reuseJudgments,
      ...(result ? { reportPath: result.reportPath } : {}),
    };
    if (result)
      print(
        `Run ${runId} (re-judge of ${sourceRunId}) completed.\nReport: ${result.reportPath}\nCompare: judgeflow compare ${sourceRunId} ${runId}`,
      );
    if (result) await printFailures(runId, result.progress.failures, print);
    if (asJson) console.log(JSON.stringify(summary));
    else if (!result)
      console.log(
        `Run ${runId} (re-judge of ${sourceRunId}) started; a worker must be running (judgeflow worker). Follow it with: judgeflow status ${runId}`,
      );
    return 0;
  },
};

/** What the re-judge changes and what it will cost in judge calls, before it starts. */
export function describeRejudge(sourceRunId: string, plan: RejudgePlan): string {
  const rubric = {
    none: ' (unchanged)',
    'aggregate-only':
      ' (only what aggregates changed, e.g. weights: the judge requests are the same, so the stored verdicts are re-scored with no judge call)',
    'judge-facing': ' (what the judge sees changed)',
  }[plan.rubricChange];
  const judge = `judge ${plan.source.judge.model} → ${plan.config.judge?.model ?? plan.source.judge.model}${plan.judgeChanged ? '' : ' (unchanged)'}`;
  const cost = plan.reuseJudgments
    ? `answers to identical judge requests are reused from the store${plan.judgeChanged ? '; the new judge is asked for the rest' : ': 0 judge calls unless samples were added'} (--force asks again).`
    : `every stored response is judged afresh (paid judge calls)${plan.rubricChange === 'judge-facing' ? '; --reuse-answers reuses answers to requests that did not change' : ''}.`;
  return `Re-judging run ${sourceRunId}: rubric ${plan.source.rubricVersion} → ${plan.rubricVersion}${rubric}, ${judge}; ${cost}`;
}
