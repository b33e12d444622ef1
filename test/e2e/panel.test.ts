import fs from 'node:fs';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import { latticeGrid, runConfig, tempDir, withWorker } from '../support/harness';
import { gradedText } from '../support/judges';
import { simServersForFile } from '../support/sims';
import { startSimServer } from '../../sim/server';

jest.setTimeout(180_000);

// Independent of rubrics/lattice: the published weight table, typed in again.
const WEIGHTS: Record<string, number[]> = {
  C1: [15, 25, 15, 15, 15, 15],
  C2: [15, 20, 20, 15, 15, 15],
  C3: [20, 15, 20, 20, 10, 15],
  C4: [15, 10, 30, 20, 10, 15],
  C5: [25, 15, 25, 10, 10, 15],
};
const DIMS = ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'];
const THOROUGH = 'Here is a structured view'; // how sim-thorough answers start: the "own family's style" the selfish judge favours
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const sim = simServersForFile({
  judge: {
    judges: {
      'lenient-model': { leniency: 2 },
      'harsh-model': { leniency: -2 },
      'selfish-model': { favour: { contains: THOROUGH, bonus: 3 } },
    },
  },
  copilots: {},
});

test('a panel of three judges, one favouring its own family: per-judge leaderboards match their answers, agreement computed, self-preference flagged', async () => {
  const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T2'].includes(q.task as string));
  const cfg = runConfig(tempDir(), {
    protocol: 'lattice',
    queries,
    judges: [
      { name: 'lenient', baseURL: sim.judge.url, model: 'lenient-model', concurrency: 2 },
      { name: 'harsh', baseURL: sim.judge.url, model: 'harsh-model', concurrency: 3 },
      { name: 'selfish', baseURL: sim.judge.url, model: 'selfish-model', concurrency: 1, family: 'acme' },
    ],
    copilots: [
      { name: 'Sorin', type: 'openai', baseURL: sim.copilots.url, model: 'sim-thorough', family: 'acme' },
      { name: 'Elsa', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' },
    ],
  });
  await withWorker('panel', async ({ client, taskQueue, store }) => {
    const before = sim.judge.requests.length;
    const runId = 'run-panel-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    const requests = sim.judge.requests.slice(before);
    const responses = await store.responses(runId);
    const copilotOf = new Map(responses.map((r) => [r.text!, r.copilot]));
    const categoryOf = (body: any) => JSON.stringify(body.messages).match(/Query category: (C\d)/)![1];

    // Every response judged once by every member.
    const judgeOf: Record<string, string> = {
      'lenient-model': 'lenient',
      'harsh-model': 'harsh',
      'selfish-model': 'selfish',
    };
    expect(requests).toHaveLength(queries.length * 2 * 3);
    // Per judge, per copilot: the mean 0–100 total of that judge's answers; per response: the mean over the judges.
    const totals: Record<string, Record<string, number[]>> = {};
    const perResponse = new Map<string, number[]>();
    for (const r of requests) {
      const answer = JSON.parse(r.content!);
      const w = WEIGHTS[categoryOf(r.body)];
      const total = DIMS.reduce((s, d, i) => s + w[i] * answer[d].score, 0) / 10;
      const copilot = copilotOf.get(gradedText(r.body))!;
      ((totals[judgeOf[r.model]] ??= {})[copilot] ??= []).push(total);
      perResponse.set(gradedText(r.body), [...(perResponse.get(gradedText(r.body)) ?? []), total]);
    }
    const panel = report.panel;
    for (const judge of ['lenient', 'harsh', 'selfish'])
      for (const copilot of ['Sorin', 'Elsa']) {
        expect(totals[judge][copilot]).toHaveLength(queries.length);
        expect(panel.leaderboards[judge][copilot].score).toBeCloseTo(avg(totals[judge][copilot]), 9);
      }
    // The reported score is the panel mean.
    for (const copilot of ['Sorin', 'Elsa'])
      expect(report.copilots[copilot].score).toBeCloseTo(
        avg(responses.filter((r) => r.copilot === copilot).map((r) => avg(perResponse.get(r.text!)!))),
        9,
      );
    expect(panel.leaderboards.lenient.Sorin.score).toBeGreaterThan(panel.leaderboards.harsh.Sorin.score);

    // Agreement per dimension and total; a tau for each of the three pairs.
    for (const k of [...DIMS, 'total']) {
      expect(panel.agreement[k].units).toBe(queries.length * 2);
      expect(typeof panel.agreement[k].alpha).toBe('number');
    }
    expect(panel.rankCorrelation.map((r: any) => `${r.a}/${r.b}`)).toEqual([
      'lenient/harsh',
      'lenient/selfish',
      'harsh/selfish',
    ]);
    expect(panel.disagreements.length).toBeGreaterThan(0);
    expect(Object.keys(panel.disagreements[0].judges).sort()).toEqual(['harsh', 'lenient', 'selfish']);

    // Self-preference: only the selfish judge and its family's copilot, flagged. (A sim judge's leniency is added per
    // dimension and clamped at the 0–10 range, so it is not uniform over copilots: the lenient-but-not-selfish case is
    // checked in test/core/stats/reliability.test.ts on synthetic totals.)
    expect(panel.selfPreference).toHaveLength(1);
    const selfish = panel.selfPreference[0];
    expect(selfish).toMatchObject({ judge: 'selfish', copilot: 'Sorin', family: 'acme', flagged: true });
    expect(selfish.difference).toBeGreaterThanOrEqual(10);
    expect(selfish.ci95.low).toBeGreaterThan(0);
    // Three judges: the model has each judge's scale as well as its offset (the sim's clamped leniency is not a pure
    // offset, so the term is no longer the offset-only gap difference; that model is checked in reliability.test.ts).
    expect(selfish).toMatchObject({ model: 'scale and offset', queries: queries.length });
    expect(typeof selfish.scale).toBe('number');
    expect(selfish.pHolm).toBeLessThan(0.05);
    expect(fs.readFileSync(result.reportPath.replace('report.json', 'report.md'), 'utf8')).toContain('## Judge panel');
    expect(fs.readFileSync(result.reportPath.replace('report.json', 'report.html'), 'utf8')).toContain(
      'id="panel-self-preference"',
    );
  });
});

test('a panel of five judges, four failing every unit: each member’s failures counted in report.json, .md and .html; no unit has a panel verdict (below the majority)', async () => {
  const failing = await startSimServer({
    handler: (body) =>
      String(body.model).startsWith('broken')
        ? { status: 400, body: JSON.stringify({ error: { message: `model ${body.model} is not available` } }) }
        : undefined,
  });
  try {
    const queries = latticeGrid(16, 5).filter((q) => q.task === 'T1');
    const cfg = runConfig(tempDir(), {
      protocol: 'lattice',
      queries,
      judges: [
        { name: 'works', baseURL: failing.url, model: 'judge-ok' },
        ...[1, 2, 3, 4].map((i) => ({ name: `broken${i}`, baseURL: failing.url, model: `broken-${i}` })),
      ],
      copilots: [{ name: 'Elsa', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' }],
    });
    await withWorker('panel-failing', async ({ client, taskQueue }) => {
      const runId = 'run-panel-failing-' + Date.now();
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      const units = queries.length;
      expect(report.panel.minJudges).toBe(3);
      expect(report.panel.unitsBelowMinJudges).toBe(units);
      expect(report.panel.failures.works).toEqual({ failed: 0, units, firstError: null });
      for (const i of [1, 2, 3, 4])
        expect(report.panel.failures[`broken${i}`]).toMatchObject({
          failed: units,
          units,
          firstError: expect.stringContaining(`broken-${i} is not available`),
        });
      // Below the quorum a unit is missing data, not the one judge's score.
      expect(report.copilots.Elsa).toMatchObject({ n: 0, failedJudgments: units });
      expect(report.copilots.Elsa.score ?? null).toBeNull();
      const md = fs.readFileSync(result.reportPath.replace('report.json', 'report.md'), 'utf8');
      expect(md).toContain('### Failures per judge');
      expect(md).toContain(`${units} unit(s) had fewer than panel.minJudges = 3 verdicts`);
      expect(md).toMatch(/\| broken1 \(broken-1\) \| 5 \| 5 \| .*broken-1 is not available/);
      const html = fs.readFileSync(result.reportPath.replace('report.json', 'report.html'), 'utf8');
      expect(html).toContain('id="panel-failures"');
      expect(html).not.toContain('id="failures-none"');
      expect(html).toContain('panel: too few judges');
    });
  } finally {
    await failing.close();
  }
});

test('a panel member that failed every call (HTTP 500): the Failures summary of report.html and report.md names it, its count, and the judges the verdicts rest on', async () => {
  const failing = await startSimServer({
    handler: (body) =>
      String(body.model).startsWith('broken')
        ? { status: 500, body: JSON.stringify({ error: { message: 'internal error' } }) }
        : undefined,
  });
  try {
    const queries = latticeGrid(16, 5).filter((q) => q.task === 'T1');
    const cfg = runConfig(tempDir(), {
      protocol: 'lattice',
      queries,
      judges: [
        { name: 'one', baseURL: failing.url, model: 'judge-ok' },
        { name: 'two', baseURL: failing.url, model: 'judge-ok-2' },
        { name: 'down', baseURL: failing.url, model: 'broken-1', maxAttempts: 1 },
      ],
      copilots: [{ name: 'Elsa', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' }],
    });
    await withWorker('panel-member-down', async ({ client, taskQueue }) => {
      const runId = 'run-panel-member-down-' + Date.now();
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      const units = queries.length;
      const summary = `Judges that failed: down (broken-1) gave no verdict on ${units} of ${units} units`;
      const html = fs.readFileSync(result.reportPath.replace('report.json', 'report.html'), 'utf8');
      expect(html).not.toContain('No failures: every response was collected and judged');
      expect(html).toMatch(
        new RegExp(
          `id="failures-judges">${summary.replace(/[()]/g, '\\$&')}[^<]*the panel&#39;s verdicts rest on one \\(judge-ok\\), two \\(judge-ok-2\\) \\(2 of 3 judges\\)`,
        ),
      );
      const md = fs.readFileSync(result.reportPath.replace('report.json', 'report.md'), 'utf8');
      expect(md).toContain(`## Judges that failed\n\n${summary}`);
      expect(md).toContain("the panel's verdicts rest on one (judge-ok), two (judge-ok-2) (2 of 3 judges)");
    });
  } finally {
    await failing.close();
  }
});
