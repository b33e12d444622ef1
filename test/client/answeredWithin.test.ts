import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { answeredWithin } from '../../client/connection';

jest.setTimeout(30_000);

/**
 * A gRPC endpoint over HTTP/2 standing in for a Temporal frontend whose worker is too busy to answer a query: it
 * answers GetSystemInfo (the client's connect check) with an empty message and every QueryWorkflow with UNAVAILABLE,
 * a status the client's retry interceptor retries after a back-off timer.
 */
async function busyFrontend(): Promise<{ address: string; queries: () => number; close: () => Promise<void> }> {
  let queries = 0;
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    stream.resume(); // the request's message, not needed
    const method = String(headers[':path']).split('/').pop();
    if (method === 'QueryWorkflow') queries++;
    if (method !== 'GetSystemInfo') {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'worker busy' },
        { endStream: true },
      );
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(Buffer.alloc(5)); // an uncompressed message of length 0: an empty GetSystemInfoResponse
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries: () => queries,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('answeredWithin: a query retried past its bound gives undefined, and closing the connection then leaves no retry behind to throw', async () => {
  const frontend = await busyFrontend();
  const connection = await Connection.connect({ address: frontend.address });
  try {
    const client = new Client({ connection });
    const started = Date.now();
    const answer = await answeredWithin(client, 800, () => client.workflow.getHandle('busy-run').query('progress'));
    expect(answer).toBeUndefined();
    expect(frontend.queries()).toBeGreaterThanOrEqual(2); // the interceptor's back-off was in play
    expect(Date.now() - started).toBeLessThan(800 + 6_000); // at most one back-off beyond the bound
    await connection.close();
    // The largest back-off is 5 s × 1.2 (its jitter): a retry timer left pending by the query would fire in this wait,
    // reach the closed channel and throw outside the test's code (jest fails the test with that uncaught error).
    const seen = frontend.queries();
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    expect(frontend.queries()).toBe(seen);
  } finally {
    await connection.close().catch(() => undefined);
    await frontend.close();
  }
});
