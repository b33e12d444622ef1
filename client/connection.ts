import { inspect } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { openStore, storeTarget } from '../stores';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { temporalTarget } from './temporalServer';
import { temporalClient } from './temporalSdk';

/**
 * Connection settings from the environment, shared by clients and workers:
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY (Temporal Cloud), TEMPORAL_TLS=1,
 * TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY (mTLS client certificate files), TEMPORAL_TLS_SERVER_NAME.
 */
export function connectionOptions(env: NodeJS.ProcessEnv = process.env) {
  const { address, namespace } = temporalTarget(env);
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const mtls = env.TEMPORAL_TLS_CERT && env.TEMPORAL_TLS_KEY ? { crt: fs.readFileSync(env.TEMPORAL_TLS_CERT), key: fs.readFileSync(env.TEMPORAL_TLS_KEY) } : undefined;
  const tlsWanted = Boolean(apiKey || mtls || env.TEMPORAL_TLS === '1' || env.TEMPORAL_TLS === 'true');
  const tls = tlsWanted ? { ...(mtls ? { clientCertPair: mtls } : {}), ...(env.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME } : {}) } : undefined;
  return { address, namespace, tls, apiKey };
}

export async function connectClient(env: NodeJS.ProcessEnv = process.env): Promise<Client> {
  const { address, namespace, tls, apiKey } = connectionOptions(env);
  const { Client, Connection } = temporalClient();
  const connection = await Connection.connect({ address, tls, apiKey });
  return new Client({ connection, namespace });
}

/**
 * A worker's connection. The worker SDK (native bridge, bundler) is loaded here, by the commands that run a worker
 * only; its chatter (bundling, state changes) stays out of the user's way unless JUDGEFLOW_LOG_LEVEL asks for it.
 */
export async function connectWorker(env: NodeJS.ProcessEnv = process.env, opts: { omitWorkflowWarnings?: boolean } = {}): Promise<{ connection: NativeConnection; namespace: string }> {
  const { address, namespace, tls, apiKey } = connectionOptions(env);
  const { DefaultLogger, NativeConnection, Runtime } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  try {
    const level = (env.JUDGEFLOW_LOG_LEVEL ?? 'WARN').toUpperCase() as 'WARN';
    // An attached `run` prints its run's warnings and pauses itself, in words (client/progress.ts), so the workflow's own
    // log lines (a metadata object each) stay out of its terminal; a standalone worker keeps them.
    const write = (entry: { level: string; message: string; timestampNanos: bigint; meta?: Record<string, unknown> }) => {
      if (opts.omitWorkflowWarnings && entry.meta?.sdkComponent === 'workflow' && entry.level !== 'ERROR') return;
      process.stderr.write(`${new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString()} [${entry.level}] ${entry.message}${entry.meta === undefined ? '' : ` ${inspect(entry.meta)}`}\n`);
    };
    // The SDK core's own (Rust) log lines follow the same level as the worker's.
    Runtime.install({ logger: new DefaultLogger(level, write), telemetryOptions: { logging: { filter: { core: level, other: level } } } });
  } catch {
    // Already installed (a second worker in this process, or a test's runtime): keep the existing one.
  }
  return { connection: await NativeConnection.connect({ address, tls, apiKey }), namespace };
}

/**
 * The task queue of this directory's runs. A worker must never take work for a run its results store does not hold, so
 * the default queue is tied to the store's identity (`judgeflow-<hash of its id>`): workers and runs of one store meet,
 * another checkout's worker on the same Temporal server never sees them. An explicit JUDGEFLOW_TASK_QUEUE wins (then
 * every worker on it must share one store).
 */
export async function taskQueue(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.JUDGEFLOW_TASK_QUEUE) return env.JUDGEFLOW_TASK_QUEUE;
  const id = await (await openStore(storeTarget(env))).storeId();
  return `judgeflow-${crypto.createHash('sha256').update(id).digest('hex').slice(0, 16)}`;
}
