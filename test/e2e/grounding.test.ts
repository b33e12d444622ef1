import fs from 'node:fs';
import ExcelJS from 'exceljs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { connectClient } from '../../client/connection';
import { SqliteStore } from '../../stores/sqlite';
import { evidenceText } from '../../core/grounding/checks';
import { toCsv } from '../../core/io/csv';
import { groundedReply, type GroundedPlan } from '../../sim/groundedCopilot';
import { startSimServer, type SimServer } from '../../sim/server';
import { latticeGrid, runConfig, tempDir, uniqueQueue, until, withWorker } from '../support/harness';
import { startWorkerProcess } from '../support/cli';
import { simServersForFile } from '../support/sims';
import { rejudgeRun } from '../support/rejudge';
import { decodedHistory } from '../support/judges';

jest.setTimeout(240_000);

const sim = simServersForFile({ judge: {}, copilots: {} });

/** Planted claims per answer, and the verification rate they make (exact and derivable claims over all claims). */
const PLANS: Record<string, GroundedPlan & { rate: number }> = {
  Clean: { claims: 4, derivable: 1, fabricated: 0, contradicted: 0, rate: 1 },
  Quarter: { claims: 4, derivable: 1, fabricated: 1, contradicted: 0, rate: 0.75 },
  Half: { claims: 4, derivable: 0, fabricated: 1, contradicted: 1, rate: 0.5 },
};
const TRACED: GroundedPlan = { claims: 4, derivable: 0, fabricated: 2, contradicted: 0 };
const COPILOTS = [...Object.keys(PLANS), 'Traced'];

const groundingRequests = (judge: SimServer, from = 0) =>
  judge.requests
    .slice(from)
    .filter((r) => String(r.body?.response_format?.json_schema?.name ?? '').startsWith('grounding_'));
const userPrompt = (body: any): string => body.messages.find((m: any) => m.role === 'user').content;
const tagged = (text: string, tag: string) =>
  text.match(new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`))?.[1] ?? null;

/**
 * A LATTICE run with grounding checks: three http copilots whose replies carry context and sources (contextPath,
 * sourcesPath), and a CSV copilot whose answers and context come from trace files in the reference harness's layout
 * (the last query's trace is missing: that answer, from the CSV, has no context).
 */
function setUp(
  dir: string,
  queries: Array<Record<string, unknown>>,
  judge: Record<string, unknown>,
  protocol: Record<string, unknown> = { protocol: 'lattice', queries },
) {
  const base = sim.copilots.url.replace(/\/v1$/, '');
  const traces = path.join(dir, 'agent-output');
  fs.mkdirSync(path.join(traces, 'Traced', 'traces'), { recursive: true });
  const rows: string[][] = [['query', 'Traced_response', 'Traced_chat_id']];
  queries.forEach((q, i) => {
    const chatId = `chat-${i}`;
    const reply = groundedReply(String(q.text), TRACED);
    const last = i === queries.length - 1;
    rows.push([String(q.text), last ? reply.answer : '', chatId]);
    if (last) return;
    const span = {
      name: 'Cyrpto Final Response',
      span_kind: 'LLM',
      'context.span_id': `span-${i}`,
      'attributes.input.value': {
        messages: [
          { role: 'system', content: 'You are a crypto analyst.' },
          { role: 'user', content: reply.context.join('\n') },
        ],
      },
      'attributes.output.value': { choices: [{ message: { role: 'assistant', content: reply.answer } }] },
    };
    const trace = {
      session_id: chatId,
      traces: [{ trace_id: `trace-${i}`, spans: [{ name: 'tool call', 'attributes.input.value': 'ignored' }, span] }],
    };
    fs.writeFileSync(path.join(traces, 'Traced', 'traces', `${chatId}.json`), JSON.stringify(trace));
  });
  fs.writeFileSync(path.join(dir, 'answers.csv'), toCsv(rows));
  return runConfig(dir, {
    ...(protocol as { queries: string }),
    grounding: { checks: ['hallucination', 'citations'] },
    ...judge, // may set its own grounding block
    copilots: [
      ...Object.entries(PLANS).map(([name, p]) => ({
        name,
        type: 'http',
        url: `${base}/_sim/grounded?claims=${p.claims}&derivable=${p.derivable}&fabricated=${p.fabricated}&contradicted=${p.contradicted}`,
        body: { query: '{{query}}' },
        answerPath: 'answer',
        contextPath: 'context',
        sourcesPath: 'sources',
      })),
      { name: 'Traced', type: 'csv', path: path.join(dir, 'answers.csv'), traces: { dir: traces } },
    ],
  });
}

test('planted fabrications: each copilot’s verification rate is its planted share; prompts carry the copilot’s own context and no name; report.html shows the claims', async () => {
  const queries = latticeGrid(2, 4); // 8 queries
  await withWorker('grounding', async (world) => {
    const { client, taskQueue, store, dir } = world;
    const before = sim.judge.requests.length;
    const config = setUp(dir, queries, { judge: { baseURL: sim.judge.url, model: 'judge-g', concurrency: 4 } });
    const runId = 'run-grounding-' + Date.now();
    const result = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(config, runId)] })
    ).result();
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    const g = report.grounding;

    for (const [name, plan] of Object.entries(PLANS)) {
      expect(g.copilots[name]).toMatchObject({
        responses: 8,
        responsesWithContext: 8,
        claims: 32,
        verificationRate: plan.rate,
        checksFailed: 0,
      });
      expect(g.copilots[name].verified + g.copilots[name].derivable).toBe(32 * plan.rate);
      expect(g.copilots[name].fabricated).toBe(8 * plan.fabricated);
      expect(g.copilots[name].contradicted).toBe(8 * plan.contradicted);
    }
    // The traced copilot: seven answers from traces (half their claims absent from the trace's context), one without.
    expect(g.copilots.Traced).toMatchObject({
      responses: 8,
      responsesWithContext: 7,
      claims: 28,
      verificationRate: 0.5,
      uncheckedClaims: 4,
    });
    // Labels from the rate: 1 is factual, 0.75 and 0.5 partially factual.
    expect(g.copilots.Clean.labels).toEqual({ factual: 8, partial: 0, hallucinated: 0 });
    expect(g.copilots.Quarter.labels).toEqual({ factual: 0, partial: 8, hallucinated: 0 });
    // Citations: fabricated claims cite nothing (missing); contradicted ones cite a source that says otherwise.
    // citationCompleteness by the reference's formula: claims with a citation ÷ (all claims − claims needing none), a wrong
    // citation included; judgeflow's stricter correctCitationCompleteness counts only correct ones.
    const completeness = (c: any) => c.claimsWithCitations / 32;
    expect(g.copilots.Clean).toMatchObject({
      citationPrecision: 1,
      citationCompleteness: 1,
      correctCitationCompleteness: 1,
      missingCitations: 0,
    });
    expect(g.copilots.Quarter).toMatchObject({
      citationPrecision: 1,
      citationCompleteness: 0.75,
      correctCitationCompleteness: 0.75,
      missingCitations: 8,
    });
    expect(g.copilots.Half).toMatchObject({
      citationPrecision: 2 / 3,
      citationCompleteness: 0.75,
      correctCitationCompleteness: 0.5,
      missingCitations: 8,
      incorrectlyCited: 8,
    });
    for (const name of Object.keys(PLANS))
      expect(g.copilots[name].citationCompleteness).toBeCloseTo(completeness(g.copilots[name]), 12);
    // The labels are the ones the judge gave (its answers, tallied here from what it sent back), beside judgeflow's.
    const answers = sim.judge.requests
      .slice(before)
      .filter((r) => r.body?.response_format?.json_schema?.name === 'grounding_hallucination')
      .map((r) => JSON.parse(r.content!));
    const citations = sim.judge.requests
      .slice(before)
      .filter((r) => r.body?.response_format?.json_schema?.name === 'grounding_citations')
      .map((r) => JSON.parse(r.content!));
    const tally = (xs: string[], v: string) => xs.filter((x) => x === v).length;
    const judgeLabels = COPILOTS.map((n) => g.copilots[n].judgeLabels);
    expect(judgeLabels.reduce((n, l) => n + l.factual, 0)).toBe(
      tally(
        answers.map((a) => a.label),
        'factual',
      ),
    );
    expect(judgeLabels.reduce((n, l) => n + l.partiallyFactual, 0)).toBe(
      tally(
        answers.map((a) => a.label),
        'partially factual',
      ),
    );
    expect(judgeLabels.reduce((n, l) => n + l.hallucinated, 0)).toBe(
      tally(
        answers.map((a) => a.label),
        'hallucinated',
      ),
    );
    expect(g.copilots.Clean.judgeLabels).toEqual({ factual: 8, partiallyFactual: 0, hallucinated: 0 });
    expect(g.copilots.Quarter.judgeLabels).toEqual({ factual: 0, partiallyFactual: 8, hallucinated: 0 });
    expect(g.copilots.Half.judgeLabels).toEqual({ factual: 0, partiallyFactual: 0, hallucinated: 8 });
    expect(g.copilots.Quarter.statedVerificationRate).toBeCloseTo(0.75, 12);
    const citationLabels = COPILOTS.map((n) => g.copilots[n].citationLabels);
    expect(citationLabels.reduce((n, l) => n + l.partiallyCorrect, 0)).toBe(
      tally(
        citations.map((a) => a.label),
        'partially correct',
      ),
    );
    expect(g.copilots.Clean.citationLabels).toEqual({ correct: 8, partiallyCorrect: 0, incorrect: 0 });
    expect(g.copilots.Half.citationLabels).toEqual({ correct: 0, partiallyCorrect: 8, incorrect: 0 });
    expect(
      g.answers
        .filter((a: any) => a.copilot === 'Half')
        .every((a: any) => a.judgeLabel === 'hallucinated' && a.label === 'partial'),
    ).toBe(true);
    expect(g.copilots.Traced.citationPrecision).toBeNull(); // its traces give no sources
    for (const name of COPILOTS) {
      const ci = g.copilots[name].ci95;
      expect(ci.low).toBeLessThanOrEqual(g.copilots[name].verificationRate);
      expect(ci.high).toBeGreaterThanOrEqual(g.copilots[name].verificationRate);
    }
    // Every fabricated or contradicted figure disagrees with the copilots that state the true one.
    expect(g.crossCopilotConflicts.length).toBeGreaterThan(0);
    for (const c of g.crossCopilotConflicts)
      expect(new Set(c.claims.map((x: any) => x.copilot)).size).toBeGreaterThan(1);
    expect(
      g.crossCopilotConflicts.some(
        (c: any) => c.claims.some((x: any) => x.copilot === 'Half') && c.claims.some((x: any) => x.copilot === 'Clean'),
      ),
    ).toBe(true);
    expect(Object.keys(g.byCategory)).toEqual(expect.arrayContaining(['task', 'category']));

    // Every grounding prompt: that copilot's own context (as stored) with its own answer, and no copilot's name.
    const responses = await store.responses(result.runId);
    const byText = new Map(responses.map((r) => [r.text!, r]));
    const requests = groundingRequests(sim.judge, before);
    expect(requests.filter((r) => r.body.response_format.json_schema.name === 'grounding_hallucination')).toHaveLength(
      3 * 8 + 7,
    );
    expect(requests.filter((r) => r.body.response_format.json_schema.name === 'grounding_extraction')).toHaveLength(1);
    expect(requests.filter((r) => r.body.response_format.json_schema.name === 'grounding_citations')).toHaveLength(
      3 * 8,
    );
    for (const r of requests) {
      const prompt = JSON.stringify(r.body.messages);
      for (const name of COPILOTS) expect(prompt).not.toContain(name);
      const response = byText.get(tagged(userPrompt(r.body), 'response')!)!;
      expect(response).toBeDefined();
      if (r.body.response_format.json_schema.name === 'grounding_hallucination') {
        expect(tagged(userPrompt(r.body), 'context')).toBe(evidenceText(response.context, response.sources));
        expect(response.context).toBe(
          groundedReply(
            byQuery(queries, response.queryId),
            response.copilot === 'Traced' ? TRACED : PLANS[response.copilot],
          ).context.join(response.copilot === 'Traced' ? '\n' : '\n\n'),
        );
      }
    }
    // Every claim stored with its status and, when supported, the excerpt of the context that supports it.
    const checks = await store.groundingChecks(result.runId);
    expect(checks).toHaveLength(4 * 8);
    const exact = checks.flatMap((c) => c.claims).filter((c) => c.status === 'exact');
    expect(exact.every((c) => c.excerpt && byText.size && c.text.includes(c.excerpt.split(': ')[1]))).toBe(true);
    // Cost counts every grounding call with the judge's.
    expect((await store.llmCalls(result.runId)).filter((c) => c.role === 'judge')).toHaveLength(
      sim.judge.requests.length - before,
    );
    // Context stays in the store: no workflow history carries any of it.
    let histories = 0;
    for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${runId}"` })) {
      histories++;
      const history = decodedHistory(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory());
      expect(history).toContain(runId);
      for (const r of responses.filter((x) => x.context)) expect(history).not.toContain(r.context!.split('\n')[0]);
    }
    expect(histories).toBeGreaterThan(0);

    const html = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.html'), 'utf8');
    expect(html).toContain('id="grounding-table"');
    const anExact = exact[0];
    expect(html).toContain(anExact.text);
    expect(html).toContain(anExact.excerpt!);
    // The drill-down carries each answer's context (shown under "Context the copilot had").
    const drill = JSON.parse(
      html.match(/<script type="application\/json" id="report-data"[^>]*>([\s\S]*?)<\/script>/)![1],
    ).drill;
    const row = drill.rows.find((r: any) => r.c === 'Quarter');
    expect(row.ctx).toBe(responses.find((r) => r.copilot === 'Quarter' && r.queryId === row.q)!.context);
    const md = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8');
    expect(md).toContain('## Grounding');
    expect(md).toMatch(/Verification rate by task \(claims checked\)/);
    expect(html).toContain('Verification rate by category (claims checked)');

    // rejudge --grounding: only the grounding checks are asked again; the protocol's verdicts come from stored answers.
    const beforeRejudge = sim.judge.requests.length;
    const again = await rejudgeRun(world, result.runId, { grounding: true }, runId + '-g');
    const asked = sim.judge.requests.slice(beforeRejudge);
    expect(groundingRequests(sim.judge, beforeRejudge)).toHaveLength(requests.length);
    expect(asked).toHaveLength(requests.length); // not one protocol judge call
    const rejudged = JSON.parse(fs.readFileSync(again.reportPath, 'utf8'));
    for (const name of COPILOTS)
      expect(rejudged.grounding.copilots[name].verificationRate).toBe(g.copilots[name].verificationRate);
    expect((await store.judgments(again.runId)).length).toBe((await store.judgments(result.runId)).length);
  });
});

function byQuery(queries: Array<Record<string, unknown>>, id: string): string {
  return String(queries.find((q) => q.id === id)!.text);
}

test('a worker killed mid-grounding: every check stored once, none lost, none asked again beyond those in flight', async () => {
  const CONCURRENCY = 3;
  const judge = await startSimServer({ latencyMs: 150 });
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const queries = latticeGrid(2, 5); // 10 queries
  const config = setUp(dir, queries, { judge: { baseURL: judge.url, model: 'judge-g', concurrency: CONCURRENCY } });
  const env = { ...process.env, JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: uniqueQueue('grounding-kill') };
  let worker = startWorkerProcess(env);
  const client = await connectClient();
  const store = new SqliteStore(path.join(home, 'results.db'));
  try {
    const runId = 'run-grounding-kill-' + Date.now();
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue: env.JUDGEFLOW_TASK_QUEUE,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    await until(async () => (await store.groundingChecks(runId).catch(() => [])).length >= 12, 120_000);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    const atKill = groundingRequests(judge).length;
    expect((await store.groundingChecks(runId)).length).toBeLessThan(40); // the kill landed mid-grounding
    worker = startWorkerProcess(env);
    const result = await handle.result();
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    for (const [name, plan] of Object.entries(PLANS))
      expect(report.grounding.copilots[name].verificationRate).toBe(plan.rate);
    expect(report.grounding.copilots.Traced.verificationRate).toBe(0.5);
    const checks = await store.groundingChecks(runId);
    expect(checks).toHaveLength(4 * 10);
    expect(new Set(checks.map((c) => `${c.queryId}/${c.copilot}`)).size).toBe(40);
    expect(checks.every((c) => c.status !== 'failed')).toBe(true);
    // 3 copilots × 10 × 2 calls + the traced copilot's 10 single calls; a repeat only for a call in flight at the kill.
    const expected = 3 * 10 * 2 + 10;
    const requests = groundingRequests(judge);
    const asked = new Map<string, number>();
    for (const r of requests)
      asked.set(JSON.stringify(r.body.messages), (asked.get(JSON.stringify(r.body.messages)) ?? 0) + 1);
    expect(asked.size).toBe(expected);
    expect(requests.length).toBeLessThanOrEqual(expected + CONCURRENCY);
    expect(atKill).toBeLessThan(expected);
  } finally {
    worker.kill('SIGKILL');
    await store.close();
    await client.connection.close();
    await judge.close();
  }
});

test('every protocol: a CryptoAnalystBench run checks grounding the same way (units of the protocol and grounding items side by side)', async () => {
  const texts = [
    'How much TVL does Aave hold now?',
    'Is Lido losing share to restaking?',
    'What are Pendle fees this month?',
    'Is Hyperliquid open interest rising?',
  ];
  await withWorker('grounding-cab', async ({ client, taskQueue, store, dir }) => {
    const file = path.join(dir, 'dataset.csv');
    fs.writeFileSync(
      file,
      toCsv([
        ['query', 'tags'],
        ...texts.map((t, i) => [t, i % 2 ? 'On-Chain Analytics & Flows' : 'Market Data & Price Discovery']),
      ]),
    );
    const queries = texts.map((text) => ({ text }));
    // Stored context limited to 1,000 characters: Clean's replies carry 3,000 characters of tool log after their facts.
    const config = setUp(
      dir,
      queries,
      { judge: { baseURL: sim.judge.url, model: 'judge-cab', concurrency: 4 }, grounding: { maxContextChars: 1000 } },
      { protocol: 'cab', queries: file },
    );
    const clean = config.copilots.find((c) => c.name === 'Clean') as { url: string };
    clean.url += '&padding=3000';
    const runId = 'run-grounding-cab-' + Date.now();
    const result = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(config, runId)] })
    ).result();
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    for (const [name, plan] of Object.entries(PLANS))
      expect(report.grounding.copilots[name]).toMatchObject({ responses: 4, claims: 16, verificationRate: plan.rate });
    expect(report.grounding.copilots.Traced).toMatchObject({ responsesWithContext: 3, verificationRate: 0.5 });
    expect(Object.keys(report.grounding.byCategory.tags).sort()).toEqual([
      'Market Data & Price Discovery',
      'On-Chain Analytics & Flows',
    ]);
    // The protocol's own verdicts are all there: one per response, grounding items apart.
    expect((await store.judgments(result.runId)).filter((j) => j.status === 'ok')).toHaveLength(4 * 4);
    expect(await store.groundingChecks(result.runId)).toHaveLength(16);
    expect(report.grounding.copilots.Clean.contextTruncated).toBe(4);
    expect(report.grounding.copilots.Quarter.contextTruncated).toBe(0);
    const cut = (await store.responses(result.runId)).filter((r) => r.copilot === 'Clean');
    expect(cut.every((r) => r.context!.length < 1200 && r.context!.includes('[context cut by judgeflow (2'))).toBe(
      true,
    );
    expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toMatch(
      /Warning: 4 answers of Clean had their context cut/,
    );
    const workbook = fs.readdirSync(path.dirname(result.reportPath)).find((f) => f.endsWith('.xlsx'))!;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(path.dirname(result.reportPath), workbook));
    expect(wb.worksheets.map((w) => w.name)).toEqual(
      expect.arrayContaining(['Grounding', 'Grounding Claims', 'Grounding Conflicts', 'Grounding by Category']),
    );
    expect(wb.getWorksheet('Grounding Claims')!.rowCount).toBe(1 + 16 * 3 + 12 + 4);
  });
});

test('a panel: every member checks every answer (its own stored check); a grounding judge of its own checks each answer once', async () => {
  const queries = latticeGrid(1, 3);
  await withWorker('grounding-panel', async ({ client, taskQueue, store, dir }) => {
    const judges = {
      judges: [
        { name: 'first', baseURL: sim.judge.url, model: 'judge-1' },
        { name: 'second', baseURL: sim.judge.url, model: 'judge-2' },
      ],
    };
    const panel = setUp(dir, queries, judges);
    const runId = 'run-grounding-panel-' + Date.now();
    const result = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(panel, runId)] })
    ).result();
    const checks = await store.groundingChecks(result.runId);
    expect(checks).toHaveLength(4 * 3 * 2);
    expect(new Set(checks.map((c) => c.judgeName))).toEqual(new Set(['first', 'second']));
    expect(checks.filter((c) => c.judgeName === 'second').every((c) => c.judge.model === 'judge-2')).toBe(true);
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    for (const [name, plan] of Object.entries(PLANS))
      expect(report.grounding.copilots[name]).toMatchObject({ claims: 2 * 12, verificationRate: plan.rate });

    const before = sim.judge.requests.length;
    const own = setUp(tempDir(), queries, {
      ...judges,
      grounding: { judge: { baseURL: sim.judge.url, model: 'grounding-judge' } },
    });
    const ownId = 'run-grounding-own-' + Date.now();
    const second = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: ownId, args: [runInput(own, ownId)] })
    ).result();
    const ownChecks = await store.groundingChecks(second.runId);
    expect(ownChecks).toHaveLength(4 * 3);
    expect(ownChecks.every((c) => c.judgeName === '' && c.judge.model === 'grounding-judge')).toBe(true);
    const grounding = groundingRequests(sim.judge, before);
    expect(grounding.every((r) => r.model === 'grounding-judge')).toBe(true);
    expect(grounding).toHaveLength(3 * 3 * 2 + 3);
  });
});

test('a grounding judge that fails every attempt: each check recorded as failed (missing data), the protocol’s verdicts unaffected', async () => {
  const queries = latticeGrid(1, 2);
  await withWorker('grounding-failing', async ({ client, taskQueue, store, dir }) => {
    const judge = { baseURL: sim.judge.url, model: 'judge-ok', maxAttempts: 2 };
    const config = setUp(dir, queries, {
      judge,
      grounding: { judge: { baseURL: sim.judge.url, model: 'fault-500:judge' } },
    });
    const runId = 'run-grounding-failing-' + Date.now();
    const result = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(config, runId)] })
    ).result();
    const checks = await store.groundingChecks(result.runId);
    expect(checks).toHaveLength(4 * 2);
    expect(checks.every((c) => c.status === 'failed' && /HTTP 500|500/.test(c.error ?? ''))).toBe(true);
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.grounding.copilots.Clean).toMatchObject({
      responses: 2,
      responsesWithContext: 2,
      checksFailed: 2,
      claims: 0,
      verificationRate: null,
    });
    expect((await store.judgments(result.runId)).filter((j) => j.status === 'ok')).toHaveLength(4 * 2);
  });
});

test('grounding checks and repeated samples judged in batches: the same verification rates, every verdict and check from a batch, no live judge call', async () => {
  const judge = await startSimServer({ batchSeconds: 0.3 });
  const dir = tempDir();
  const queries = latticeGrid(1, 5); // 5 queries × 4 copilots, 2 samples
  const config = setUp(dir, queries, {
    judge: { baseURL: judge.url, model: 'judge-g', batch: true, batchPollSeconds: 1, samples: 2 },
  });
  try {
    await withWorker('grounding-batch', async ({ client, taskQueue, store }) => {
      const runId = 'run-grounding-batch-' + Date.now();
      const result = await (
        await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(config, runId)] })
      ).result();
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      for (const [name, plan] of Object.entries(PLANS))
        expect(report.grounding.copilots[name].verificationRate).toBe(plan.rate);
      expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(4 * 5 * 2);
      expect((await store.groundingChecks(runId)).filter((c) => c.status !== 'failed')).toHaveLength(4 * 5);
      expect(judge.requests.filter((r) => !r.batch && r.path === '/v1/chat/completions')).toHaveLength(0);
      // Verdicts and claims in round 1; the citation checks, which need the claims, in round 2.
      expect((await store.judgeBatches(runId)).map((b) => b.key.replace(/^judge\/[\w-]{8}\//, 'judge/'))).toEqual([
        'judge/1/1',
        'judge/2/1',
      ]);
      expect(report.cost.judge['judge-g']).toMatchObject({ batchCalls: report.cost.judge['judge-g'].calls });
    });
  } finally {
    await judge.close();
  }
});
