import path from 'node:path';
import { cliInProcess } from '../support/cliInProcess';
import { withWorker } from '../support/harness';
import { latent, writeFinishedRun } from '../support/studyRun';

jest.setTimeout(240_000);

test('study create --select active stores inclusion probabilities; study status shows calibrated intervals and the labels to a target width', async () => {
  await withWorker('study-active', async ({ store, storeFile, taskQueue, dir }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const runId = 'run-study-active';
    await writeFinishedRun(store, runId, path.join(dir, 'runs'));

    const bad = await cliInProcess(
      ['study', 'create', '--run', runId, '--name', 'bad', '--select', 'active', '--queries', '5'],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--select active draws from every item of the run/);
    expect(await store.studies.getStudy('bad')).toBeNull();

    const created = await cliInProcess(
      ['study', 'create', '--run', runId, '--name', 'act', '--select', 'active', '--budget', '70', '--per-item', '1'],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(
      /Active selection: \d+ of 114 items drawn by the judge's uncertainty \(budget 70; every inclusion probability ≥ 0\.\d+\)/,
    );
    const study = (await store.studies.getStudy('act'))!;
    const items = await store.studies.studyItems('act');
    expect(study.spec.selection?.method).toBe('active');
    const selection = study.spec.selection as Extract<NonNullable<typeof study.spec.selection>, { method: 'active' }>;
    expect(Object.keys(selection.probabilities).sort()).toEqual(items.map((it) => it.itemId).sort());
    for (const p of Object.values(selection.probabilities)) expect(p).toBeGreaterThanOrEqual(selection.floor);

    // Annotators prefer the answer of higher latent quality.
    await store.studies.importAnnotations(
      'act',
      items.map((it) => ({
        annotator: 'ann-1',
        itemId: it.itemId,
        left: it.first,
        right: it.second,
        answer: {
          choice: latent(it.queryId, it.first) >= latent(it.queryId, it.second) ? 'A' : 'B',
          reason: 'accuracy',
          seriousError: false,
          errorType: null,
          comment: null,
        },
        submittedAt: '2026-12-01T00:00:00Z',
      })),
    );
    const status = await cliInProcess(['study', 'status', 'act', '--json', '--target-width', '0.05'], env);
    expect(status.code).toBe(0);
    const calibrated = JSON.parse(status.stdout).calibrated;
    expect(calibrated.design).toBe('active');
    expect(calibrated.annotatedItems).toBe(items.length);
    for (const c of Object.values(calibrated.copilots) as any[]) {
      if (c.annotatedQueries < 10) {
        expect(c).toMatchObject({ status: 'too few annotated queries', ci95: null });
        continue;
      }
      expect(c.status).toBe('calibrated');
      expect(c.ci95.low).toBeLessThanOrEqual(c.winRate);
      expect(c.ci95.high).toBeGreaterThanOrEqual(c.winRate);
      expect(c.moreLabelsToTarget === null || c.moreLabelsToTarget >= 0).toBe(true);
    }
    const text = await cliInProcess(['study', 'status', 'act', '--target-width', '0.05'], env);
    expect(text.stdout).toMatch(/Calibrated win rates \(active selection; \d+ of \d+ items annotated/);
    expect(text.stdout).toMatch(/Aurora: /);
    const badWidth = await cliInProcess(['study', 'status', 'act', '--target-width', '3'], env);
    expect(badWidth.code).toBe(2);
    expect(badWidth.stderr).toMatch(/--target-width 3: expected a width of win rate between 0 and 1/);

    // A second study drawn by where the annotators of 'act' disagreed with the judge.
    const noSuch = await cliInProcess(
      ['study', 'create', '--run', runId, '--name', 'dis0', '--select', 'active', '--disagreement-from', 'nope'],
      env,
    );
    expect(noSuch.code).toBe(2);
    expect(noSuch.stderr).toMatch(/--disagreement-from nope: no such study/);
    expect(await store.studies.getStudy('dis0')).toBeNull();
    const notActive = await cliInProcess(
      ['study', 'create', '--run', runId, '--name', 'dis1', '--queries', '5', '--disagreement-from', 'act'],
      env,
    );
    expect(notActive.code).toBe(2);
    expect(notActive.stderr).toMatch(/--disagreement-from needs --select active/);
    const byModel = await cliInProcess(
      [
        'study',
        'create',
        '--run',
        runId,
        '--name',
        'dis',
        '--select',
        'active',
        '--budget',
        '40',
        '--per-item',
        '1',
        '--disagreement-from',
        'act',
      ],
      env,
    );
    expect(byModel.code).toBe(0);
    expect(byModel.stdout).toMatch(
      /Active selection: \d+ of 114 items drawn by where annotators and the judge disagreed in study act \(budget 40; every inclusion probability ≥ 0\.\d+\)/,
    );
    const dis = (await store.studies.getStudy('dis'))!;
    const disSelection = dis.spec.selection as Extract<NonNullable<typeof dis.spec.selection>, { method: 'active' }>;
    expect(disSelection).toMatchObject({ basis: 'disagreement', disagreementFrom: 'act', budget: 40 });
    const disItems = await store.studies.studyItems('dis');
    expect(Object.keys(disSelection.probabilities).sort()).toEqual(disItems.map((it) => it.itemId).sort());
    expect(Math.min(...Object.values(disSelection.probabilities))).toBeGreaterThanOrEqual(disSelection.floor);
  });
});
