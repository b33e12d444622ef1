import { progressMode, progressView } from '../progress';
import type { Progress, RunResult } from '../../contract/run';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadRunConfig } from '../config';
import { startSimServer } from '../../sim/server';
import type { Command } from '../args';
import { connectClient } from '../connection';
import { newRunId, startBenchmark, watch } from '../startRun';
import { ensureLocalServer, judgeflowHome, serverStatus } from '../temporalServer';
import { spawnWorkerProcess } from '../../worker/workerProcess';

const ROOT = path.resolve(__dirname, '..', '..');
const SNAPSHOT = path.join(ROOT, 'examples', 'lattice-demo.jsonl');

/** A demo config: OpenAI when OPENAI_API_KEY is set, otherwise the local simulator (and the report says so). */
function demoConfig(simURL: string | null) {
  const real = simURL === null;
  const baseURL = simURL ?? 'https://api.openai.com/v1';
  const model = process.env.JUDGEFLOW_DEMO_MODEL ?? 'gpt-4o-mini';
  const copilot = (name: string, simModel: string, system: string) =>
    real
      ? { name, type: 'openai', baseURL, model, apiKeyEnv: 'OPENAI_API_KEY', system, concurrency: 4 }
      : { name, type: 'openai', baseURL, model: simModel, concurrency: 4 };
  return {
    protocol: 'lattice',
    queries: SNAPSHOT,
    judge: real
      ? { baseURL, model, apiKeyEnv: 'OPENAI_API_KEY', concurrency: 6 }
      : { baseURL, model: 'sim-judge', concurrency: 6 },
    copilots: [
      copilot(
        'Thorough',
        'sim-thorough',
        'You are a careful crypto analyst. Explain mechanisms, quantify uncertainty, give concrete next steps.',
      ),
      copilot('Balanced', 'sim-balanced', 'You are a helpful crypto assistant.'),
      copilot('Terse', 'sim-terse', 'Answer crypto questions in at most two sentences.'),
    ],
    output: path.resolve('runs'),
    simulated: !real,
  };
}

function spawnWorker(env: NodeJS.ProcessEnv): ChildProcess {
  // The worker itself (see spawnWorkerProcess): the SIGKILL below hits the worker, not a launcher.
  return spawnWorkerProcess(path.join(ROOT, 'bin', 'judgeflow.js'), env, { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The demo uses whatever Temporal server already answers at the address: say which, so a stale or foreign one is no surprise. */
async function reusedServerNote(address: string): Promise<string> {
  const { pid } = await serverStatus();
  const whose =
    pid !== undefined
      ? `the local dev server judgeflow started earlier (pid ${pid}, data in ${judgeflowHome()})`
      : 'a server this judgeflow did not start';
  return `Using the Temporal server already answering at ${address}: ${whose}. The demo runs on it; stop it (judgeflow server stop) or set TEMPORAL_ADDRESS to use another.`;
}

export const demoCommand: Command = {
  name: 'demo',
  summary:
    'run LATTICE on the bundled 80-query snapshot with three copilots, killing a worker mid-run to show durability',
  usage: 'judgeflow demo [--no-kill]',
  options: { 'no-kill': { type: 'boolean' } },
  async run({ values }) {
    const log = (line: string) => console.log(line);
    const server = await ensureLocalServer({ log });
    if (!server.started) log(await reusedServerNote(server.address));
    const sim = process.env.OPENAI_API_KEY ? null : await startSimServer({ port: 0, latencyMs: 40 });
    log(
      sim
        ? `No OPENAI_API_KEY: copilots and judge are simulated by the local server at ${sim.url}`
        : 'Using OpenAI for copilots and judge (OPENAI_API_KEY is set).',
    );
    const dir = path.join(judgeflowHome(), 'demo');
    fs.mkdirSync(dir, { recursive: true });
    const configFile = path.join(dir, 'config.yaml');
    fs.writeFileSync(configFile, YAML.stringify(demoConfig(sim?.url ?? null)));
    const config = loadRunConfig(configFile);
    log(`Config: ${configFile}`);

    // Workers run as separate processes so one can be killed for real.
    const env = { ...process.env, JUDGEFLOW_HOME: judgeflowHome() };
    let worker = spawnWorker(env);
    const runId = newRunId('lattice');
    await startBenchmark({ config, detach: true, runId, print: log });
    const client = await connectClient();
    let killed = Boolean(values['no-kill']);
    try {
      const view = progressView(progressMode(undefined, false), log);
      const result: RunResult = await watch(client.workflow.getHandle(runId), view, async (p: Progress) => {
        if (!killed && p.stage === 'judge' && p.done >= p.total / 3) {
          killed = true;
          view.log(
            `>>> Killing the worker (SIGKILL, pid ${worker.pid}) in the middle of judging; starting a new one. The run resumes where it was.`,
          );
          worker.kill('SIGKILL');
          worker = spawnWorker(env);
        }
      });
      const md = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8');
      log('\n' + md.split('\n').slice(0, 16).join('\n'));
      const reportDir = path.dirname(result.reportPath);
      log(`\nRun ${runId} completed. Open its report in a browser: ${path.join(reportDir, 'report.html')}`);
      log(
        `Beside it in ${reportDir}: report.md, report.json (every figure, for scripts), results.csv and responses.jsonl.`,
      );
      log(`See it in the Temporal Web UI: http://127.0.0.1:8233/namespaces/default/workflows/${runId}`);
      return 0;
    } finally {
      worker.kill('SIGTERM');
      await client.connection.close();
      await sim?.close();
    }
  },
};
