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

export async function connectClient(env: NodeJS.ProcessEnv = process.env): Promise<Client> {
  const { address, namespace, tls, apiKey, metadata } = connectionOptions(env) as ReturnType<
    typeof connectionOptions
  > & { metadata?: Record<string, string> };
  const { Client, Connection } = temporalClient();
  const connection = await Connection.connect({ address, tls, apiKey, ...(metadata ? { metadata } : {}) });
  return new Client({ connection, namespace });
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
    // An attached `run` prints its run's warnings and pauses itself, in words (client/progress.ts), so the workflow's own
    // log lines (a metadata object each) stay out of its terminal; a standalone worker keeps them.
    const write = (entry: {
      level: string;
      message: string;
      timestampNanos: bigint;
      meta?: Record<string, unknown>;
    }) => {
      if (opts.omitWorkflowWarnings && entry.meta?.sdkComponent === 'workflow' && entry.level !== 'ERROR') return;
      process.stderr.write(
        `${new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString()} [${entry.level}] ${entry.message}${entry.meta === undefined ? '' : ` ${inspect(entry.meta)}`}\n`,
      );
    };
    // The SDK core's own (Rust) log lines follow the same level as the worker's.
    // With a metrics address, Temporal's worker metrics and judgeflow's own (worker/metrics.ts) are served on /metrics.
    const metrics = opts.metricsAddress
      ? { metrics: { prometheus: { bindAddress: opts.metricsAddress, countersTotalSuffix: true } } }
      : {};
    Runtime.install({
      logger: new DefaultLogger(level, write),
      telemetryOptions: { logging: { filter: { core: level, other: level } }, ...metrics },
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
