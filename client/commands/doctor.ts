import fs from 'node:fs';
import type { Command } from '../args';
import { chromiumPath } from '../../activities/adapters/chromiumPath';
import { isExecutableFile } from '../../core/io/files';
import { storeLocation, storeTarget } from '../../stores';
import { connectionOptions } from '../connection';

/** One check's outcome: a line a person reads, and whether it stops runs from working. */
export interface DoctorLine {
  check: string;
  ok: boolean;
  /** Works, but worth knowing (e.g. near a limit); never fails the command. */
  warning?: boolean;
  says: string;
}

/**
 * Temporal's default limit of Worker Deployments per namespace (dynamic config `matching.maxDeployments`). Every
 * judgeflow task queue is one deployment (worker/versioning.ts); a long-lived cluster that passes it refuses the next
 * queue's pollers, and that queue's runs never start.
 */
export const DEFAULT_MAX_DEPLOYMENTS = 100;

export async function doctorChecks(env: NodeJS.ProcessEnv = process.env): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [];
  let options: ReturnType<typeof connectionOptions>;
  try {
    options = connectionOptions(env);
  } catch (error) {
    return [{ check: 'connection settings', ok: false, says: (error as Error).message }];
  }
  lines.push({
    check: 'connection settings',
    ok: true,
    says: `${options.address}, namespace ${options.namespace}${env.TEMPORAL_PROFILE ? ` (profile ${env.TEMPORAL_PROFILE})` : ''}${options.tls ? ', TLS' : ''}${options.apiKey ? ', API key from the environment or profile' : ''}`,
  });
  lines.push(...(await clusterChecks(options)));
  lines.push(storeCheck(env));
  const chromium = chromiumPath();
  lines.push(
    isExecutableFile(chromium)
      ? { check: 'chromium', ok: true, says: `${chromium} (browser copilots work)` }
      : {
          check: 'chromium',
          ok: true,
          warning: true,
          says: `not at ${chromium}: only browser copilots need it (judgeflow installs Debian's chromium package on first use as root)`,
        },
  );
  return lines;
}

async function clusterChecks(options: ReturnType<typeof connectionOptions>): Promise<DoctorLine[]> {
  const { Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
  let connection: import('@temporalio/client').Connection | undefined;
  try {
    connection = await Connection.connect({
      address: options.address,
      tls: options.tls,
      apiKey: options.apiKey,
      connectTimeout: 5_000,
    });
  } catch (error) {
    return [
      {
        check: 'cluster',
        ok: false,
        says: `no Temporal server answers at ${options.address}: ${(error as Error).message.split('\n')[0]} (judgeflow starts a local dev server itself only for the default 127.0.0.1:7233)`,
      },
    ];
  }
  const service = connection.workflowService;
  const deadline = () => Date.now() + 10_000;
  try {
    const info = await connection.withDeadline(deadline(), () => service.getSystemInfo({}));
    const lines: DoctorLine[] = [
      {
        check: 'cluster',
        ok: true,
        says: `Temporal ${info.serverVersion || '(version not reported)'} at ${options.address}`,
      },
    ];
    try {
      await connection.withDeadline(deadline(), () => service.describeNamespace({ namespace: options.namespace }));
      lines.push({ check: 'namespace', ok: true, says: `${options.namespace} exists` });
    } catch (error) {
      lines.push({
        check: 'namespace',
        ok: false,
        says: `${options.namespace}: ${(error as Error).message.split('\n')[0]} (create it, or set TEMPORAL_NAMESPACE / the profile's namespace)`,
      });
      return lines;
    }
    lines.push(await deploymentCheck(connection, options.namespace, deadline()));
    return lines;
  } catch (error) {
    return [
      {
        check: 'cluster',
        ok: false,
        says: `${options.address} did not answer: ${(error as Error).message.split('\n')[0]}`,
      },
    ];
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function deploymentCheck(
  connection: import('@temporalio/client').Connection,
  namespace: string,
  deadline: number,
): Promise<DoctorLine> {
  let count = 0;
  let nextPageToken: Uint8Array | undefined;
  try {
    do {
      const page = await connection.withDeadline(deadline, () =>
        connection.workflowService.listWorkerDeployments({ namespace, pageSize: 1000, nextPageToken }),
      );
      count += page.workerDeployments?.length ?? 0;
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
  } catch (error) {
    return {
      check: 'worker deployments',
      ok: true,
      warning: true,
      says: `could not be listed (${(error as Error).message.split('\n')[0]}); judgeflow's workers need Worker Deployments (Temporal 1.28 or later)`,
    };
  }
  const near = count >= DEFAULT_MAX_DEPLOYMENTS * 0.8;
  return {
    check: 'worker deployments',
    ok: true,
    ...(near ? { warning: true } : {}),
    says: `${count} in namespace ${namespace}${near ? `: near Temporal's default limit of ${DEFAULT_MAX_DEPLOYMENTS} (matching.maxDeployments), past which a new task queue's workers cannot poll; raise the limit or delete unused deployments (temporal worker deployment delete)` : ` (Temporal's default limit is ${DEFAULT_MAX_DEPLOYMENTS}; each judgeflow task queue is one)`}`,
  };
}

/** The store without opening it for writing: a read-only command never migrates (or creates) it. */
function storeCheck(env: NodeJS.ProcessEnv): DoctorLine {
  const target = storeTarget(env);
  const location = storeLocation(target);
  if (target.kind !== 'sqlite')
    return { check: 'store', ok: true, says: `${location} (PostgreSQL: reached when a run or worker starts)` };
  if (!fs.existsSync(target.file))
    return { check: 'store', ok: true, says: `${location} does not exist yet: the first run creates it` };
  try {
    fs.accessSync(target.file, fs.constants.R_OK | fs.constants.W_OK);
  } catch {
    return { check: 'store', ok: false, says: `${location} is not readable and writable by this user` };
  }
  return { check: 'store', ok: true, says: `${location}` };
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check the Temporal cluster, namespace, Worker Deployment limit, results store and Chromium, one line each',
  usage:
    'judgeflow doctor [--json]\n\n  Exit 1 when a check fails (a warning does not). Connection settings are read as the Temporal CLI reads them:\n  TEMPORAL_PROFILE and the TOML config file (TEMPORAL_CONFIG_FILE), overridden by TEMPORAL_* variables.',
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    const lines = await doctorChecks();
    if (values.json) console.log(JSON.stringify(lines, null, 2));
    else for (const l of lines) console.log(`${l.ok ? (l.warning ? 'warn' : ' ok ') : 'FAIL'}  ${l.check}: ${l.says}`);
    return lines.every((l) => l.ok) ? 0 : 1;
  },
};
