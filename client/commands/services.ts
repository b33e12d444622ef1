import { closeSharedBrowser } from '../../activities/adapters/browser';
import { openExistingStore, openStoreMigrating, storeLocation } from '../../stores';
import { envNames } from '../../activities/adapters/common';
import { workerTracing } from '../../worker/tracing';
import { InputError } from '../../core/model/inputError';
import { createWorker, workerVersions } from '../../worker/createWorker';
import type { Command } from '../args';
import { connectWorker, taskQueue } from '../connection';
import { ensureLocalServer, serverStatus, stopLocalServer, temporalTarget } from '../temporalServer';

async function runWorkerForever({ values }: { values: Record<string, unknown> }): Promise<number> {
  await ensureLocalServer({ log: console.log });
  const metricsAddress = metricsAddressOf(values);
  const { connection, namespace } = await connectWorker(process.env, { metricsAddress });
  if (metricsAddress)
    console.log(`Metrics (Temporal's worker metrics and judgeflow's judgeflow_*) at http://${metricsAddress}/metrics`);
  const queue = await taskQueue();
  await openStoreMigrating(console.log); // the store the worker uses, migrated, saying which migrations it applied
  const worker = await createWorker({ connection, namespace, taskQueue: queue });
  const version = workerVersions.get(worker);
  const build = version
    ? `, build ${version.buildId} (runs stay on the build that started them; judgeflow resume RUN_ID moves one to this build)`
    : ' (worker versioning off)';
  console.log(
    `Worker polling task queue "${queue}" at ${temporalTarget().address} (namespace ${namespace})${build}; results store ${storeLocation()}. Ctrl-C to stop.`,
  );
  for (const line of await missingVariables().catch(() => [])) console.error(line);
  await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  await closeSharedBrowser();
  await workerTracing()?.shutdown(); // the last spans leave before the process does
  return 0;
}

/**
 * The environment variables the store's running runs name (API keys, `${VAR}` in copilot configs) that this worker's
 * environment lacks: the items it picks up for them would fail as configuration failures, so it says so at start.
 */
export async function missingVariables(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const store = await openExistingStore(env);
  if (!store) return [];
  const lines: string[] = [];
  for (const run of (await store.listRuns()).filter((r) => r.status === 'running')) {
    const config = run.config as { copilots?: unknown[]; judge?: unknown; judges?: unknown[] };
    const parts = [...(config.copilots ?? []), ...(config.judges ?? (config.judge ? [config.judge] : []))];
    const missing = [...new Set(parts.flatMap(envNames))].filter((name) => env[name] === undefined).sort();
    if (missing.length)
      lines.push(
        `warning: run ${run.runId} needs ${missing.join(', ')}, not set in this worker's environment; its items taken here fail as configuration failures (judgeflow retry ${run.runId} --failed --kind config asks them again)`,
      );
  }
  return lines;
}

/** `--metrics-port N` (or JUDGEFLOW_METRICS_PORT) on loopback; `--metrics-host` to be scraped from elsewhere. */
function metricsAddressOf(values: Record<string, unknown>): string | undefined {
  const raw = (values['metrics-port'] as string | undefined) ?? process.env.JUDGEFLOW_METRICS_PORT;
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new InputError(`--metrics-port ${raw}: a TCP port (1-65535) is expected`);
  return `${(values['metrics-host'] as string | undefined) ?? '127.0.0.1'}:${port}`;
}

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run a long-running worker (run as many as you like)',
  usage:
    'judgeflow worker [--metrics-port N [--metrics-host H]]\n\n' +
    "  --metrics-port N   serve Prometheus metrics at http://127.0.0.1:N/metrics: Temporal's worker metrics and judgeflow's\n" +
    '                     judgeflow_llm_calls_total, judgeflow_llm_rate_limited_total, judgeflow_llm_tokens_total,\n' +
    '                     judgeflow_spend_microusd_total (also JUDGEFLOW_METRICS_PORT); nothing is served without it',
  options: { 'metrics-port': { type: 'string' }, 'metrics-host': { type: 'string' } },
  run: runWorkerForever,
};

export const devCommand: Command = {
  name: 'dev',
  summary: 'start the local Temporal dev server (if needed) and a worker in the foreground',
  usage: 'judgeflow dev',
  async run() {
    if (!temporalTarget().isLocalDefault)
      throw new InputError('judgeflow dev runs a local server; unset TEMPORAL_ADDRESS or use judgeflow worker');
    return runWorkerForever({ values: {} });
  },
};

export const serverCommand: Command = {
  name: 'server',
  summary: 'start, stop or inspect the local Temporal dev server (data in .judgeflow/)',
  usage: 'judgeflow server start|stop|status',
  async run({ positionals }) {
    const action = positionals[0];
    if (action === 'start') {
      const { address, started } = await ensureLocalServer({ log: console.log });
      console.log(
        started
          ? `Temporal dev server started at ${address}; Web UI http://127.0.0.1:8233`
          : `A Temporal server already answers at ${address}`,
      );
      return 0;
    }
    if (action === 'stop') {
      console.log(
        (await stopLocalServer())
          ? 'Stopped the local Temporal dev server.'
          : 'No local Temporal dev server was running.',
      );
      return 0;
    }
    if (action === 'status') {
      const s = await serverStatus();
      console.log(
        s.up
          ? `up at ${s.address}${s.pid ? ` (pid ${s.pid})` : ''}${s.uiUrl ? `, Web UI ${s.uiUrl}` : ''}`
          : `nothing answers at ${s.address}`,
      );
      return s.up ? 0 : 1;
    }
    throw new InputError(`unknown action "${action ?? ''}"\nUsage: ${this.usage}`);
  },
};

export const simCommand: Command = {
  name: 'sim',
  summary: 'run the local OpenAI-compatible simulator (copilots and judge)',
  usage:
    'judgeflow sim [--port 8000] [--latency-ms N] [--rate-429 F] [--rate-500 F] [--rate-malformed F] [--fail-tool TOOL=always|N] [--mcp-stdio]',
  async run() {
    throw new Error('unreachable: sim parses its own arguments');
  },
};
/** The simulator loads for `judgeflow sim` only: its servers and the MCP SDK are half a second of a worker's start-up. */
export const runSimCli = (args: string[]): Promise<number> =>
  (require('../../sim/main') as typeof import('../../sim/main')).runSimCli(args);
