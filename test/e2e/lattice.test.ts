import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { parseCsv } from '../../core/io/csv';
import { latticeGrid, runConfig, tempDir, withWorker } from '../support/harness';
import { cliInProcess } from '../support/cliInProcess';
import { decodedHistory, gradedText, scriptedLatticeJudge, scriptedScore } from '../support/judges';
import { simServersForFile } from '../support/sims';

// Independent of rubrics/lattice: the published weight table, typed in again.
const WEIGHTS: Record<string, number[]> = {
  C1: [15, 25, 15, 15, 15, 15],
  C2: [15, 20, 20, 15, 15, 15],
  C3: [20, 15, 20, 20, 10, 15],
  C4: [15, 10, 30, 20, 10, 15],
  C5: [25, 15, 25, 10, 10, 15],
};
const DIMS = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'];
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const sim = simServersForFile({ judge: { handler: scriptedLatticeJudge }, copilots: {} });

function config(dir: string, queries: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: sim.judge.url, model: 'judge-model-x', concurrency: 4 },
    copilots: [
      { name: 'Sorin', type: 'openai', baseURL: sim.copilots.url, model: 'sim-thorough', apiKeyEnv: 'SORIN_KEY' },
      { name: 'Surfboard', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' },
    ],
    ...extra,
  });
}

test('a LATTICE run through real Temporal matches figures computed from the judge answers; no copilot name or key leaks', async () => {
  const { judge, copilots } = sim;
  const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T2', 'T9', 'T16'].includes(q.task as string));
  queries[0].history = [
    { role: 'user', content: 'I hold 2 ETH.' },
    { role: 'assistant', content: 'Noted.' },
  ];
  queries[1].id = '=HYPERLINK("http://127.0.0.1:9/x","click")'; // a formula a spreadsheet would run
  const env = { ...process.env, SORIN_KEY: 'canary-7f3e1d-secret' };
  await withWorker(
    'lattice-e2e',
    async ({ client, taskQueue, store, storeFile }) => {
      const judgeBefore = judge.requests.length;
      const copilotBefore = copilots.requests.length;
      const cfg = config(tempDir(), queries);
      const handle = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: 'e2e-' + Date.now(),
        args: [runInput(cfg, 'run-e2e-' + Date.now())],
      });
      const result = await handle.result();
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));

      // Recompute every figure from what the judge actually saw and answered.
      const judgeRequests = judge.requests.slice(judgeBefore);
      expect(judgeRequests).toHaveLength(queries.length * 2);
      const byText = new Map<string, string>(); // response text -> copilot (from the stored responses)
      for (const r of await store.responses(result.runId)) byText.set(r.text!, r.copilot);
      const totals: Record<string, number[]> = { Sorin: [], Surfboard: [] };
      const dims: Record<string, Record<string, number[]>> = { Sorin: {}, Surfboard: {} };
      const tasks: Record<string, Record<string, number[]>> = { Sorin: {}, Surfboard: {} };
      for (const req of judgeRequests) {
        expect(req.body.response_format.type).toBe('json_schema');
        expect(req.body.response_format.json_schema.schema.type).toBe('object');
        const text = gradedText(req.body);
        const prompt = JSON.stringify(req.body.messages);
        expect(prompt).not.toMatch(/Sorin|Surfboard/);
        const copilot = byText.get(text)!;
        expect(copilot).toBeDefined();
        const task = prompt.match(/Task type: (T\d+)/)![1];
        const category = prompt.match(/Query category: (C\d)/)![1];
        let total: number;
        if (task === 'T16') {
          total = scriptedScore(text, 'Refusal') * 10;
          (dims[copilot].Refusal ??= []).push(scriptedScore(text, 'Refusal'));
        } else {
          total = DIMS.reduce((s, d, k) => s + WEIGHTS[category][k] * scriptedScore(text, d), 0) / 10;
          DIMS.forEach((d) => (dims[copilot][d] ??= []).push(scriptedScore(text, d)));
        }
        totals[copilot].push(total);
        (tasks[copilot][task] ??= []).push(total);
      }
      for (const c of ['Sorin', 'Surfboard']) {
        const got = report.copilots[c];
        expect(got.n).toBe(queries.length);
        expect(got.failed).toBe(0);
        expect(got.score).toBeCloseTo(avg(totals[c]), 9);
        for (const d of [...DIMS, 'Refusal']) expect(got.dimensions[d]).toBeCloseTo(avg(dims[c][d]), 9);
        for (const t of ['T1', 'T2', 'T9', 'T16']) expect(got.tasks[t]).toBeCloseTo(avg(tasks[c][t]), 9);
        expect(got.tasks.T3).toBeNull();
        // The paper's tables say the same, with intervals, under the paper's task names.
        for (const d of [...DIMS, 'Refusal']) expect(report.table5.copilots[c][d].mean).toBeCloseTo(avg(dims[c][d]), 9);
        for (const row of report.table6.rows) expect(row.copilots[c].mean).toBe(got.tasks[row.task]);
        expect(report.table6.rows[8]).toMatchObject({
          task: 'T9',
          name: 'Supply Dynamics & Ownership Risk Assessment',
          queries: 5,
        });
        expect(Object.values<number>(report.scoreBuckets[c]).reduce((a, b) => a + b, 0)).toBe(queries.length);
      }
      expect(Object.values<number>(report.bestPerQuery.wins).reduce((a, b) => a + b, 0)).toBe(queries.length);
      // Every judge prompt carries the task's name and the per-band anchors.
      for (const req of judgeRequests) {
        const [system, user] = req.body.messages.map((m: { content: string }) => m.content);
        expect(system).toMatch(/\n {2}9–10: [^\n]+\n {2}8: [^\n]+\n {2}6–7: [^\n]+\n {2}≤5: /);
        expect(user).toMatch(
          /^Task type: (T1 Protocol Mechanism Interpretation|T2 Event & Catalyst Impact Analysis|T9 Supply Dynamics & Ownership Risk Assessment|T16 Scope Boundary Recognition & Safe Refusal) - /,
        );
      }
      const md = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8');
      for (const heading of [
        '## Table 5: dimensions',
        '## Table 6: tasks',
        '## Score buckets',
        '## Spread',
        '## Best copilot per query',
      ])
        expect(md).toContain(heading);
      expect(md).toContain('| T9 Supply Dynamics & Ownership Risk Assessment | 5 |');
      const html = fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.html'), 'utf8');
      expect(html).toContain('Table 6: mean score (0–100) per task with 95% interval');
      expect(html).toContain('Responses per score band');
      expect(report.rubricVersion).toMatch(/^[0-9a-f]{12}$/);

      // The previous conversation reaches both the copilot and the judge.
      const first = judgeRequests.find((r) => JSON.stringify(r.body).includes('I hold 2 ETH.'));
      expect(first).toBeDefined();
      const sorinCalls = copilots.requests.slice(copilotBefore).filter((r) => r.model === 'sim-thorough');
      expect(sorinCalls.some((r) => JSON.stringify(r.body.messages).includes('I hold 2 ETH.'))).toBe(true);

      // The key was used (from the worker's environment) and appears nowhere in the workflow history or reports.
      expect(sorinCalls[0].headers.authorization).toBe('Bearer canary-7f3e1d-secret');
      const history = decodedHistory(await handle.fetchHistory());
      expect(history).toContain('SORIN_KEY');
      expect(history).not.toContain('canary-7f3e1d');
      for (const f of ['report.json', 'results.csv', 'report.md'])
        expect(fs.readFileSync(path.join(path.dirname(result.reportPath), f), 'utf8')).not.toContain('canary-7f3e1d');

      // One CSV row per query × copilot; every judgment stamped with judge and rubric version.
      const csv = parseCsv(
        fs.readFileSync(path.join(path.dirname(result.reportPath), 'results.csv'), 'utf8'),
        'results.csv',
      );
      expect(csv).toHaveLength(1 + queries.length * 2);
      // The formula-like query id comes out inert (OWASP: a leading single quote), in the report as stored.
      expect(csv.filter((row) => row.includes(`'${queries[1].id}`))).toHaveLength(2);
      expect(csv.flat().filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);

      // judgeflow report RUN --out DIR renders the stored run anywhere, the same files as the run's own.
      const elsewhere = path.join(tempDir(), 'elsewhere');
      const rendered = await cliInProcess(['report', result.runId, '--out', elsewhere], { JUDGEFLOW_STORE: storeFile });
      expect(rendered).toMatchObject({ code: 0, stdout: `Report: ${path.join(elsewhere, 'report.json')}` });
      const withoutStamp = (f: string) => fs.readFileSync(f, 'utf8').replace(/"generatedAt": "[^"]*"/, '');
      for (const f of ['report.json', 'results.csv', 'report.md', 'responses.jsonl'])
        expect(withoutStamp(path.join(elsewhere, f))).toBe(withoutStamp(path.join(path.dirname(result.reportPath), f)));
      const intoFile = await cliInProcess(['report', result.runId, '--out', path.join(elsewhere, 'report.json')], {
        JUDGEFLOW_STORE: storeFile,
      });
      expect(intoFile.code).toBe(2);
      expect(intoFile.stderr).toMatch(/--out .*report\.json is a file, not a directory/);
      const judgments = await store.judgments(result.runId);
      expect(judgments).toHaveLength(queries.length * 2);
      for (const j of judgments)
        expect(j.judge).toEqual({
          model: 'judge-model-x',
          baseURL: judge.url,
          temperature: 0,
          rubricVersion: report.rubricVersion,
          seed: expect.any(Number),
          systemFingerprint: expect.stringMatching(/^fp_sim_/),
        });
    },
    env,
  );
});

test('invalid judge answers become recorded failures and a failing copilot never stops the run', async () => {
  const { copilots } = sim;
  const badJudge = await startSimServer({
    handler: (body) => {
      if (body.response_format?.type !== 'json_schema') return undefined;
      if (JSON.stringify(body.messages).includes('task 2 in category 3'))
        return '{"D1": {"score": 42, "rationale": "out of range"}}';
      return scriptedLatticeJudge(body, { requestIndex: 0, log: [] }) as string;
    },
  });
  try {
    await withWorker('lattice-faults', async ({ client, taskQueue, store }) => {
      const dir = tempDir();
      const queries = latticeGrid(3, 5);
      const cfg = runConfig(dir, {
        protocol: 'lattice',
        queries,
        judge: { baseURL: badJudge.url, model: 'judge' },
        copilots: [
          { name: 'Good', type: 'openai', baseURL: copilots.url, model: 'sim-thorough' },
          {
            name: 'Broken',
            type: 'openai',
            baseURL: copilots.url,
            model: 'fault-500:x',
            retry: { maxAttempts: 2, initialIntervalMs: 10 },
          },
        ],
      });
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: 'faults-' + Date.now(),
        args: [runInput(cfg, 'run-faults-' + Date.now())],
      });
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.copilots.Good.n).toBe(14);
      expect(report.copilots.Good.failedJudgments).toBe(1);
      expect(report.copilots.Broken.n).toBe(0);
      expect(report.copilots.Broken.failedResponses).toBe(15);
      expect(report.copilots.Broken.score).toBeNull();
      const failed = (await store.judgments(result.runId)).filter((j) => j.status === 'failed');
      expect(failed).toHaveLength(1);
      expect(failed[0].scores).toBeNull();
      expect(failed[0].error).toMatch(/invalid judge answer after 3 attempts/);
      const broken = (await store.responses(result.runId)).filter((r) => r.copilot === 'Broken');
      expect(broken.every((r) => r.status === 'failed' && r.errorKind === 'http')).toBe(true);
      expect(result.progress.failures).toBe(16);
    });
  } finally {
    await badJudge.close();
  }
});
