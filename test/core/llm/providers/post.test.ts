import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { postText } from '../../../../core/llm/providers/post';
import { callErrorKind } from '../../../../core/llm/client';
import { toAdapterError } from '../../../../activities/adapters/errors';

/** The chat path's POST answers and fails as fetch does, so everything that reads fetch's failures keeps reading them. */

let server: http.Server;
let base = '';
let other: http.Server;
let otherBase = '';
const seen: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.url === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'X-Rate': '7' });
        return res.end(zlib.gzipSync('\uFEFF{"ok":true,"text":"é"}'));
      }
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/gzip' });
        return res.end();
      }
      if (req.url === '/elsewhere') {
        // Another port is another origin (to fetch and to a browser).
        res.writeHead(308, { location: `${otherBase}/gzip` });
        return res.end();
      }
      if (req.url === '/slow') {
        return setTimeout(() => res.end('{"late":true}'), 4_500);
      }
      if (req.url === '/stall') {
        res.writeHead(200);
        return res.write('{"partial":'); // never ends
      }
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"partial":');
        return setTimeout(() => res.socket?.destroy(), 20);
      }
      res.writeHead(429, { 'retry-after': '2' });
      res.end('slow down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  other = http.createServer(server.listeners('request')[0] as http.RequestListener);
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of [server, other]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

const never = () => new AbortController().signal;

test('the body is sent whole with its length; the answer is decoded (gzip undone, BOM dropped) with lower-case headers', async () => {
  const reply = await postText(`${base}/gzip`, { 'content-type': 'application/json' }, '{"q":"ü"}', never());
  expect(reply).toEqual({
    status: 200,
    ok: true,
    headers: expect.objectContaining({ 'x-rate': '7' }),
    text: '{"ok":true,"text":"é"}',
  });
  const sent = seen[seen.length - 1];
  expect(sent.body).toBe('{"q":"ü"}');
  expect(sent.headers['content-length']).toBe(String(Buffer.byteLength('{"q":"ü"}')));
  expect(sent.headers['content-type']).toBe('application/json');
});

test('an error status comes back as a reply (not thrown), with its body and headers', async () => {
  const reply = await postText(`${base}/limited`, {}, '{}', never());
  expect(reply.status).toBe(429);
  expect(reply.ok).toBe(false);
  expect(reply.text).toBe('slow down');
  expect(reply.headers['retry-after']).toBe('2');
});

test('a 307 is followed with the same POST', async () => {
  const before = seen.length;
  const reply = await postText(`${base}/moved`, {}, '{"again":1}', never());
  expect(reply.text).toBe('{"ok":true,"text":"é"}');
  expect(seen.slice(before).map((s) => [s.url, s.body])).toEqual([
    ['/moved', '{"again":1}'],
    ['/gzip', '{"again":1}'],
  ]);
});

test('a key goes only to its own origin: a redirect elsewhere is followed without Authorization or x-api-key', async () => {
  const keys = { authorization: 'Bearer sk-test', 'x-api-key': 'sk-ant', 'content-type': 'application/json' };
  const before = seen.length;
  await postText(`${base}/moved`, keys, '{}', never());
  expect(seen.slice(before).map((s) => [s.url, s.headers.authorization, s.headers['x-api-key']])).toEqual([
    ['/moved', 'Bearer sk-test', 'sk-ant'],
    ['/gzip', 'Bearer sk-test', 'sk-ant'],
  ]);
  const across = seen.length;
  const reply = await postText(`${base}/elsewhere`, keys, '{}', never());
  expect(reply.status).toBe(200);
  const followed = seen.slice(across);
  expect(followed.map((s) => [s.url, `http://${s.headers.host}`])).toEqual([
    ['/elsewhere', base],
    ['/gzip', otherBase],
  ]);
  expect(followed[1].headers.authorization).toBeUndefined();
  expect(followed[1].headers['x-api-key']).toBeUndefined();
  expect(followed[1].headers['content-type']).toBe('application/json');
});

test('nothing listening: a TypeError "fetch failed" whose cause has the socket code, read as a network fault', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const error = await postText(`http://127.0.0.1:${port}/`, {}, '{}', never()).catch((e) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect(error.message).toBe('fetch failed');
  expect(error.cause.code).toBe('ECONNREFUSED');
  expect(callErrorKind(error)).toBe('network');
  expect(toAdapterError(error, 'judge').kind).toBe('network');
});

test('an abort rejects with the signal’s reason, also while the body streams', async () => {
  const timeout = AbortSignal.timeout(150);
  const error = await postText(`${base}/stall`, {}, '{}', timeout).catch((e) => e);
  expect(error).toBe(timeout.reason);
  expect(error.name).toBe('TimeoutError');
  const controller = new AbortController();
  controller.abort(new Error('cancelled by the workflow'));
  await expect(postText(`${base}/gzip`, {}, '{}', controller.signal)).rejects.toThrow('cancelled by the workflow');
});

test('a reply slower than the idle-connection timeout (4 s) still arrives, and the next call goes through', async () => {
  const reply = await postText(`${base}/slow`, {}, '{}', never());
  expect(reply.text).toBe('{"late":true}');
  expect((await postText(`${base}/gzip`, {}, '{}', never())).status).toBe(200);
});

test('a connection cut before the body ends: a TypeError "terminated"', async () => {
  const error = await postText(`${base}/cut`, {}, '{}', never()).catch((e) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect(error.message).toBe('terminated');
});
