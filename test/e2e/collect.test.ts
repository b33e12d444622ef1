import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { connectWorker } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { toCsv } from '../../core/io/csv';
import { closeSharedBrowser } from '../../activities/adapters/browser';
import { createWorker } from '../../worker/createWorker';
import { benchmarkRun } from '../../workflows';
import { startSimServer, type SimServer } from '../../sim/server';
import { runConfig, tempDir, withWorker, writeQueries } from '../support/harness';
import { cabDatasetRows } from '../support/cabDataset';
import { decodedHistory, scriptedLatticeJudge } from '../support/judges';
import { installQuietRuntime } from '../support/quietTemporal';

// A chat page this project's adapter has never been tuned for: plain input, a send button, an answer streamed word by word.
const PAGE = `<!doctype html><html><body>
<main id="log"></main>
<form id="f"><input name="q" id="q" autocomplete="off"><button type="submit" id="go">Ask</button></form>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const q = document.getElementById('q').value; document.getElementById('q').value = '';
  const box = document.createElement('article'); box.className = 'bot'; document.getElementById('log').appendChild(box);
  const { answer } = await (await fetch('/page-answer?q=' + encodeURIComponent(q))).json();
  await new Promise((r) => setTimeout(r, 250));
  for (const w of answer.split(' ')) { box.append((box.textContent ? ' ' : '') + w); await new Promise((r) => setTimeout(r, 25)); }
});
</script></body></html>`;

const answerFor = (source: string, q: string) =>
  `${source} view on "${q.slice(0, 40)}": watch liquidity, funding and unlocks; size positions at 2% risk.`;

let site: http.Server;
let base: string;
let judge: SimServer;
const served: Record<string, Map<string, string>> = { api: new Map(), stream: new Map(), page: new Map() };
let inFlight = 0;
let maxInFlight = 0;
const apiStarts: number[] = [];
let authHeaders: string[] = [];

beforeAll(async () => {
  judge = await startSimServer({ handler: scriptedLatticeJudge });
  site = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await new Promise<string>((r) => {
      let s = '';
      req.on('data', (c) => (s += c)).on('end', () => r(s));
    });
    if (url.pathname === '/chat') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (url.pathname === '/page-answer') {
      const q = url.searchParams.get('q') ?? '';
      served.page.set(q, answerFor('Page', q));
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ answer: answerFor('Page', q) }));
    }
    if (url.pathname === '/api/ask') {
      const q = JSON.parse(body).question as string;
      authHeaders.push(String(req.headers.authorization));
      apiStarts.push(Date.now());
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 300));
      inFlight--;
      served.api.set(q, answerFor('API', q));
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: { answer: answerFor('API', q), id: 'conv-' + served.api.size } }));
    }
    if (url.pathname === '/api/stream') {
      const q = JSON.parse(body).q as string;
      const answer = answerFor('Stream', q);
      served.stream.set(q, answer);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const [k, w] of answer.split(' ').entries()) {
        res.write(`data: ${JSON.stringify({ delta: (k ? ' ' : '') + w })}\n\n`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return void res.end('data: [DONE]\n\n');
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeSharedBrowser();
  await judge.close();
  await new Promise((r) => site.close(r));
});

test('http, streamed http, browser and csv copilots collected across two workers store exactly what each source showed', async () => {
  const dir = tempDir();
  // Six CryptoAnalystBench queries (the published ones when ../shared has them); the CSV copilot already answered five of them.
  const dataset = cabDatasetRows();
  const picked = dataset.filter((_, i) => i % 33 === 0).slice(0, 6);
  const queries = picked.map((row, i) => ({
    id: `q${i}`,
    text: row.query,
    task: `T${i + 1}`,
    category: `C${(i % 5) + 1}`,
  }));
  const csvRows = [
    ['query', 'tags', 'Sheet_response', 'Sheet_chat_id'],
    ...picked.map((row, i) => [
      row.query,
      row.tags,
      i === 3 ? '' : answerFor('Sheet', row.query) + '\n"quoted", with commas',
      `chat-${i}`,
    ]),
  ];
  fs.writeFileSync(path.join(dir, 'answers.csv'), toCsv(csvRows));
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge' },
    copilots: [
      {
        name: 'Api',
        type: 'http',
        url: `${base}/api/ask`,
        headers: { Authorization: 'Bearer ${API_TOKEN}' },
        body: { question: '{{query}}' },
        answerPath: 'data.answer',
        conversationIdPath: 'data.id',
        concurrency: 2,
        requestsPerMinute: 600,
      },
      {
        name: 'Streamer',
        type: 'http',
        url: `${base}/api/stream`,
        body: { q: '{{query}}' },
        stream: 'sse',
        chunkPath: 'delta',
      },
      {
        name: 'Web',
        type: 'browser',
        url: `${base}/chat`,
        selectors: { input: '#q', send: '#go', answer: 'article.bot' },
        done: { quietMs: 600 },
        concurrency: 2,
        timeoutMs: 30_000,
      },
      { name: 'Sheet', type: 'csv', path: 'answers.csv' },
    ],
  });
  const env = { ...process.env, API_TOKEN: 'tok-123' };
  await withWorker(
    'collect',
    async ({ client, taskQueue, store, storeFile }) => {
      // A second worker on the same task queue: the per-copilot limits must hold across both.
      installQuietRuntime();
      const { connection, namespace } = await connectWorker();
      const second = await createWorker({
        connection,
        namespace,
        taskQueue,
        store: { kind: 'sqlite', file: storeFile },
        env,
      });
      const workflowId = 'collect-' + Date.now();
      const result = await second.runUntil(
        client.workflow.execute(benchmarkRun, {
          taskQueue,
          workflowId,
          args: [runInput(config, 'run-collect-' + Date.now())],
        }),
      );
      await connection.close();

      const stored = await store.responses(result.runId);
      const get = (copilot: string, q: string) =>
        stored.find((r) => r.copilot === copilot && r.queryId === queries.find((x) => x.text === q)!.id)!;
      for (const q of queries) {
        expect(get('Api', q.text).text).toBe(served.api.get(q.text));
        expect(get('Streamer', q.text).text).toBe(served.stream.get(q.text));
        expect(get('Web', q.text).text).toBe(served.page.get(q.text));
        expect(get('Web', q.text).html).toContain('watch liquidity');
      }
      expect(get('Api', queries[0].text).conversationId).toMatch(/^conv-/);
      expect(get('Api', queries[0].text).adapter).toBe('http');
      expect(get('Api', queries[0].text).latencyMs).toBeGreaterThanOrEqual(300);
      // CSV: matched by query text; the blank cell is missing data, not an empty answer.
      for (const [i, q] of queries.entries()) {
        const r = get('Sheet', q.text);
        if (i === 3) expect([r.status, r.text]).toEqual(['missing', null]);
        else expect(r.text).toBe(answerFor('Sheet', q.text) + '\n"quoted", with commas');
      }
      expect(get('Sheet', queries[0].text).conversationId).toBe('chat-0');
      // Limits: never more than 2 concurrent API calls across both workers, and starts paced at 600 a minute (100 ms).
      // The run's workflow spaces the starts (it holds the limits for every worker); each request then reaches the server
      // after its own activity dispatch delay, which differs between the two workers' pollers, so server-side gaps are
      // not the limit's. What the workflow controls is when each call may be sent: its scheduling, or the later `send.at`
      // it gave the activity when it took the start ahead of time (its timers are coarse). Those are ≥ 100 ms apart.
      expect(maxInFlight).toBeLessThanOrEqual(2);
      // The workflow's clock is its task's start: the WorkflowTaskStarted event just before the task that scheduled the call.
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const timeOf = new Map(
        events.map((e) => [
          Number(e.eventId),
          Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6),
        ]),
      );
      const scheduled: number[] = [];
      for (const event of events) {
        const attrs = event.activityTaskScheduledEventAttributes;
        if (attrs?.activityType?.name !== 'askCopilot') continue;
        const args = JSON.parse(Buffer.from(attrs.input!.payloads![0].data!).toString('utf8'));
        if (args.copilot === 'Api')
          scheduled.push(args.send?.at ?? timeOf.get(Number(attrs.workflowTaskCompletedEventId) - 1)!);
      }
      expect(scheduled).toHaveLength(queries.length);
      const gaps = scheduled.slice(1).map((t, i) => t - scheduled[i]);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(99);
      expect(authHeaders.every((h) => h === 'Bearer tok-123')).toBe(true);

      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.copilots.Sheet.missingResponses).toBe(1);
      // responses.jsonl beside the report carries exactly the stored answers.
      const exported = fs
        .readFileSync(path.join(path.dirname(result.reportPath), 'responses.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(exported).toHaveLength(queries.length * 4);
      for (const e of exported.filter((x) => x.copilot === 'Web'))
        expect(e.text).toBe(served.page.get(queries.find((q) => q.id === e.queryId)!.text));
      expect(report.copilots.Sheet.n).toBe(5);
      for (const name of ['Api', 'Streamer', 'Web']) expect(report.copilots[name].n).toBe(6);
    },
    env,
  );
});

test('429 with Retry-After and 500 are retried through Temporal; a copilot that never answers is a recorded timeout and the run goes on; a broken page leaves its screenshot in the store', async () => {
  const dir = tempDir();
  const attempts = new Map<string, number[]>();
  const flaky = http.createServer((req, res) => {
    let body = '';
    req
      .on('data', (c) => (body += c))
      .on('end', () => {
        const q = JSON.parse(body).question as string;
        if (req.url === '/never') return; // hangs: the copilot's timeout must fire
        const seen = attempts.get(q) ?? [];
        seen.push(Date.now());
        attempts.set(q, seen);
        if (seen.length === 1) return void res.writeHead(429, { 'retry-after': '2' }).end('{"error":"slow down"}');
        if (seen.length === 2) return void res.writeHead(500).end('{"error":"boom"}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: `ok: ${q}` }));
      });
  });
  await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
  const flakyURL = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
  const queries = [0, 1].map((i) => ({
    id: `q${i}`,
    text: `Is SOL staking worth it, case ${i}?`,
    task: 'T7',
    category: 'C4',
  }));
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge' },
    copilots: [
      {
        name: 'Flaky',
        type: 'http',
        url: `${flakyURL}/ask`,
        body: { question: '{{query}}' },
        answerPath: 'answer',
        retry: { maxAttempts: 4, initialIntervalMs: 100 },
      },
      {
        name: 'Hung',
        type: 'http',
        url: `${flakyURL}/never`,
        body: { question: '{{query}}' },
        answerPath: 'answer',
        timeoutMs: 800,
        retry: { maxAttempts: 2, initialIntervalMs: 100 },
      },
      {
        name: 'Broken',
        type: 'browser',
        url: `${base}/chat`,
        selectors: { input: '#no-such-input', answer: 'article.bot' },
        selectorTimeoutMs: 300,
        retry: { maxAttempts: 1 },
      },
    ],
  });
  try {
    await withWorker('collect-faults', async ({ client, taskQueue, store }) => {
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: 'faults-' + Date.now(),
        args: [runInput(config, 'run-cf-' + Date.now())],
      });
      for (const q of queries) {
        const times = attempts.get(q.text)!;
        expect(times.length).toBeGreaterThanOrEqual(3);
        expect(times[1] - times[0]).toBeGreaterThanOrEqual(1900); // Retry-After: 2 honoured
        expect((await store.getResponse(result.runId, q.id, 'Flaky'))!.text).toBe(`ok: ${q.text}`);
        const hung = (await store.getResponse(result.runId, q.id, 'Hung'))!;
        expect([hung.status, hung.errorKind]).toEqual(['failed', 'timeout']);
        // The worker kept the page's screenshot in the store, not on its own disk, and the failure names it.
        const broken = (await store.getResponse(result.runId, q.id, 'Broken'))!;
        expect([broken.status, broken.errorKind]).toEqual(['failed', 'selector']);
        const id = /\(screenshot: artefact:([0-9a-f]{16})\)/.exec(broken.errorMessage ?? '')![1];
        const shot = (await store.getArtefact(id))!;
        expect([shot.runId, shot.contentType, shot.bytes.subarray(1, 4).toString()]).toEqual([
          result.runId,
          'image/png',
          'PNG',
        ]);
      }
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.copilots.Flaky.n).toBe(2);
      expect(report.copilots.Hung.failedResponses).toBe(2);
      expect(report.artefacts).toHaveLength(2);
      for (const a of report.artefacts)
        expect(fs.existsSync(path.join(path.dirname(result.reportPath), a.file))).toBe(true);
      // report.md lists them too, each linked to its copy.
      const markdown = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8');
      for (const a of report.artefacts) expect(markdown).toContain(`[${a.ref}](${a.file})`);
    });
  } finally {
    flaky.closeAllConnections();
    await new Promise((r) => flaky.close(r));
  }
});

test('a CSV copilot whose column is missing is rejected when the config is loaded, naming the column', () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'answers.csv'), 'query,tags,Other_response\nq,t,a\n');
  writeQueries(dir, [{ id: 'q', text: 'q', task: 'T1', category: 'C1' }]);
  fs.writeFileSync(
    path.join(dir, 'config.yaml'),
    `protocol: lattice\nqueries: queries.jsonl\njudge: { baseURL: http://127.0.0.1:9/v1, model: j }\ncopilots:\n  - { name: Sheet, type: csv, path: answers.csv }\n`,
  );
  const { loadRunConfig } = require('../../client/config');
  expect(() => loadRunConfig(path.join(dir, 'config.yaml'))).toThrow(
    /copilots\[0\] \(Sheet\):.*no column "Sheet_response"/,
  );
});

test('a copilot that echoes its credential back in an error never lets the key reach the store, reports or any workflow history', async () => {
  const dir = tempDir();
  const echo = http.createServer((req, res) => {
    req
      .resume()
      .on('end', () =>
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `bad credential ${req.headers.authorization}` })),
      );
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/ask`;
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries: [{ id: 'q0', text: 'Is ETH undervalued?', task: 'T11', category: 'C4' }],
    judge: { baseURL: judge.url, model: 'judge' },
    copilots: [
      {
        name: 'Echo',
        type: 'http',
        url,
        headers: { Authorization: 'Bearer ${LEAK_KEY}' },
        body: { q: '{{query}}' },
        answerPath: 'answer',
      },
      {
        name: 'Broken',
        type: 'http',
        url,
        headers: { 'X-Api-Key': '${NEWLINE_KEY}' },
        body: { q: '{{query}}' },
        answerPath: 'answer',
      },
    ],
  });
  const env = { ...process.env, LEAK_KEY: 'leak-9c1f0e-secret', NEWLINE_KEY: 'nl-4d2a7b-secret\nx' };
  try {
    await withWorker(
      'collect-leak',
      async ({ client, taskQueue, store }) => {
        const runId = 'run-leak-' + Date.now();
        const result = await client.workflow.execute(benchmarkRun, {
          taskQueue,
          workflowId: runId,
          args: [runInput(config, runId)],
        });
        const echoed = (await store.getResponse(runId, 'q0', 'Echo'))!;
        expect([echoed.status, echoed.errorKind]).toEqual(['failed', 'http']);
        expect(echoed.errorMessage).toContain('bad credential Bearer ***');
        const broken = (await store.getResponse(runId, 'q0', 'Broken'))!;
        expect([broken.status, broken.errorKind]).toEqual(['failed', 'config']);
        expect(broken.errorMessage).toContain('NEWLINE_KEY contains a line break');
        const everything = [JSON.stringify(await store.responses(runId))];
        for (const f of fs.readdirSync(path.dirname(result.reportPath)))
          if (f !== 'artefacts')
            everything.push(fs.readFileSync(path.join(path.dirname(result.reportPath), f), 'latin1'));
        for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${runId}"` }))
          everything.push(decodedHistory(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()));
        expect(everything.length).toBeGreaterThan(6); // store, 5 files, parent and child histories
        for (const text of everything) {
          expect(text).not.toContain('leak-9c1f0e');
          expect(text).not.toContain('nl-4d2a7b');
        }
      },
      env,
    );
  } finally {
    echo.closeAllConnections(); // fetch keeps connections alive; close() alone would wait for them
    await new Promise((r) => echo.close(r));
  }
});
