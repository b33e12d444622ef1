import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { readHistoryFiles, replayInputs, type HistoryFile } from '../support/histories';
import { tempDir } from '../support/harness';

/**
 * Replays the recorded histories in test/histories/ (one per workflow, of today's shape) against the current workflow
 * code. A change that would break a run already in flight (an activity or child workflow added, removed or reordered)
 * fails here: then either the run is left to the build that started it, or the change goes behind a patch registered
 * in workflows/patches.ts.
 * Refresh the recordings with `npx tsx scripts/record-histories.ts` (see that script before you do).
 */

try {
  // The probe below fails on purpose; keep core's warning about it out of the test output.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
} catch {
  // installed by an earlier test in this process
}

// The bundle globalSetup built from the current workflows/ (re-bundling per test file would cost seconds).
const bundle = process.env.JUDGEFLOW_WORKFLOW_BUNDLE;
const replayOptions = (codePath = bundle): ReplayWorkerOptions =>
  codePath
    ? { workflowBundle: { codePath }, replayName: 'judgeflow-replay' }
    : { workflowsPath: require.resolve('../../workflows'), replayName: 'judgeflow-replay' };

async function replayFailures(file: HistoryFile, options: ReplayWorkerOptions): Promise<string[]> {
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(options, replayInputs(file))) {
    if (result.error)
      failures.push(`${file.scenario} / ${result.workflowId}: ${result.error.name}: ${result.error.message}`);
  }
  return failures;
}

const files = readHistoryFiles();

const activitiesOf = (scenario: string) => {
  const events = (
    files.find((f) => f.content.scenario === scenario)!.content.workflows[0].history as {
      events: Array<Record<string, any>>;
    }
  ).events;
  return events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType.name as string] : [],
  );
};

test('the recorded scenarios are all there, one workflow each (a run collects and judges itself, no child workflows)', () => {
  const byName = new Map(files.map((f) => [f.content.scenario, f.content]));
  expect([...byName.keys()].sort()).toEqual([
    'cab-batch-run',
    'cab-run',
    'lattice-rejudge',
    'lattice-run',
    'snapshot-curate',
    'study-run',
  ]);
  for (const name of ['lattice-run', 'lattice-rejudge', 'cab-run', 'cab-batch-run'])
    expect(byName.get(name)!.workflows.map((w) => w.workflowType)).toEqual(['benchmarkRun']);
  expect(byName.get('study-run')!.workflows.map((w) => w.workflowType)).toEqual(['studyWorkflow']);
  // The LATTICE run: a CSV copilot imported in one step, the live copilot and the judge one item and several per activity.
  const lattice = activitiesOf('lattice-run');
  expect(lattice.filter((a) => a === 'importAnswers')).toHaveLength(1);
  expect(new Set(lattice)).toEqual(
    new Set([
      'prepareRun',
      'planRun',
      'snapshotQueryIds', // the lanes read the snapshot's ids a page at a time (workflows/queryPages.ts)
      'importAnswers',
      'askCopilot',
      'askCopilotBatch',
      'planReadyJudgeWork',
      'judgeItem',
      'judgeItems',
      'writeReport',
    ]),
  );
  // Batch judging: rounds of submit → poll (on a durable timer) → ingest, and no live judge call.
  const batch = activitiesOf('cab-batch-run');
  expect(batch.filter((a) => a === 'ingestJudgeBatch').length).toBeGreaterThanOrEqual(3); // two scoring turns and the ranking
  expect(batch.filter((a) => a.startsWith('judgeItem'))).toEqual([]);
  expect(batch.indexOf('pollJudgeBatch')).toBeGreaterThan(batch.indexOf('submitJudgeBatch'));
  // A re-judge asks no copilot.
  expect(activitiesOf('lattice-rejudge').filter((a) => a.startsWith('askCopilot') || a === 'importAnswers')).toEqual(
    [],
  );
  for (const f of files)
    for (const w of f.content.workflows) expect((w.history as { events: unknown[] }).events.length).toBeGreaterThan(5);
});

test('curation fans its categorisation batches out from the workflow', () => {
  const activities = activitiesOf('snapshot-curate');
  expect(activities.filter((a) => a === 'categoriseBatch').length).toBeGreaterThan(1);
  expect(activities[0]).toBe('curateFilter');
  expect(activities[activities.length - 1]).toBe('curateSample');
});

test.each(files.map((f) => [f.content.scenario, f.content] as const))(
  'recorded %s histories replay deterministically with the current workflow code',
  async (_name, file) => {
    expect(await replayFailures(file, replayOptions())).toEqual([]);
  },
);

test('replay fails when a stage is reordered (writeReport before prepareRun)', async () => {
  if (!bundle)
    throw new Error('JUDGEFLOW_WORKFLOW_BUNDLE is not set; run through jest (test/support/globalSetup.ts builds it)');
  const code = fs.readFileSync(bundle, 'utf8');
  // Stage 1 of benchmarkRun (workflows/benchmarkRun.ts), as the bundle spells it.
  const anchor = 'await prepareRun(input)';
  // If this fails, benchmarkRun no longer calls prepareRun(input) that way: update the anchor, keep the probe.
  expect(code.split(anchor)).toHaveLength(2);
  const mutated = path.join(tempDir('jf-replay-probe-'), 'workflows.js');
  fs.writeFileSync(mutated, code.replace(anchor, '(await writeReport({ runId }), await prepareRun(input))'));
  const failures = await replayFailures(
    files.find((f) => f.content.scenario === 'lattice-run')!.content,
    replayOptions(mutated),
  );
  expect(failures).toHaveLength(1);
  expect(failures[0]).toMatch(/DeterminismViolation|[Nn]ondetermin/);
});
