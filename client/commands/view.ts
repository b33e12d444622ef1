import type { Client } from '@temporalio/client';
import { InputError } from '../../core/model/inputError';
import type { Command } from '../args';
import { connectClient } from '../connection';
import { openExistingStore, storeLocation } from '../../stores';
import { startViewServer } from '../view/server';
import { isLoopbackHost } from '../hostGuard';

export const viewCommand: Command = {
  name: 'view',
  summary: 'local read-only web app: runs with live progress, reports, compares, snapshots, schedules',
  usage:
    'judgeflow view [--port 8080] [--host 127.0.0.1] [--token SECRET]   (a host other than loopback needs a token; JUDGEFLOW_VIEW_TOKEN keeps it out of the process list)',
  options: { port: { type: 'string' }, host: { type: 'string' }, token: { type: 'string' } },
  async run({ values }) {
    const port = values.port === undefined ? 8080 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new InputError(`--port must be a port number 0–65535 (got "${values.port}")`);
    const host = typeof values.host === 'string' && values.host ? values.host : '127.0.0.1';
    const token = (typeof values.token === 'string' && values.token) || process.env.JUDGEFLOW_VIEW_TOKEN || undefined;
    if (!isLoopbackHost(host) && !token)
      throw new InputError(
        `--host ${host} would let anyone who can reach this machine read every run in the store (answers, rationales, costs); give a token: --token SECRET or JUDGEFLOW_VIEW_TOKEN=SECRET (at least 16 characters), then open the printed address with ?token=SECRET once. Without --host the view listens on 127.0.0.1, this machine only.`,
      );
    if (token !== undefined && token.length < 16)
      throw new InputError('the view token must be at least 16 characters (e.g. openssl rand -hex 16)');
    const store = await openExistingStore();
    if (!store)
      throw new InputError(
        `there is no results store at ${storeLocation()} yet; run a benchmark first or set JUDGEFLOW_HOME to where your runs are`,
      );
    // One connection, made when first needed and kept; if Temporal is down the view still lists runs from the store.
    let client: Promise<Client | undefined> | undefined;
    const temporal = () => (client ??= connectClient().catch(() => ((client = undefined), undefined)));
    const view = await startViewServer({ store, port, host, temporal, token });
    console.log(
      `judgeflow view: ${view.url} (read-only${isLoopbackHost(host) ? ', this machine only' : `, listening on ${host}`}${token ? '; open it with ?token=<your token> once' : ''}); Ctrl-C stops it.`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await view.close();
    const c = await client?.catch(() => undefined);
    await c?.connection.close();
    return 0;
  },
};
