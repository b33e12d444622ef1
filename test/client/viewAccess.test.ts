import http from 'node:http';
import path from 'node:path';
import fs from 'node:fs';
import { startViewServer, STREAM_REPORTS_ABOVE_BYTES, type ViewServer } from '../../client/view/server';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';
import { writeFinishedRun } from '../support/studyRun';
import { designStudy } from '../../client/study/create';
import { openNew } from '../../stores';
import type { ResultsStore } from '../../core/model/store';

/** A GET with the Host header and other headers as given (fetch will not send a foreign Host). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      let body = '';
      res
        .on('data', (c) => (body += c))
        .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

let store: ResultsStore;
const servers: ViewServer[] = [];
beforeAll(() => {
  store = openNew({ kind: 'sqlite', file: path.join(tempDir('jf-view-access-'), 'results.db') });
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await store.close();
});

test('view answers only to the Host it was bound for: a DNS-rebinding name is refused before any run is read', async () => {
  const view = await startViewServer({ store, port: 0 });
  servers.push(view);
  const port = new URL(view.url).port;
  expect((await get(`${view.url}api/runs`)).status).toBe(200);
  expect((await get(`${view.url}api/runs`, { host: `localhost:${port}` })).status).toBe(200);
  const foreign = await get(`${view.url}api/runs`, { host: `evil.example:${port}` });
  expect(foreign.status).toBe(421);
  expect(foreign.body).toContain('evil.example');
  expect((await get(`${view.url}`, { host: 'evil.example' })).status).toBe(421);
});

test('view with a token: nothing without it, ?token= once sets a cookie, a bearer header works in any letter case', async () => {
  const token = 'view-token-0123456789abcdef';
  const view = await startViewServer({ store, port: 0, token });
  servers.push(view);
  expect((await get(`${view.url}api/runs`)).status).toBe(401);
  expect((await get(`${view.url}api/runs?token=wrong-token-0123456789`)).status).toBe(401);
  const login = await get(`${view.url}snapshots?token=${token}`);
  expect(login.status).toBe(303);
  expect(login.headers.location).toBe('/snapshots');
  const cookie = String(login.headers['set-cookie']).split(';')[0];
  expect(String(login.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
  expect((await get(`${view.url}snapshots`, { cookie })).status).toBe(200);
  expect((await get(`${view.url}api/runs`, { authorization: `bearer ${token}` })).status).toBe(200);
});

test('judgeflow view --host 0.0.0.0 without a token refuses to start and says why', async () => {
  const home = tempDir('jf-view-home-');
  const result = await cliInProcess(['view', '--host', '0.0.0.0', '--port', '0'], {
    JUDGEFLOW_HOME: home,
    JUDGEFLOW_VIEW_TOKEN: '',
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(
    /--host 0\.0\.0\.0 would let anyone who can reach this machine read every run.*--token SECRET or JUDGEFLOW_VIEW_TOKEN/,
  );
});

test('a report larger than the streaming bound is served from the report.html the run wrote, the view’s links added, not rebuilt', async () => {
  const dir = tempDir('jf-view-big-');
  const big = `<!doctype html><html><body><header class="page-header"><h1>big</h1></header>${'<p>answer</p>\n'.repeat(Math.ceil(STREAM_REPORTS_ABOVE_BYTES / 14) + 10)}</body></html>`;
  fs.writeFileSync(path.join(dir, 'report.html'), big);
  await store.createRun({
    runId: 'run-big',
    protocol: 'lattice',
    snapshotId: 'snap-none',
    rubricVersion: 'rv',
    judge: { model: 'm', baseURL: 'x', temperature: 0 },
    copilots: ['A'],
    startedAt: new Date().toISOString(),
    sourceRunId: null,
    config: {},
  });
  await store.finishRun('run-big', 'completed', path.join(dir, 'report.json'), {}, new Date().toISOString());
  const view = await startViewServer({ store, port: 0 });
  servers.push(view);
  const page = await get(`${view.url}runs/run-big`);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<header class="page-header"><p><a href="/">← all runs</a>');
  expect(page.body.length).toBeGreaterThan(STREAM_REPORTS_ABOVE_BYTES);
  expect(page.body.endsWith('</body></html>')).toBe(true);
});

test('the view lists studies and shows each one’s report', async () => {
  await writeFinishedRun(store, 'run-study-view', tempDir('jf-view-study-'));
  await designStudy(store, { runId: 'run-study-view', name: 'pref', perItem: 1, seed: 'view' });
  const view = await startViewServer({ store, port: 0 });
  servers.push(view);
  const list = await get(`${view.url}studies`);
  expect(list.status).toBe(200);
  expect(list.body).toContain('href="/studies/pref"');
  const report = await get(`${view.url}studies/pref`);
  expect(report.status).toBe(200);
  // Rendered, not shown as Markdown source: headings and tables are HTML.
  expect(report.body).toContain('<h3>Human preference study pref</h3>');
  expect(report.body).not.toMatch(/<pre|^# /m);
  expect(report.body).toMatch(
    /<table><thead><tr><th>Copilot<\/th><th>Win rate as Table 7 prints it \(wins \/ appearances\)<\/th><th>Win rate, ties excluded<\/th>/,
  );
  expect(report.body).toContain('0 annotations by 0 annotators');
  expect((await get(`${view.url}studies/nope`)).status).toBe(404);
});

test('a path with a malformed percent-encoding is a bad request (400) that says so, not a server error', async () => {
  const view = await startViewServer({ store, port: 0 });
  servers.push(view);
  for (const bad of ['runs/%E0%A4%A', 'studies/%zz', 'schedules/%', 'api/runs/%C3%28']) {
    const answer = await get(`${view.url}${bad}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('malformed percent-encoding');
  }
  expect((await get(`${view.url}runs/no%20such%20run`)).status).toBe(404);
});
