import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { readHistoryFiles, replayInputs, type HistoryFile } from '../support/histories';
import { tempDir } from '../support/harness';

/**
 * Replays the recorded histories in test/histories/ against the current workflow code. A change that would break a
 * run already in flight (an activity or child workflow added, removed or reordered without patched()) fails here.
 * Refresh the recordings with `npx tsx scripts/record-histories.ts` (see that script before you do).
 */

try {
  // The probe below fails on purpose; keep core's warning about it out of the test output.
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
} catch {
  // installed by an earlier test in this process
}

// The bundle globalSetup built from the current workflows/ (re-bundling per test file would cost seconds).
const bundle = process.env.JUDGEFLOW_WORKFLOW_BUNDLE;
const replayOptions = (codePath = bundle): ReplayWorkerOptions =>
  codePath ? { workflowBundle: { codePath }, replayName: 'judgeflow-replay' } : { workflowsPath: require.resolve('../../workflows'), replayName: 'judgeflow-replay' };

async function replayFailures(file: HistoryFile, options: ReplayWorkerOptions): Promise<string[]> {
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(options, replayInputs(file))) {
    if (result.error) failures.push(`${file.scenario} / ${result.workflowId}: ${result.error.name}: ${result.error.message}`);
  }
  return failures;
}

const files = readHistoryFiles();

test('the recorded scenarios are all there and cover parent and child workflows', () => {
  const byName = new Map(files.map((f) => [f.content.scenario, f.content]));
  expect([...byName.keys()]).toEqual(expect.arrayContaining(['lattice-run', 'lattice-rejudge', 'cab-run', 'pipelined-run', 'batched-run', 'snapshot-curate', 'study-run']));
  const types = (name: string) => new Set(byName.get(name)!.workflows.map((w) => w.workflowType));
  expect(types('lattice-run')).toEqual(new Set(['benchmarkRun', 'collectChunk', 'judgeChunk']));
  expect(types('cab-run')).toEqual(new Set(['benchmarkRun', 'collectChunk', 'judgeChunk']));
  // A re-judge adopts stored responses: no collection children at all.
  expect(types('lattice-rejudge')).toEqual(new Set(['benchmarkRun', 'judgeChunk']));
  expect(types('study-run')).toEqual(new Set(['studyWorkflow']));
  // Judged while collected: one workflow, the CSV copilot imported in one step.
  expect(types('pipelined-run')).toEqual(new Set(['benchmarkRun']));
  const activities = (byName.get('pipelined-run')!.workflows[0].history as { events: Array<Record<string, any>> }).events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType.name as string] : [],
  );
  expect(activities.filter((a) => a === 'importAnswers')).toHaveLength(1);
  expect(new Set(activities)).toEqual(new Set(['prepareRun', 'planPipeline', 'importAnswers', 'collectAnswer', 'planReadyJudging', 'judgeWork', 'writeReport']));
  // Calls batched into activities (the batched-calls patch): recorded beside the one-call-per-activity shape above.
  const batched = (byName.get('batched-run')!.workflows[0].history as { events: Array<Record<string, any>> }).events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType.name as string] : [],
  );
  expect(batched).toEqual(expect.arrayContaining(['collectAnswers', 'judgeWorkItems']));
  for (const f of files) for (const w of f.content.workflows) expect((w.history as { events: unknown[] }).events.length).toBeGreaterThan(5);
});

test('curation is recorded both before and after its batches fanned out from the workflow', () => {
  const activities = (file: string) => {
    const { content } = files.find((f) => path.basename(f.file) === file)!;
    const events = (content.workflows[0].history as { events: Array<Record<string, any>> }).events;
    return events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType.name as string] : []));
  };
  expect(activities('snapshot-curate.v1.json')).toEqual(['curateFilter', 'curateCategorise', 'curateDistil', 'curatePrune', 'curateSample']);
  const fannedOut = activities('snapshot-curate.json');
  expect(fannedOut.filter((a) => a === 'categoriseBatch').length).toBeGreaterThan(1);
  expect(fannedOut).not.toContain('curateCategorise');
});

test.each(files.map((f) => [f.content.scenario, f.content] as const))('recorded %s histories replay deterministically with the current workflow code', async (_name, file) => {
  expect(await replayFailures(file, replayOptions())).toEqual([]);
});

test('replay fails when a stage is reordered without a patch (planJudging before prepareRun)', async () => {
  if (!bundle) throw new Error('JUDGEFLOW_WORKFLOW_BUNDLE is not set; run through jest (test/support/globalSetup.ts builds it)');
  const code = fs.readFileSync(bundle, 'utf8');
  // The old shape's stage 1 (the recorded lattice-run predates the pipelined-run patch).
  const anchor = 'const prepared = await prepareRun(input);';
  // If this fails, benchmarkRun no longer calls prepareRun(input) that way: update the anchor, keep the probe.
  expect(code.split(anchor)).toHaveLength(2);
  const mutated = path.join(tempDir('jf-replay-probe-'), 'workflows.js');
  fs.writeFileSync(mutated, code.replace(anchor, 'const prepared = (await planJudging({ runId }), await prepareRun(input));'));
  const run = files.find((f) => f.content.scenario === 'lattice-run')!.content;
  const parentOnly: HistoryFile = { ...run, workflows: run.workflows.filter((w) => w.workflowType === 'benchmarkRun') };
  const failures = await replayFailures(parentOnly, replayOptions(mutated));
  expect(failures).toHaveLength(1);
  expect(failures[0]).toMatch(/DeterminismViolation|[Nn]ondetermin/);
});
