import fs from 'node:fs';
import path from 'node:path';
import { parseRunConfig } from '../config';
import { seededRandom } from '../../core/random';
import { groupNearDuplicates } from '../../core/text';
import { buildPresentationDesign } from '../../rubrics/cab/presentation';
import { startSimServer } from '../../sim/server';
import { printStatisticsFigures } from '../../rubrics/cab/statisticsSimulation';
import { createWorker } from '../../worker/createWorker';
import { benchmarkRun } from '../../workflows';
import type { Command } from '../args';
import { connectClient, connectWorker } from '../connection';
import { newRunId, runInput } from '../startRun';
import { ensureLocalServer, judgeflowHome } from '../temporalServer';
import { printStartupFigures } from '../startupFigures';

/** Paper-scale throughput and history sizes, measured against the local simulator. Figures, not assertions. */
export const benchCommand: Command = {
  name: 'bench',
  summary: 'measure the statistics by simulation, command start-up, and a paper-scale LATTICE run (default 1,200 queries × 6 copilots) against the simulator',
  usage: 'judgeflow bench [--only stats|lattice|startup] [--sims 2000] [--per-cell 15] [--copilots 6] [--chunk 50] [--concurrency 16]',
  options: { only: { type: 'string' }, sims: { type: 'string' }, 'per-cell': { type: 'string' }, copilots: { type: 'string' }, chunk: { type: 'string' }, concurrency: { type: 'string' } },
  async run({ values }) {
    const only = values.only as string | undefined;
    if (only !== undefined && only !== 'stats' && only !== 'lattice' && only !== 'startup') {
      console.error(`judgeflow bench: --only must be stats, lattice or startup, got "${only}"`);
      return 2;
    }
    const sims = values.sims === undefined ? undefined : Number(values.sims);
    if (sims !== undefined && !(Number.isInteger(sims) && sims > 0)) {
      console.error(`judgeflow bench: --sims must be a positive integer, got "${values.sims}"`);
      return 2;
    }
    if (only === undefined || only === 'stats') printStatisticsFigures(console.log, { sims });
    if (only === 'stats') return 0;
    if (only === undefined || only === 'startup') await printStartupFigures(console.log);
    if (only === 'startup') return 0;
    const perCell = Number(values['per-cell'] ?? 15);
    const copilotCount = Number(values.copilots ?? 6);
    const concurrency = Number(values.concurrency ?? 16);
    benchAlgorithms();
    await ensureLocalServer({ log: console.log });
    const sim = await startSimServer({ port: 0 });
    const dir = path.join(judgeflowHome(), 'bench');
    fs.mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    for (let t = 1; t <= 16; t++)
      for (let c = 1; c <= 5; c++)
        for (let k = 0; k < perCell; k++) lines.push(JSON.stringify({ id: `t${t}-c${c}-${k}`, text: `Bench question ${k} for task ${t}, category ${c}: is staking ETH on Lido worth the risk?`, task: `T${t}`, category: `C${c}` }));
    fs.writeFileSync(path.join(dir, 'queries.jsonl'), lines.join('\n') + '\n');
    const config = parseRunConfig(
      {
        protocol: 'lattice',
        queries: 'queries.jsonl',
        judge: { baseURL: sim.url, model: 'sim-judge', concurrency },
        copilots: Array.from({ length: copilotCount }, (_, i) => ({ name: `C${i + 1}`, type: 'openai', baseURL: sim.url, model: i % 2 ? 'sim-terse' : 'sim-thorough', concurrency })),
        output: 'runs',
        chunkSize: Number(values.chunk ?? 50),
        simulated: true,
      },
      'bench config',
      dir,
    );
    const { connection, namespace } = await connectWorker();
    const worker = await createWorker({ connection, namespace, taskQueue: 'judgeflow-bench', env: process.env });
    const client = await connectClient();
    const runId = newRunId('bench');
    const started = Date.now();
    const result = await worker.runUntil(client.workflow.execute(benchmarkRun, { taskQueue: 'judgeflow-bench', workflowId: runId, args: [runInput(config, runId)] }));
    const seconds = (Date.now() - started) / 1000;
    const items = lines.length * copilotCount;
    const sizes: Array<{ id: string; events: number }> = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${runId}"` })) {
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      sizes.push({ id: wf.workflowId, events: history.events?.length ?? 0 });
    }
    const parent = sizes.find((s) => s.id === runId);
    const children = sizes.filter((s) => s.id !== runId);
    console.log(`\nLATTICE bench: ${lines.length} queries × ${copilotCount} copilots = ${items} responses, ${items} judgments (simulator, no latency)`);
    console.log(`wall time ${seconds.toFixed(1)} s; ${(items / seconds).toFixed(1)} query × copilot items per second (each one collect and one judge activity)`);
    console.log(`parent workflow history: ${parent?.events} events; ${children.length} child workflows, largest ${Math.max(...children.map((c) => c.events))} events, mean ${(children.reduce((s, c) => s + c.events, 0) / children.length).toFixed(0)}`);
    console.log(`report: ${result.reportPath}`);
    await client.connection.close();
    await connection.close();
    await sim.close();
    return 0;
  },
};

/** In-process figures for the pure algorithms whose speed tests no longer time (they assert the work saved instead). */
function benchAlgorithms(): void {
  const copilots = Array.from({ length: 12 }, (_, i) => `C${i + 1}`);
  const queries = Array.from({ length: 10_000 }, (_, i) => ({ queryId: `q${i}`, copilots }));
  let started = performance.now();
  buildPresentationDesign({ seed: 'bench', queries });
  console.log(`CAB presentation design: 10,000 queries × 12 copilots in ${(performance.now() - started).toFixed(0)} ms`);

  const rand = seededRandom('bench');
  const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
  const texts = Array.from({ length: 5000 }, () => Array.from({ length: 4 + Math.floor(rand() * 8) }, () => words[Math.floor(rand() * words.length)]).join(' '));
  const stats = { comparisons: 0 };
  started = performance.now();
  groupNearDuplicates(texts, { stats });
  const pairs = (texts.length * (texts.length - 1)) / 2;
  console.log(
    `near-duplicate grouping: 5,000 texts in ${(performance.now() - started).toFixed(0)} ms, ${stats.comparisons} similarity comparisons (${((100 * stats.comparisons) / pairs).toFixed(1)}% of all pairs)`,
  );
}
