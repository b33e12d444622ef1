import { openInBrowser } from '../reportPointer';
import type { Client } from '@temporalio/client';
import type { Command } from '../args';
import { InputError } from '../../core/model/inputError';
import type { RunRecord } from '../../core/model/store';
import { pinnedVersion, startedBeforeVersioning, workflowBuild } from '../../worker/versioning';
import { loadRunConfig, type RunConfig } from '../config';
import { optionalPositive, optionalString } from '../args';
import { compareRunConfigs } from '../../contract/configChange';
import { runConfigActivities } from '../../activities/runConfig';
import { withStoredConfig, type StoredRunConfig } from '../../activities/deps';
import type { ResultsStore } from '../../core/model/store';
import { requireExistingStore } from '../existingStore';
import { progressMode } from '../progress';
import { withClient } from '../runWorkflow';
import { startBenchmark } from '../startRun';
import { runKeyOf } from '../runIdentity';
import { temporalClient } from '../temporalSdk';
import { progressQuery, resumeUpdate } from '../../contract/control';
import type { ResumeRequest } from '../../contract/run';
import { rootCause } from '../../contract/errors';
import { ensureLocalServer } from '../temporalServer';
import { printFailures } from '../failureSummary';

/**
 * Continue a run on this checkout's build. Runs are pinned to the build that started them (worker/versioning.ts); once
 * no worker of that build is left — after an upgrade — the run waits. `resume` ends that execution and starts the run
 * afresh on the current build with `resumeFromStore`: it asks only what the results store does not hold yet, so
 * nothing collected or judged is asked again. A run whose workflow failed or was terminated resumes the same way.
 */
export const resumeCommand: Command = {
  name: 'resume',
  summary:
    'continue a paused run (with new endpoint settings: --config FILE), or a run left on an older build (or failed, or terminated) on this build from what the results store holds',
  usage:
    'judgeflow resume RUN_ID [--budget-usd N] [--budget-tokens N] [--config FILE] [--detach] [--force] [--json]\n\n' +
    '  --budget-usd N, --budget-tokens N   raise the budget a run paused at\n' +
    "  --config FILE                       take new endpoint settings from FILE (loaded as judgeflow run loads it): copilots' and judges' endpoints,\n" +
    '                                      keys, timeouts, retry, concurrency and rates, pricing, budget, failFast; never the queries, rubric,\n' +
    '                                      protocol and its options, samples, or the set and order of copilots and judges (see docs/cost-and-control.md)',
  options: {
    config: { type: 'string', short: 'c' },
    'budget-usd': { type: 'string' },
    'budget-tokens': { type: 'string' },
    detach: { type: 'boolean' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
    progress: { type: 'string' },
  },
  async run({ positionals, values }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    const store = await requireExistingStore();
    const run = await store.getRun(runId);
    if (!run) throw new InputError(`run ${runId} is not in the results store ${store.location} (see judgeflow runs)`);
    if (run.status === 'completed') throw new InputError(completedRefusal(runId));
    await ensureLocalServer({ log: console.log });
    const build = await workflowBuild();
    const asJson = Boolean(values.json);
    const print = (line: string) => (asJson ? console.error(line) : console.log(line));
    const config = replacementConfig(run, optionalString(values.config));
    const request: ResumeRequest = { ...budgetRaise(values), ...(config ? { config } : {}) };
    const moved = await withClient((client) =>
      endOldExecution(client, runId, build.buildId, Boolean(values.force), print, request),
    );
    if (moved === 'running-here') return 0;
    // Completed between the store read above and the look at its workflow (a pause that held nothing back): a new
    // execution would run it twice and store a config no call used.
    if (moved === 'completed' || (await store.getRun(runId))?.status === 'completed')
      throw new InputError(completedRefusal(runId));
    // Started afresh from the store: its activities read the stored config, so that is replaced first.
    if (config) await replaceStoredConfig(store, runId, config);
    const { result } = await startBenchmark({
      config: config ?? storedConfig(run),
      runId,
      resumeFromStore: true,
      sourceRunId: run.sourceRunId ?? undefined,
      runKey: runKeyOf(run) ?? undefined,
      detach: Boolean(values.detach),
      print,
      progress: progressMode(values.progress, asJson),
    });
    if (!result)
      print(
        `Run ${runId} resumed on build ${build.buildId}; a worker of this build must be running (judgeflow worker).`,
      );
    else {
      print(
        `Run ${runId} completed on build ${build.buildId}.\nReport: ${result.reportPath}${openInBrowser(result.reportPath)}`,
      );
      await printFailures(runId, result.progress.failures, print);
    }
    if (asJson)
      console.log(
        JSON.stringify({ runId, buildId: build.buildId, ...(result ? { reportPath: result.reportPath } : {}) }),
      );
    return 0;
  },
};

/**
 * The run's current execution, if it is still open, is ended so the run can start again on this build — unless it is
 * on this build already, or a worker of its build is still serving it (it will finish there; --force moves it anyway).
 */
async function endOldExecution(
  client: Client,
  runId: string,
  buildId: string,
  force: boolean,
  print: (line: string) => void,
  budget: ResumeRequest,
): Promise<'ended' | 'closed' | 'completed' | 'running-here'> {
  const handle = client.workflow.getHandle(runId);
  let description;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof temporalClient().WorkflowNotFoundError) return 'closed'; // e.g. a Temporal server that was reset
    throw error;
  }
  if (description.status.name === 'COMPLETED') return 'completed';
  if (description.status.name !== 'RUNNING') return 'closed';
  const pinned = pinnedVersion(description.raw as never);
  // Unversioned while workers are versioned: started by a judgeflow before worker versioning. Today's workflow code
  // cannot replay its history (a nondeterminism error), so it is moved like a run of an older build.
  const beforeVersioning = startedBeforeVersioning(description.raw as never);
  if (pinned?.buildId === buildId || (!pinned && !force && !beforeVersioning)) {
    // On this build (or unversioned): a paused run is resumed where it stands; a running one needs nothing.
    let unanswered: Error | undefined;
    const progress = await handle.query(progressQuery).catch((error: Error) => void (unanswered = error));
    if (!progress && unanswered)
      // No worker answered the query: whether the run is paused is unknown, so saying "not paused" would be a guess.
      throw new InputError(
        `run ${runId} did not answer (${rootCause(unanswered)}): no worker seems to serve its task queue ${description.taskQueue}; start one (judgeflow worker) and run this command again`,
      );
    if (progress?.paused) {
      const control = await handle.executeUpdate(resumeUpdate, { args: [budget] }).catch((error: Error) => {
        throw new InputError(`run ${runId} was not resumed: ${rootCause(error)}`);
      });
      const replaced = budget.config ? control.history.filter((h) => h.action === 'config').at(-1) : undefined;
      print(
        `Run ${runId} resumed (it was paused: ${progress.paused.reason})${replaced ? `; ${replaced.reason}` : budget.config ? '; the config changed nothing' : ''}; ${control.history.length} control step(s) recorded.`,
      );
    } else if (budget.budgetUsd !== undefined || budget.budgetTokens !== undefined)
      throw new InputError(
        `run ${runId} is not paused; --budget-usd and --budget-tokens raise the budget of a run paused at it`,
      );
    else if (budget.config)
      throw new InputError(
        `run ${runId} is running; --config replaces the endpoint settings of a paused run: judgeflow pause ${runId} first`,
      );
    else
      print(
        `Run ${runId} is running on this build (${pinned?.buildId ?? 'unversioned'}); nothing to resume. Follow it with: judgeflow status ${runId}`,
      );
    return 'running-here';
  }
  if (pinned && !force) {
    const polledMsAgo = await lastPoll(client, description.taskQueue, pinned.buildId);
    if (polledMsAgo !== undefined)
      throw new InputError(
        `run ${runId} runs on build ${pinned.buildId}, and a worker of that build polled ${description.taskQueue} ${Math.round(polledMsAgo / 1000)} s ago: it will finish there. ` +
          `If that worker is gone (the server forgets a stopped worker after about a minute), pass --force to continue the run on this build (${buildId}) now.`,
      );
  }
  await handle.terminate(
    `judgeflow resume: continued on build ${buildId}${pinned ? ` (was pinned to ${pinned.buildId})` : ' (started before worker versioning)'}`,
  );
  if (beforeVersioning)
    print(
      `Run ${runId} was started by a judgeflow release before worker versioning (its execution is unversioned), so this build cannot replay it; ended it and continuing on build ${buildId} from the results store.`,
    );
  else
    print(
      `Ended the execution of ${runId} on build ${pinned?.buildId ?? 'unversioned'}; continuing on build ${buildId} from the results store.`,
    );
  return 'ended';
}

const completedRefusal = (runId: string) =>
  `run ${runId} is completed; there is nothing to resume (its report: judgeflow report ${runId}; judgeflow rejudge ${runId} re-judges it, judgeflow retry ${runId} --failed asks its failed items again)`;

/** How long ago a worker of `buildId` last polled the workflow task queue, if the server still lists one. */
async function lastPoll(client: Client, taskQueue: string, buildId: string): Promise<number | undefined> {
  const { temporal } = require('@temporalio/proto') as typeof import('@temporalio/proto');
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const ages = (response.pollers ?? [])
    .filter((p) => p.deploymentOptions?.buildId === buildId)
    .map((p) => Date.now() - Number(p.lastAccessTime?.seconds ?? 0) * 1_000);
  return ages.length ? Math.max(0, Math.min(...ages)) : undefined;
}

/** --budget-usd / --budget-tokens: the raised caps a budget-paused run resumes with. */
function budgetRaise(values: Record<string, unknown>): ResumeRequest {
  const usd = optionalPositive(values, 'budget-usd', false);
  const tokens = optionalPositive(values, 'budget-tokens', true);
  return {
    ...(usd !== undefined ? { budgetUsd: usd } : {}),
    ...(tokens !== undefined ? { budgetTokens: tokens } : {}),
  };
}

/**
 * --config FILE: loaded and validated as `judgeflow run` loads it, then compared with the config the run was started
 * with (contract/configChange.ts): a key that would change what is asked or judged is refused, named.
 */
function replacementConfig(run: RunRecord, file: string | undefined): RunConfig | undefined {
  if (!file) return undefined;
  const config = loadRunConfig(file);
  const { refused } = compareRunConfigs(run.config as Record<string, unknown>, config);
  if (refused.length)
    throw new InputError(
      `${file}: resume --config may change only how the endpoints are reached, limited and priced (and budget, failFast); this config changes ${refused.join(', ')}, which would change what run ${run.runId} asks or how it is judged. Put the run's own values back, or start a new run (judgeflow rejudge re-judges its answers).`,
    );
  return config;
}

/** The run record's config replaced, as the run's own workflow replaces it (the replaceRunConfig activity). */
async function replaceStoredConfig(store: ResultsStore, runId: string, config: RunConfig): Promise<void> {
  await runConfigActivities({ store, env: process.env }).replaceRunConfig({ runId, config });
}

/** The validated config the run was started with, as stored with it (the workflow input carries no secrets either). */
function storedConfig(run: RunRecord): StoredRunConfig {
  const { reuseJudgments: _ignored, runKey: _key, ...config } = withStoredConfig(run).config;
  return config;
}
