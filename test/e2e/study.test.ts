import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { parseCsv } from '../../core/io/csv';
import { protocolFor } from '../../rubrics';
import { chromiumPath } from '../../activities/adapters/chromiumPath';
import { kendallTauB, krippendorffAlphaNominal } from '../../core/stats/agreement';
import type { Answer } from '../../core/study/types';
import { createStudyApp, listen } from '../../client/study/app';
import { designStudy } from '../../client/study/create';
import { SubmissionForwarder } from '../../client/study/forwarder';
import { startStudyWorkflow } from '../../client/study/workflow';
import { connectClient } from '../../client/connection';
import { studyWorkflow } from '../../workflows/study';
import { cliInProcess } from '../support/cliInProcess';
import { decodedHistory } from '../support/judges';
import { until, withWorker } from '../support/harness';
import { policyAnswer } from '../support/studyAnnotators';
import { HOSTILE, latent, STUDY_COPILOTS, STUDY_MODELS, writeFinishedRun } from '../support/studyRun';

jest.setTimeout(240_000);

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

/** Every byte the app sent or received in this test, to search for anything that would unblind a pair. */
const traffic: string[] = [];
const apiKeys = new Set<string>();
function collectKeys(value: unknown): void {
  if (Array.isArray(value)) value.forEach(collectKeys);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      apiKeys.add(k);
      collectKeys(v);
    }
}

async function api(base: string, token: string | null, method: string, route: string, body?: unknown, raw?: string) {
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const res = await fetch(base + route, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(payload ? { 'content-type': raw ? 'text/plain' : 'application/json' } : {}),
    },
    body: payload,
  });
  const text = await res.text();
  traffic.push(route, payload ?? '', text);
  const json = text ? JSON.parse(text) : null;
  collectKeys(json);
  return { status: res.status, json };
}

test('a study over a finished run: browser and API annotators, blind and safe pages, durable recording with continue-as-new, report equal to the answers', async () => {
  await withWorker('study', async ({ client, taskQueue, store, storeFile, dir }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const runId = 'run-study-e2e';
    await writeFinishedRun(store, runId, path.join(dir, 'runs'));
    // A second judge over the same responses that prefers the opposite of the first everywhere.
    await writeFinishedRun(store, 'run-study-opposite', path.join(dir, 'runs'), (q, c) => 100 - latent(q, c));

    // Bad input: exit 2, clear message, nothing stored.
    const bad = await cliInProcess(
      ['study', 'create', '--run', runId, '--copilots', 'Aurora,Nobody', '--name', 'bad'],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Nobody not in run run-study-e2e/);
    expect(await store.studies.getStudy('bad')).toBeNull();
    const viaCli = await cliInProcess(
      [
        'study',
        'create',
        '--run',
        runId,
        '--name',
        'cli',
        '--queries',
        '5',
        '--per-item',
        '2',
        '--copilots',
        'Aurora,Borealis,Cirrus',
      ],
      env,
    );
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout).toMatch(
      /Study cli: 15 items \(5 queries × pairs of Aurora, Borealis, Cirrus\), 30 assignments/,
    );
    expect((await client.workflow.getHandle('study-cli').describe()).status.name).toBe('RUNNING');

    const study = await designStudy(store, { runId, name: 'pref', perItem: 3, seed: 'e2e' });
    expect(study.items).toBe(20 * 6 - 6); // one failed and one missing response take 3 pairs each
    expect(study.spec.excluded).toEqual({ failed: 3, missing: 3, pairs: 6 });
    // A low forced threshold makes the workflow continue as new many times during the test.
    const firstRunId = await startStudyWorkflow(client, study, taskQueue, { continueAsNewAfterEvents: 150 });

    const forwarder = new SubmissionForwarder(store, () => connectClient());
    const server = createStudyApp({ store, onSubmitted: () => forwarder.kick() });
    const base = await listen(server, '127.0.0.1', 0);
    forwarder.start();
    try {
      const invited = await cliInProcess(['study', 'invite', 'pref', '--annotators', '15', '--base-url', base], env);
      expect(invited.code).toBe(0);
      const links = invited.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[2]);
      expect(links).toHaveLength(15);
      const tokens = links.map((l) => new URL(l).hash.replace('#token=', ''));
      expect((await cliInProcess(['study', 'invite', 'pref', '--annotators', '15'], env)).code).toBe(2);

      const submitted = new Map<string, Answer>();
      // --- one annotator in a real browser, by clicking and by keyboard --------------------------------------------------
      const page = await browser.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      page.on('request', (r) => void traffic.push(r.url(), r.postData() ?? '', JSON.stringify(r.headers())));
      page.on(
        'response',
        (r) =>
          void r.text().then(
            (t) => traffic.push(t, JSON.stringify(r.headers())),
            () => undefined,
          ),
      );
      const firstNext = page.waitForResponse((r) => r.url().endsWith('/api/next'));
      await page.goto(links[0]);
      let view = (await (await firstNext).json()).assignment;
      const total = view.total as number;
      expect(total).toBeGreaterThanOrEqual(22);
      await page.waitForSelector('#responseA h4');
      expect(await page.textContent('#progress')).toBe(`0 of ${total} done`);
      await page.screenshot({ path: path.join(dir, 'study-page.png'), fullPage: true });
      if (process.env.JUDGEFLOW_STUDY_SCREENSHOT)
        fs.copyFileSync(path.join(dir, 'study-page.png'), process.env.JUDGEFLOW_STUDY_SCREENSHOT);
      // Hostile answers rendered as text: nothing ran, nothing was fetched, no live link.
      expect(
        await page
          .locator('#responseA script, #responseB script, #responseA img, #responseB img, a[href^="javascript"]')
          .count(),
      ).toBe(0);
      expect(await page.textContent('#responseA')).toContain('<script>window.__pwned');
      expect(await page.locator('#responseA a').count()).toBe(0);

      for (let k = 0; view; k++) {
        const want = await policyAnswer(store, view.id);
        submitted.set(view.id, want);
        const next = page.waitForResponse((r) => r.url().endsWith('/api/next'));
        if (k % 2 === 0) {
          await page.check(`input[name=choice][value=${want.choice}]`);
          if (want.reason) await page.check(`input[name=reason][value=${want.reason}]`);
          if (want.seriousError) {
            await page.check('#serious');
            await page.check(`input[name=errorType][value=${want.errorType}]`);
          }
          if (want.comment) await page.fill('#comment', want.comment);
          await page.click('#submit');
        } else {
          await page.locator('body').click({ position: { x: 5, y: 5 } });
          await page.keyboard.press(want.choice === 'A' ? 'a' : want.choice === 'B' ? 'b' : 't');
          if (want.reason)
            await page.keyboard.press(
              String(['accuracy', 'usefulness', 'reasoning', 'caution', 'clarity'].indexOf(want.reason) + 1),
            );
          if (want.seriousError) {
            await page.keyboard.press('e');
            await page.check(`input[name=errorType][value=${want.errorType}]`);
            await page.locator('body').click({ position: { x: 5, y: 5 } });
          }
          if (want.comment) {
            await page.fill('#comment', want.comment);
            await page.keyboard.press('Escape');
          }
          await page.keyboard.press('Enter');
        }
        view = (await (await next).json()).assignment;
      }
      await page.waitForFunction(
        (t) => document.getElementById('progress')!.textContent === `${t} of ${t} done`,
        total,
      );
      expect(await page.textContent('#message')).toContain(`All ${total} done`);
      expect(dialogs).toEqual([]);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
      // Resume on another device: a fresh browser context with the same link sees the same progress.
      const other = await browser.newContext();
      const resumed = await other.newPage();
      await resumed.goto(links[0]);
      await resumed.waitForFunction(
        (t) => document.getElementById('progress')!.textContent === `${t} of ${t} done`,
        total,
      );
      await other.close();

      // --- the others through the JSON API with the same fixed policy ----------------------------------------------------
      const me2 = await api(base, tokens[1], 'GET', '/api/me');
      const mine2: string[] = me2.json.assignments.map((a: { id: string }) => a.id);
      const me3 = await api(base, tokens[2], 'GET', '/api/me');
      const theirs = me3.json.assignments[0].id as string;
      // Cross-token access, missing tokens and bad requests are clear 4xx errors.
      expect((await api(base, tokens[1], 'GET', `/api/assignments/${theirs}`)).status).toBe(404);
      expect(
        (await api(base, tokens[1], 'POST', `/api/assignments/${theirs}/answer`, { choice: 'A', reason: 'accuracy' }))
          .status,
      ).toBe(404);
      expect((await api(base, null, 'GET', '/api/next')).status).toBe(401);
      expect((await api(base, 'x'.repeat(32), 'GET', '/api/next')).status).toBe(401);
      const badChoice = await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, { choice: 'C' });
      expect(badChoice.status).toBe(400);
      expect(badChoice.json.error).toMatch(/choice/);
      expect(
        (await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, { choice: 'A' })).json.error,
      ).toMatch(/reason: required/);
      expect(
        (
          await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, {
            choice: 'tie',
            seriousError: true,
            errorType: 'other',
          })
        ).status,
      ).toBe(400);
      const tieWithReason = await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, {
        choice: 'tie',
        reason: 'accuracy',
      });
      expect([tieWithReason.status, tieWithReason.json.error]).toEqual([
        400,
        expect.stringMatching(/^reason: a tie has no winning response/),
      ]);
      // Authentication schemes are case-insensitive.
      expect((await fetch(`${base}/api/progress`, { headers: { authorization: `bearer ${tokens[1]}` } })).status).toBe(
        200,
      );
      expect(
        (await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, undefined, 'choice=A')).status,
      ).toBe(415);
      expect(
        (
          await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, {
            choice: 'A',
            reason: 'accuracy',
            extra: 1,
          })
        ).status,
      ).toBe(400);
      // A first answer that is then changed: the last one counts and both are kept.
      const first = await policyAnswer(store, mine2[0]);
      const changedFrom: Answer = {
        choice: 'tie',
        reason: null,
        seriousError: false,
        errorType: null,
        comment: 'first thoughts',
      };
      expect((await api(base, tokens[1], 'POST', `/api/assignments/${mine2[0]}/answer`, changedFrom)).status).toBe(200);
      expect((await api(base, tokens[1], 'GET', `/api/assignments/${mine2[0]}`)).json.answer).toEqual(changedFrom);
      expect((await api(base, tokens[1], 'PUT', `/api/assignments/${mine2[0]}/answer`, first)).status).toBe(200);

      await Promise.all(
        tokens.slice(1).map(async (token) => {
          for (;;) {
            const next = await api(base, token, 'GET', '/api/next');
            if (!next.json.assignment) break;
            const id = next.json.assignment.id as string;
            const answer = await policyAnswer(store, id);
            submitted.set(id, answer);
            const res = await api(base, token, 'POST', `/api/assignments/${id}/answer`, answer);
            expect(res.status).toBe(200);
          }
        }),
      );
      submitted.set(mine2[0], first);
      expect(submitted.size).toBe(study.assignments);

      // Every acknowledged answer reaches the workflow; then close it.
      await until(async () => (await store.studies.pendingSubmissions(1)).length === 0, 90_000);
      const closed = await cliInProcess(['study', 'close', 'pref'], env);
      expect(closed.code).toBe(0);
      const result = (await client.workflow.getHandle(study.workflowId).result()) as Awaited<
        ReturnType<typeof studyWorkflow>
      >;
      expect(result.open).toBe(false);
      expect(result.generation).toBeGreaterThan(2); // continued as new several times, nothing lost
      expect(result.recorded).toBe(study.assignments + 1); // every answer once, plus the one revision
      // Ids and counts only in the workflow's history: no answer, comment or copilot.
      const history = decodedHistory(await client.workflow.getHandle(study.workflowId, firstRunId!).fetchHistory());
      expect(history).toContain('recordStudySubmission');
      for (const text of ['clear winner', 'first thoughts', 'usefulness', ...STUDY_COPILOTS])
        expect(history).not.toContain(text);
      expect((await api(base, tokens[1], 'POST', `/api/assignments/${mine2[1]}/answer`, first)).status).toBe(409);
      const revisions = (await store.studies.submissions('pref')).filter(
        (s) => s.assignmentId === mine2[0] && s.status === 'recorded',
      );
      expect(revisions.map((s) => s.answer)).toEqual([changedFrom, first]);

      // --- blind: no copilot name, model, adapter, latency or score anywhere the app sent or received -------------------
      const everything = traffic.join('\n').toLowerCase();
      for (const secret of [...STUDY_COPILOTS, ...STUDY_MODELS, 'openai'])
        expect(everything).not.toContain(secret.toLowerCase());
      for (const key of apiKeys)
        expect(key).not.toMatch(/copilot|model|adapter|latency|score|judge|rationale|query_?id|item/i);
      expect(everything).toContain(
        HOSTILE.script.toLowerCase().replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
      );

      // --- the report equals the figures recomputed from what was submitted --------------------------------------------
      const rep = await cliInProcess(
        ['study', 'report', 'pref', '--judge-run', 'run-study-opposite', '--out', path.join(dir, 'report')],
        env,
      );
      expect(rep.code).toBe(0);
      const report = JSON.parse(fs.readFileSync(path.join(dir, 'report', 'study.json'), 'utf8'));
      expect(fs.existsSync(path.join(dir, 'report', 'study.xlsx'))).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'report', 'study.md'), 'utf8')).toContain('## Table 7');
      const expected = await recompute(store, submitted);
      expect(report.counts).toMatchObject({
        annotations: study.assignments,
        annotators: 15,
        pendingSubmissions: 0,
        revisions: 1,
      });
      for (const c of STUDY_COPILOTS) {
        const e = expected.per[c];
        expect(report.table7.copilots[c]).toMatchObject({
          wins: e.wins,
          losses: e.losses,
          ties: e.ties,
          appearances: e.wins + e.losses + e.ties,
        });
        expect(report.table7.copilots[c].winRate).toBeCloseTo(e.wins / (e.wins + e.losses), 12);
        expect(report.table7.copilots[c].ci95.low).toBeCloseTo(wilson(e.wins, e.wins + e.losses).low, 12);
        expect(report.table7.copilots[c].ci95.high).toBeCloseTo(wilson(e.wins, e.wins + e.losses).high, 12);
        expect(report.table7.copilots[c].tieShare).toBeCloseTo(e.ties / (e.wins + e.losses + e.ties), 12);
        for (const d of STUDY_COPILOTS)
          if (d !== c) expect(report.table7.matrix[c][d].wins).toBe(expected.matrix[`${c}>${d}`] ?? 0);
        expect(report.table9.copilots[c]).toMatchObject({ flags: e.flags, losses: e.losses });
        const bt = report.table7.bradleyTerry[c];
        expect(bt.ci95.low).toBeLessThanOrEqual(bt.strength);
        expect(bt.ci95.high).toBeGreaterThanOrEqual(bt.strength);
      }
      for (const [reason, count] of Object.entries(expected.reasons)) {
        expect(report.table8.reasons[reason].count).toBe(count);
        expect(report.table8.reasons[reason].share).toBeCloseTo(count / expected.decisive, 12);
      }
      for (const [type, count] of Object.entries(expected.types)) expect(report.table9.types[type].count).toBe(count);
      expect(report.interAnnotator.krippendorffAlpha).toBeCloseTo(krippendorffAlphaNominal(expected.units)!, 12);
      expect(report.interAnnotator.itemsWithMajority).toBe(study.items);
      // The first judge's preferences equal the annotators' majority; the second prefers the opposite everywhere.
      const [same, opposite] = report.judgeHuman;
      expect(same).toMatchObject({
        judgeRunId: runId,
        itemsCompared: study.items,
        overall: { agreement: 1, kappa: 1 },
      });
      expect(Object.values(same.byTask).every((g: any) => g.agreement === 1)).toBe(true);
      expect(opposite).toMatchObject({
        judgeRunId: 'run-study-opposite',
        itemsCompared: study.items,
        overall: { agreement: 0 },
      });
      expect(opposite.disagreements.length).toBe(10);
      expect(opposite.disagreements[0].judgeRationales).toBeDefined();
      // Calibrated win rates: this study annotates every item of the run, so they are the annotators' own.
      // The pairs left out at design (a failed or missing response) have no judgment either.
      expect(report.calibrated).toMatchObject({
        judgeRunId: runId,
        annotatedItems: report.calibrated.items,
        itemsWithoutJudgment: report.design.excluded.pairs,
        annotatedItemsWithoutJudgment: 0,
      });
      expect(report.calibrated.items).toBe(study.items);
      for (const c of STUDY_COPILOTS) {
        const x = report.calibrated.copilots[c];
        expect(
          Math.abs(x.winRate - expected.per[c].wins / (expected.per[c].wins + expected.per[c].losses)),
        ).toBeLessThanOrEqual(0.03);
        expect(x.ci95.low).toBeLessThanOrEqual(x.winRate);
        expect(x.ci95.high).toBeGreaterThanOrEqual(x.winRate);
        expect(typeof x.judgeOnly).toBe('number');
      }
      expect(fs.readFileSync(path.join(dir, 'report', 'study.md'), 'utf8')).toContain('## Calibrated win rates');
      // The run's report, rendered again now that a study has annotations, shows calibrated and judge-only side by side.
      // (The fake finished run has no rubric in the store; the report needs LATTICE's.)
      const lattice = protocolFor('lattice');
      await store.putRubric('rubric-test', 'lattice', lattice.loadRubric(lattice.defaultRubricDir).content);
      const rerendered = await cliInProcess(['report', runId, '--out', path.join(dir, 'rerendered')], env);
      expect(rerendered.stderr).toBe('');
      expect(rerendered.code).toBe(0);
      const html = fs.readFileSync(path.join(dir, 'rerendered', 'report.html'), 'utf8');
      expect(html).toContain('Calibrated by study pref');
      expect(html).toMatch(/Calibrated win rate<\/th>.*Judge only<\/th>/);
      const humanRates = STUDY_COPILOTS.map(
        (c) => expected.per[c].wins / (expected.per[c].wins + expected.per[c].losses),
      );
      const judgeMeans = STUDY_COPILOTS.map((c) => same.leaderboard[c]);
      expect(same.kendallTau).toBeCloseTo(kendallTauB(judgeMeans, humanRates)!, 12);
      expect(opposite.kendallTau).toBeCloseTo(-same.kendallTau, 12);

      // --- export, and import of the same answers as outside data into a second study: same tables ---------------------
      const exported = await cliInProcess(
        ['study', 'export', 'pref', '--format', 'csv', '--out', path.join(dir, 'export.csv')],
        env,
      );
      expect(exported.code).toBe(0);
      const rows = parseCsv(fs.readFileSync(path.join(dir, 'export.csv'), 'utf8'), 'export.csv');
      expect(rows).toHaveLength(study.assignments + 1);
      const crowd = [
        ['worker', 'question', 'system_a', 'system_b', 'preferred', 'why', 'serious', 'kind'],
        ...rows.slice(1).map((r) => [r[2], r[3], r[4], r[5], r[7], r[8], r[9], r[10]]),
      ];
      fs.writeFileSync(path.join(dir, 'crowd.csv'), crowd.map((r) => r.join(',')).join('\n'));
      await designStudy(store, { runId, name: 'outside', perItem: 3, seed: 'e2e' });
      const columns =
        'annotator=worker,query=question,left=system_a,right=system_b,choice=preferred,reason=why,seriousError=serious,errorType=kind';
      fs.writeFileSync(
        path.join(dir, 'broken.csv'),
        [
          crowd[0].join(','),
          crowd[1].join(','),
          'w1,q01,Aurora,Aurora,A,accuracy,false,',
          'w1,q02,Aurora,Borealis,maybe,,perhaps,',
        ].join('\n'),
      );
      const broken = await cliInProcess(
        ['study', 'import', 'outside', path.join(dir, 'broken.csv'), '--columns', columns],
        env,
      );
      expect(broken.code).toBe(2);
      expect(broken.stderr).toMatch(/broken\.csv:3: .*same copilot/);
      expect(broken.stderr).toMatch(/broken\.csv:4: preferred "maybe".*serious "perhaps"/);
      expect(await store.studies.annotations('outside')).toHaveLength(0);
      expect(
        (await cliInProcess(['study', 'import', 'outside', path.join(dir, 'crowd.csv'), '--columns', columns], env))
          .code,
      ).toBe(0);
      await cliInProcess(['study', 'report', 'outside', '--out', path.join(dir, 'outside')], env);
      const outside = JSON.parse(fs.readFileSync(path.join(dir, 'outside', 'study.json'), 'utf8'));
      expect(outside.table7.copilots).toEqual(report.table7.copilots);
      expect(outside.table8).toEqual(report.table8);
      expect(outside.table9).toEqual(report.table9);
    } finally {
      await forwarder.stop();
      await new Promise((r) => server.close(r));
    }
  });
});

function wilson(k: number, n: number) {
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { low: c - h, high: c + h };
}

/** Tables 7–9 counted straight from the answers the test submitted and the assignments' sides in the store. */
async function recompute(store: import('../../core/model/store').ResultsStore, submitted: Map<string, Answer>) {
  const per: Record<string, { wins: number; losses: number; ties: number; flags: number }> = Object.fromEntries(
    STUDY_COPILOTS.map((c) => [c, { wins: 0, losses: 0, ties: 0, flags: 0 }]),
  );
  const matrix: Record<string, number> = {};
  const reasons: Record<string, number> = {};
  const types: Record<string, number> = {};
  const units = new Map<string, string[]>();
  let decisive = 0;
  for (const [id, answer] of submitted) {
    const a = (await store.studies.getAssignment(id))!;
    const [, first] = a.itemId.split('|');
    const winner = answer.choice === 'A' ? a.left : answer.choice === 'B' ? a.right : null;
    units.set(a.itemId, [
      ...(units.get(a.itemId) ?? []),
      winner === null ? 'tie' : winner === first ? 'first' : 'second',
    ]);
    if (!winner) {
      per[a.left].ties++;
      per[a.right].ties++;
      continue;
    }
    const loser = winner === a.left ? a.right : a.left;
    per[winner].wins++;
    per[loser].losses++;
    matrix[`${winner}>${loser}`] = (matrix[`${winner}>${loser}`] ?? 0) + 1;
    decisive++;
    reasons[answer.reason!] = (reasons[answer.reason!] ?? 0) + 1;
    if (answer.seriousError) {
      per[loser].flags++;
      types[answer.errorType!] = (types[answer.errorType!] ?? 0) + 1;
    }
  }
  return { per, matrix, reasons, types, decisive, units: [...units.values()] };
}
