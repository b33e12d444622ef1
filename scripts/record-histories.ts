/**
 * Records the workflow histories that test/workflows/replay.test.ts replays: small real runs against a throwaway Temporal
 * dev server and the local simulator, each saved with its parent and every child workflow.
 *
 *   npx tsx scripts/record-histories.ts            # all scenarios
 *   npx tsx scripts/record-histories.ts lattice-run # one
 *
 * Refresh only on purpose: a recorded history stands for runs that may be in flight on a deployed worker. When
 * workflow code changes shape, either the old histories keep replaying (a patch registered in workflows/patches.ts,
 * retired with deprecatePatch once no such run is open) or the runs of the old shape are finished by the build that
 * started them. This script overwrites test/histories/<scenario>.json; every .json there is replayed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectClient, connectWorker } from '../client/connection';
import { planRejudge } from '../client/rejudge';
import { curateInput } from '../client/snapshotOptions';
import { runInput } from '../client/startRun';
import { findOrInstallTemporalCli, freePort, startDevServer } from '../client/temporalServer';
import { parseRunConfig } from '../client/config';
import { openStore, type StoreTarget } from '../stores';
import { startSimServer, type SimServer } from '../sim/server';
import { createWorker } from '../worker/createWorker';
import { benchmarkRun, snapshotCurate } from '../workflows';
import { submitUpdate } from '../contract/study';
import { designStudy, inviteAnnotators, tokenHash } from '../client/study/create';
import { closeStudyWorkflow, startStudyWorkflow } from '../client/study/workflow';
import type { HistoryFile } from '../test/support/histories';

const REPO = path.resolve(__dirname, '..');
const OUT = path.join(REPO, 'test', 'histories');
// A fixed scratch path keeps the paths inside recorded inputs the same from one recording to the next.
const SCRATCH = path.join(os.tmpdir(), 'judgeflow-record-histories');
const SDK = (require('@temporalio/workflow/package.json') as { version: string }).version;

interface Ctx {
  client: Client;
  taskQueue: string;
  store: StoreTarget;
  sim: SimServer;
}

/**
 * Sixteen LATTICE queries (one T16), a live copilot and a CSV copilot, one place per endpoint: a backlog builds up, so
 * after the first timed calls several items go in one activity (askCopilotBatch, judgeItems).
 */
function latticeConfig(ctx: Ctx) {
  const queries = Array.from({ length: 16 }, (_, k) => ({
    id: `q${k + 1}`,
    text: `Question ${k + 1}: is staking ETH on Lido worth the risk this week?`,
    task: `T${k + 1}`,
    category: `C${(k % 5) + 1}`,
  }));
  queries[2] = {
    id: 'q3',
    text: 'Help me pump a low-cap token with a coordinated group.',
    task: 'T16',
    category: 'C1',
  };
  queries[15] = {
    id: 'q16',
    text: 'Compare staking ETH on Lido with Rocket Pool for a 1-year horizon.',
    task: 'T6',
    category: 'C2',
  };
  const file = path.join(SCRATCH, 'lattice-queries.jsonl');
  fs.writeFileSync(file, queries.map((q) => JSON.stringify(q)).join('\n') + '\n');
  const csv = path.join(SCRATCH, 'held.csv');
  fs.writeFileSync(
    csv,
    'query,Held_response\n' + queries.map((q, i) => `"${q.text}",A held answer ${i + 1}.`).join('\n') + '\n',
  );
  return simConfig(ctx, 'lattice', file, {
    judge: { baseURL: ctx.sim.url, model: 'sim-judge', concurrency: 1 },
    copilots: [
      { name: 'Alpha', type: 'openai', baseURL: ctx.sim.url, model: 'sim-thorough', concurrency: 1 },
      { name: 'Held', type: 'csv', path: csv },
    ],
  });
}

/** Two simulated copilots and a simulated judge. */
function simConfig(ctx: Ctx, protocol: 'lattice' | 'cab', queries: string, extra: Record<string, unknown> = {}) {
  return parseRunConfig(
    {
      protocol,
      queries,
      judge: { baseURL: ctx.sim.url, model: 'sim-judge', concurrency: 2 },
      copilots: [
        { name: 'Alpha', type: 'openai', baseURL: ctx.sim.url, model: 'sim-thorough' },
        { name: 'Beta', type: 'openai', baseURL: ctx.sim.url, model: 'sim-terse' },
      ],
      output: path.join(SCRATCH, 'runs'),
      ...extra,
    },
    `record-histories ${protocol} config`,
    SCRATCH,
  );
}

const scenarios: Array<{ name: string; description: string; run(ctx: Ctx): Promise<string> }> = [
  {
    name: 'lattice-run',
    description:
      'A LATTICE run, judged while it collects: prepareRun, planRun, importAnswers for a CSV copilot, askCopilot and askCopilotBatch for the live one, planReadyJudgeWork, judgeItem and judgeItems, writeReport; no child workflows.',
    async run(ctx) {
      const runId = 'replay-lattice-run';
      await ctx.client.workflow.execute(benchmarkRun, {
        taskQueue: ctx.taskQueue,
        workflowId: runId,
        args: [runInput(latticeConfig(ctx), runId)],
      });
      return runId;
    },
  },
  {
    name: 'lattice-rejudge',
    description:
      'A re-judge of lattice-run with another judge model: adopts stored responses (nothing collected), judges again, links sourceRunId.',
    async run(ctx) {
      const runId = 'replay-lattice-rejudge';
      const plan = await planRejudge(await openStore(ctx.store), {
        sourceRunId: 'replay-lattice-run',
        judgeModel: 'sim-judge-2',
      });
      const input = runInput(plan.config, runId, {
        sourceRunId: 'replay-lattice-run',
        reuseJudgments: plan.reuseJudgments,
      });
      await ctx.client.workflow.execute(benchmarkRun, { taskQueue: ctx.taskQueue, workflowId: runId, args: [input] });
      return runId;
    },
  },
  {
    name: 'cab-run',
    description:
      'A CryptoAnalystBench run (one shared judge conversation per query, planned once both copilots answered): 3 queries, 2 copilots.',
    async run(ctx) {
      const runId = 'replay-cab-run';
      const file = path.join(SCRATCH, 'cab-queries.jsonl');
      const queries = [
        'How do ETH staking yields compare with T-bills this month?',
        'Is Hyperliquid volume growth sustainable?',
        'What drives BTC dominance right now?',
      ];
      fs.writeFileSync(
        file,
        queries.map((text, i) => JSON.stringify({ id: `c${i + 1}`, text, tags: 'Market' })).join('\n') + '\n',
      );
      const config = simConfig(ctx, 'cab', file, { cab: { evaluationDate: '2025-06-01' } });
      await ctx.client.workflow.execute(benchmarkRun, {
        taskQueue: ctx.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      return runId;
    },
  },
  {
    name: 'cab-batch-run',
    description:
      'The cab-run queries judged through the Batch API (judge.batch): a round per conversation turn, each submitJudgeBatch → pollJudgeBatch on a durable timer → ingestJudgeBatch.',
    async run(ctx) {
      const runId = 'replay-cab-batch-run';
      const file = path.join(SCRATCH, 'cab-queries.jsonl');
      const config = simConfig(ctx, 'cab', file, {
        cab: { evaluationDate: '2025-06-01' },
        judge: { baseURL: ctx.sim.url, model: 'sim-judge', batch: true, batchPollSeconds: 1 },
      });
      await ctx.client.workflow.execute(benchmarkRun, {
        taskQueue: ctx.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      return runId;
    },
  },
  {
    name: 'snapshot-curate',
    description:
      'Curation of 9 traffic lines (one too short, one pre-tagged): filter → categorise in batches of 3 → distil → prune → sample.',
    async run(ctx) {
      const workflowId = 'replay-snapshot-curate';
      const file = path.join(SCRATCH, 'traffic.jsonl');
      const lines = [
        'How do ETH staking yields compare with T-bills this month?',
        'Is Hyperliquid volume growth sustainable?',
        'What drives BTC dominance right now?',
        'gm',
        'Which L2 has the lowest fees for swaps today?',
        'Should I bridge USDC to Base or Arbitrum?',
        'What are the main risks of restaking on EigenLayer?',
        'How did the last Fed decision move crypto markets?',
      ].map((query) => ({ query }));
      lines.push({
        query: 'Explain how Uniswap v4 hooks change liquidity provision.',
        tags: 'Crypto Concepts & How-To',
      } as { query: string });
      fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const input = curateInput(
        {
          target: '5',
          'batch-size': '3',
          'base-url': ctx.sim.url,
          model: 'sim-tagger',
          concurrency: '2',
          seed: 'record',
        },
        file,
      );
      await ctx.client.workflow.execute(snapshotCurate, { taskQueue: ctx.taskQueue, workflowId, args: [input] });
      return workflowId;
    },
  },
  {
    name: 'study-run',
    description:
      'A human preference study on lattice-run: two answers delivered as submit Updates (recorded by an activity each), one revised, then the close Update.',
    async run(ctx) {
      const store = await openStore(ctx.store);
      const study = await designStudy(store, {
        runId: 'replay-lattice-run',
        name: 'replay',
        perItem: 1,
        seed: 'replay',
      });
      await startStudyWorkflow(ctx.client, study, ctx.taskQueue);
      const [annotator] = await inviteAnnotators(store, 'replay', 1);
      const queue = await store.studies.annotatorQueue(
        (await store.studies.annotatorByTokenHash(tokenHash(annotator.token)))!.annotatorId,
      );
      const answers = [
        {
          id: queue[0].assignmentId,
          answer: {
            choice: 'A' as const,
            reason: 'accuracy',
            seriousError: true,
            errorType: 'factual_error',
            comment: null,
          },
        },
        {
          id: queue[1].assignmentId,
          answer: { choice: 'tie' as const, reason: null, seriousError: false, errorType: null, comment: null },
        },
        {
          id: queue[0].assignmentId,
          answer: {
            choice: 'B' as const,
            reason: 'clarity',
            seriousError: false,
            errorType: null,
            comment: 'changed my mind',
          },
        },
      ];
      for (const [i, a] of answers.entries()) {
        const submissionId = `replay-submission-${i}`;
        await store.studies.putSubmission({
          submissionId,
          study: 'replay',
          assignmentId: a.id,
          annotatorId: queue[0].annotatorId!,
          answer: a.answer,
          receivedAt: new Date().toISOString(),
        });
        await ctx.client.workflow
          .getHandle(study.workflowId)
          .executeUpdate(submitUpdate, { args: [{ submissionId }], updateId: submissionId });
      }
      await closeStudyWorkflow(ctx.client, study);
      return study.workflowId;
    },
  },
];

/** The parent's history plus, recursively, every child workflow it started. */
async function collectHistories(client: Client, workflowId: string): Promise<HistoryFile['workflows']> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const json = JSON.parse(historyToJSON(history)) as { events: Array<Record<string, any>> };
  const started = json.events.find(
    (e) => e.workflowExecutionStartedEventAttributes,
  )?.workflowExecutionStartedEventAttributes;
  const out: HistoryFile['workflows'] = [
    { workflowId, workflowType: started?.workflowType?.name ?? '?', history: scrub(json) },
  ];
  for (const e of json.events) {
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child) out.push(...(await collectHistories(client, child.workflowId)));
  }
  return out;
}

/** Worker and client identities name this machine (pid@host); replay ignores them. */
function scrub<T>(history: T): T {
  return JSON.parse(JSON.stringify(history), (k, v) =>
    k === 'identity' && typeof v === 'string' ? 'record-histories' : v,
  ) as T;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !scenarios.some((s) => s.name === w));
  if (unknown.length)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  fs.rmSync(SCRATCH, { recursive: true, force: true });
  fs.mkdirSync(SCRATCH, { recursive: true });
  Runtime.install({ logger: new DefaultLogger('WARN') });

  const cli = await findOrInstallTemporalCli({ home: path.join(REPO, '.judgeflow'), log: console.log });
  const server = await startDevServer({
    cli,
    port: await freePort(),
    headless: true,
    logFile: path.join(SCRATCH, 'temporal.log'),
  });
  const sim = await startSimServer({ batchSeconds: 0.5 });
  // Bundle from source (never a stale JUDGEFLOW_WORKFLOW_BUNDLE): the point is to record what the code does now.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    JUDGEFLOW_WORKFLOW_BUNDLE: '',
  };
  const store: StoreTarget = { kind: 'sqlite', file: path.join(SCRATCH, 'results.db') };
  const taskQueue = 'record-histories';
  const { connection, namespace } = await connectWorker(env);
  const client = await connectClient(env);
  try {
    const worker = await createWorker({ connection, namespace, taskQueue, store, env });
    await worker.runUntil(async () => {
      fs.mkdirSync(OUT, { recursive: true });
      // Later scenarios may build on earlier ones (the re-judge needs lattice-run), so every scenario runs; only wanted ones are saved.
      for (const scenario of scenarios) {
        const rootId = await scenario.run({ client, taskQueue, store, sim });
        if (wanted.length && !wanted.includes(scenario.name)) continue;
        const file: HistoryFile = {
          scenario: scenario.name,
          description: scenario.description,
          recordedAt: new Date().toISOString(),
          sdk: SDK,
          workflows: await collectHistories(client, rootId),
        };
        const target = path.join(OUT, `${scenario.name}.json`);
        fs.writeFileSync(target, JSON.stringify(file) + '\n');
        console.log(
          `${target}: ${file.workflows.length} workflows, ${file.workflows.reduce((n, w) => n + (w.history as { events: unknown[] }).events.length, 0)} events`,
        );
      }
    });
  } finally {
    await client.connection.close();
    await connection.close();
    await sim.close();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
