import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { connectClient } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { SqliteStore } from '../../stores/sqlite';
import { benchmarkRun } from '../../workflows';
import { runTraceIds } from '../../worker/tracing';
import { CLI } from '../support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, uniqueQueue, until } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

jest.setTimeout(180_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }>;
  events?: Array<{ name: string; attributes: OtlpSpan['attributes'] }>;
}

/** A local OTLP/HTTP trace receiver (JSON encoding, what the exporter sends by default): every span it was sent. */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/v1/traces')
        for (const rs of JSON.parse(body).resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    spans,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue)) : undefined;
};

test('with OTEL_EXPORTER_OTLP_ENDPOINT set, a run arrives as one trace: its root span, activity spans, one span per LLM call with gen_ai attributes, evaluation events', async () => {
  const receiver = await otlpReceiver();
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 20 });
  const copilots = await startSimServer({});
  const dir = tempDir('jf-otel-');
  const home = path.join(dir, 'home');
  const queue = uniqueQueue('otel');
  const env = {
    ...process.env,
    JUDGEFLOW_HOME: home,
    JUDGEFLOW_TASK_QUEUE: queue,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  };
  const worker = spawn(process.execPath, [CLI, 'worker'], { env, stdio: 'ignore' });
  const client = await connectClient();
  try {
    const config = runConfig(dir, {
      protocol: 'lattice',
      queries: latticeGrid(2, 5),
      judge: { baseURL: judge.url, model: 'judge-model' },
      copilots: simCopilots(copilots.url, { A: 'sim-thorough' }),
    });
    const runId = `run-otel-${Date.now()}`;
    await client.workflow
      .start(benchmarkRun, { taskQueue: queue, workflowId: runId, args: [runInput(config, runId)] })
      .then((h) => h.result());
    const { traceId, spanId } = runTraceIds(runId);
    await until(
      () => receiver.spans.some((s) => s.name === 'RunWorkflow:benchmarkRun' && s.traceId === traceId),
      30_000,
    );
    const ofRun = receiver.spans.filter((s) => s.traceId === traceId);
    const store = new SqliteStore(path.join(home, 'results.db'));
    const calls = await store.llmCalls(runId);
    await store.close();
    const chat = ofRun.filter((s) => s.name.startsWith('chat '));
    expect(chat).toHaveLength(calls.length); // one span per LLM call, all in the run's trace
    const judgeSpans = chat.filter((s) => attr(s, 'judgeflow.role') === 'judge');
    expect(judgeSpans).toHaveLength(10);
    expect(
      judgeSpans.every(
        (s) =>
          attr(s, 'gen_ai.request.model') === 'judge-model' &&
          typeof attr(s, 'gen_ai.usage.input_tokens') === 'number' &&
          typeof attr(s, 'gen_ai.usage.output_tokens') === 'number',
      ),
    ).toBe(true);
    expect(new Set(chat.map((s) => attr(s, 'gen_ai.operation.name')))).toEqual(new Set(['chat']));
    const activities = ofRun.filter((s) => s.name.startsWith('RunActivity:'));
    expect(activities.map((s) => s.name)).toEqual(
      expect.arrayContaining(['RunActivity:prepareRun', 'RunActivity:writeReport']),
    );
    expect(activities.every((s) => s.parentSpanId === spanId)).toBe(true); // under the run's root span
    const root = ofRun.find((s) => s.name === 'RunWorkflow:benchmarkRun')!;
    expect(root.spanId).toBe(spanId);
    const evaluations = ofRun.flatMap((s) => s.events ?? []).filter((e) => e.name === 'gen_ai.evaluation.result');
    expect(evaluations).toHaveLength(10);
  } finally {
    worker.kill('SIGKILL');
    await client.connection.close();
    await receiver.close();
    await judge.close();
    await copilots.close();
  }
});

test('without an OTLP endpoint nothing is set up (no tracer, no exporter)', async () => {
  const { workerTracing } = await import('../../worker/tracing');
  const { OTEL_EXPORTER_OTLP_ENDPOINT: _a, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _b, ...env } = process.env;
  expect(workerTracing(env)).toBeNull();
});
