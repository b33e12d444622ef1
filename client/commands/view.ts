import type { Client } from '@temporalio/client';
import { InputError } from '../../core/inputError';
import type { Command } from '../args';
import { connectClient } from '../connection';
import { openExistingStore, storeLocation } from '../../stores';
import { startViewServer } from '../view/server';

export const viewCommand: Command = {
  name: 'view',
  summary: 'local read-only web app: runs with live progress, reports, compares, snapshots, schedules',
  usage: 'judgeflow view [--port 8080] [--host 127.0.0.1]',
  options: { port: { type: 'string' }, host: { type: 'string' } },
  async run({ values }) {
    const port = values.port === undefined ? 8080 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InputError(`--port must be a port number 0–65535 (got "${values.port}")`);
    const host = typeof values.host === 'string' && values.host ? values.host : '127.0.0.1';
    const store = await openExistingStore();
    if (!store) throw new InputError(`there is no results store at ${storeLocation()} yet; run a benchmark first or set JUDGEFLOW_HOME to where your runs are`);
    // One connection, made when first needed and kept; if Temporal is down the view still lists runs from the store.
    let client: Promise<Client | undefined> | undefined;
    const temporal = () => (client ??= connectClient().catch(() => ((client = undefined), undefined)));
    const view = await startViewServer({ store, port, host, temporal });
    console.log(`judgeflow view: ${view.url} (read-only${host === '127.0.0.1' ? ', this machine only' : `, listening on ${host}`}); Ctrl-C stops it.`);
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
