import { inspect } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { openStore, storeTarget } from '../stores';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { connectProfile, temporalTarget } from './temporalServer';
import { temporalClient } from './temporalSdk';

/**
 * Connection settings as the Temporal CLI and SDKs read them (@temporalio/envconfig): a profile of the TOML config file
 * (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE picks one, default "default"),
 * overridden by the TEMPORAL_* variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
 * TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_*). judgeflow's earlier names
 * TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY still work. Shared by clients and workers.
 */
export function connectionOptions(env: NodeJS.ProcessEnv = process.env) {
  const { address, namespace } = temporalTarget(env);
  const { connectionOptions: profile } = connectProfile(env);
  const apiKey = profile.apiKey || undefined;
  const legacyMtls =
    env.TEMPORAL_TLS_CERT && env.TEMPORAL_TLS_KEY
      ? { crt: fs.readFileSync(env.TEMPORAL_TLS_CERT), key: fs.readFileSync(env.TEMPORAL_TLS_KEY) }
      : undefined;
  const profileTls = typeof profile.tls === 'object' ? profile.tls : undefined;
  const tlsWanted =
    profile.tls === true ||
    Boolean(profileTls) ||
    Boolean(legacyMtls) ||
    (Boolean(apiKey) && profile.tls !== false) ||
    env.TEMPORAL_TLS === '1';
  const tls = tlsWanted
    ? { ...(profileTls ?? {}), ...(legacyMtls && !profileTls?.clientCertPair ? { clientCertPair: legacyMtls } : {}) }
    : undefined;
  return {
    address,
    namespace,
    tls,
    apiKey,
    ...(profile.metadata && Object.keys(profile.metadata).length ? { metadata: profile.metadata } : {}),
  };
}

/**
 * What `ask` (a query, or any client call) answers within about `ms`, or undefined if it fails or outlasts it. Bounded by
 * a gRPC deadline, not by a timer raced beside it: the client's retry interceptor waits between attempts on a timer of
 * its own, and a connection closed while that timer is pending makes the retry throw ("Channel has been shut down")
 * outside any caller, an uncaught exception (seen when `judgeflow status` gave up on a busy worker's query under load).
 * Past the deadline a retry ends at once (DEADLINE_EXCEEDED, not retried), so the call has settled when this returns
 * and the connection can be closed; it returns at most one back-off (5 s) after `ms`.
 */
export async function answeredWithin<T>(client: Client, ms: number, ask: () => Promise<T>): Promise<T | undefined> {
  try {
    return await client.withDeadline(Date.now() + ms, ask);
  } catch {
    return undefined;
  }
}

export async function connectClient(env: NodeJS.ProcessEnv = process.env): Promise<Client> {
  const { address, namespace, tls, apiKey, metadata } = connectionOptions(env) as ReturnType<
    typeof connectionOptions
  > & { metadata?: Record<string, string> };
  const { Client, Connection } = temporalClient();
  const connection = await Connection.connect({ address, tls, apiKey, ...(metadata ? { metadata } : {}) });
  return new Client({ connection, namespace });
}

interface WorkerLogEntry {
  level: string;
  message: string;
  timestampNanos: bigint;
  meta?: Record<string, unknown>;
}

/**
 * One worker log line for stderr, or undefined for a line left out. An attached `run` prints its run's warnings and
 * pauses itself, in words (client/progress.ts), so below ERROR the workflow's own log lines (a metadata object each) and
 * the SDK core's (a progress query retried while the workflow is busy, a slow workflow task) stay out of its terminal;
 * a standalone worker keeps them.
 */
export function workerLogLine(entry: WorkerLogEntry, attached: boolean): string | undefined {
  const component = entry.meta?.sdkComponent;
  if (attached && entry.level !== 'ERROR' && (component === 'workflow' || component === 'core')) return undefined;
  // Object.entries: the SDK's symbol keys (its own copy of the timestamp) are not for the reader.
  const meta = entry.meta && Object.fromEntries(Object.entries(entry.meta).filter(([, v]) => v !== undefined));
  return `${new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString()} [${entry.level}] ${entry.message}${meta === undefined ? '' : ` ${inspect(meta, { breakLength: Infinity })}`}\n`;
}

/**
 * A worker's connection. The worker SDK (native bridge, bundler) is loaded here, by the commands that run a worker
 * only; its chatter (bundling, state changes) stays out of the user's way unless JUDGEFLOW_LOG_LEVEL asks for it.
 */
export async function connectWorker(
  env: NodeJS.ProcessEnv = process.env,
  opts: { metricsAddress?: string; omitWorkflowWarnings?: boolean } = {},
): Promise<{ connection: NativeConnection; namespace: string }> {
  const { address, namespace, tls, apiKey, metadata } = connectionOptions(env) as ReturnType<
    typeof connectionOptions
  > & { metadata?: Record<string, string> };
  const { DefaultLogger, NativeConnection, Runtime } =
    require('@temporalio/worker') as typeof import('@temporalio/worker');
  try {
    const level = (env.JUDGEFLOW_LOG_LEVEL ?? 'WARN').toUpperCase() as 'WARN';
    const write = (entry: WorkerLogEntry) => {
      const line = workerLogLine(entry, Boolean(opts.omitWorkflowWarnings));
      if (line !== undefined) process.stderr.write(line);
    };
    // The SDK core's own (Rust) log lines follow the same level as the worker's, and are forwarded to `write` (not
    // printed by the core in its own coloured format), so they read like the others and an attached run can leave them out.
    // With a metrics address, Temporal's worker metrics and judgeflow's own (worker/metrics.ts) are served on /metrics.
    const metrics = opts.metricsAddress
      ? { metrics: { prometheus: { bindAddress: opts.metricsAddress, countersTotalSuffix: true } } }
      : {};
    Runtime.install({
      logger: new DefaultLogger(level, write),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} }, ...metrics },
    });
  } catch {
    // Already installed (a second worker in this process, or a test's runtime): keep the existing one.
  }
  return {
    connection: await NativeConnection.connect({ address, tls, apiKey, ...(metadata ? { metadata } : {}) }),
    namespace,
  };
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
