import path from 'node:path';
import { connectClient } from '../../client/connection';
import { createStudyApp, listen } from '../../client/study/app';
import { designStudy, inviteAnnotators } from '../../client/study/create';
import { SubmissionForwarder } from '../../client/study/forwarder';
import { writeStudyReport } from '../../client/study/report';
import { startStudyWorkflow } from '../../client/study/workflow';
import type { StudyResult } from '../../contract/study';
import { withWorker } from '../support/harness';
import { policyAnswer } from '../support/studyAnnotators';
import { latent, writeFinishedRun } from '../support/studyRun';

jest.setTimeout(90_000);

test('a study on a CryptoAnalystBench run reminds and then closes itself at its deadline (durable timers); its report compares with the CAB totals', async () => {
  await withWorker('study-deadline', async ({ client, taskQueue, store, dir }) => {
    await writeFinishedRun(store, 'run-cab', path.join(dir, 'runs'), (q, c) => latent(q, c) / 2.5, 'cab');
    const study = await designStudy(store, {
      runId: 'run-cab',
      name: 'timed',
      perItem: 1,
      queries: 3,
      deadline: '6s',
      remindBefore: '3s',
      seed: 't',
    });
    await startStudyWorkflow(client, study, taskQueue);
    const [person] = await inviteAnnotators(store, 'timed', 1);
    const forwarder = new SubmissionForwarder(store, () => connectClient());
    const app = createStudyApp({ store, onSubmitted: () => forwarder.kick() });
    const base = await listen(app, '127.0.0.1', 0);
    forwarder.start();
    try {
      const headers = { authorization: `Bearer ${person.token}`, 'content-type': 'application/json' };
      for (let i = 0; i < 5; i++) {
        const { assignment } = await (await fetch(`${base}/api/next`, { headers })).json();
        expect(
          (
            await fetch(`${base}/api/assignments/${assignment.id}/answer`, {
              method: 'POST',
              headers,
              body: JSON.stringify(await policyAnswer(store, assignment.id, 1)),
            })
          ).status,
        ).toBe(200);
      }
      const result = (await client.workflow.getHandle(study.workflowId).result()) as StudyResult;
      expect(result).toMatchObject({ closedBy: 'deadline', open: false, reminded: true, recorded: 5 });
      const closed = (await store.studies.getStudy('timed'))!;
      expect(closed.status).toBe('closed');
      expect(Date.parse(closed.closedAt!)).toBeGreaterThanOrEqual(Date.parse(study.spec.deadline!));
      const events = await store.studies.studyEvents('timed');
      expect(events.map((e) => e.kind)).toEqual(['reminder', 'closed']);
      expect(events[0].detail).toEqual({ outstanding: { 'annotator-01': study.assignments - 5 } });
      // After the close the app refuses new answers with a clear 409.
      const { assignment } = await (await fetch(`${base}/api/next`, { headers })).json();
      const late = await fetch(`${base}/api/assignments/${assignment.id}/answer`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ choice: 'tie' }),
      });
      expect(late.status).toBe(409);
      const { report } = await writeStudyReport(store, closed, { outDir: path.join(dir, 'report') });
      expect(report.protocol).toBe('cab');
      expect(report.judgeHuman[0].overall).toMatchObject({ n: 5, agreement: 1 });
      expect(
        Object.keys(report.judgeHuman[0].byCategory).every((k) => ['DeFi', 'Meme Coins', 'Macro'].includes(k)),
      ).toBe(true);
    } finally {
      await forwarder.stop();
      await new Promise((r) => app.close(r));
    }
  });
});
