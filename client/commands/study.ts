import fs from 'node:fs';
import path from 'node:path';
import type { ResultsStore } from '../../core/model/store';
import { openExistingStore, openStore, storeLocation } from '../../stores';
import { writeTextAtomic } from '../../core/io/files';
import { InputError } from '../../core/model/inputError';
import { createWorker } from '../../worker/createWorker';
import type { Command } from '../args';
import { connectClient, connectWorker, taskQueue } from '../connection';
import { createStudyApp, listen } from '../study/app';
import { annotationLink, designStudy, inviteAnnotators } from '../study/create';
import { exportAnnotations, importAnnotations, parseColumnMap } from '../study/exchange';
import { SubmissionForwarder } from '../study/forwarder';
import { calibratedNow, writeStudyReport } from '../study/report';
import { closeStudyWorkflow, startStudyWorkflow } from '../study/workflow';
import { ensureLocalServer } from '../temporalServer';
import type { CalibratedWinRates } from '../../core/study/calibrated';

const USAGE = `judgeflow study create --run RUN_ID [--copilots A,B,C] [--queries N | --query-file F | --select active [--budget N] [--disagreement-from STUDY]] [--per-item 11] [--seed S] [--name NAME] [--deadline 14d [--remind-before 2d]] [--options FILE]
       judgeflow study invite NAME --annotators N [--base-url http://127.0.0.1:8787]
       judgeflow study serve [--host 127.0.0.1] [--port 8787] [--worker]
       judgeflow study close NAME
       judgeflow study report NAME [--judge-run RUN_ID]... [--tie-margin X] [--top 10] [--out DIR]
       judgeflow study export NAME [--format csv|jsonl] [--out FILE]
       judgeflow study import NAME FILE [--columns annotator=COL,query=COL,left=COL,right=COL,choice=COL,reason=COL,seriousError=COL,errorType=COL,comment=COL]
       judgeflow study list | status NAME [--target-width 0.1] [--json]`;

function wholeNumber(values: Record<string, unknown>, name: string, fallback?: number): number | undefined {
  const v = values[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InputError(`--${name} ${String(v)}: expected a whole number`);
  return n;
}

async function requireStudy(store: ResultsStore, name: string | undefined) {
  if (!name) throw new InputError(`missing study NAME\nUsage: ${USAGE}`);
  const study = await store.studies.getStudy(name);
  if (!study)
    throw new InputError(`no study named ${name} in the results store ${store.location} (see judgeflow study list)`);
  return study;
}

async function serve(values: Record<string, unknown>): Promise<number> {
  const store = await openStore();
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const port = wholeNumber(values, 'port', 8787)!;
  const forwarder = new SubmissionForwarder(store, () => connectClient(), { log: (l) => console.error(l) });
  const server = createStudyApp({ store, onSubmitted: () => forwarder.kick(), host });
  const url = await listen(server, host, port);
  forwarder.start();
  console.log(
    `Annotation app at ${url}/annotate (annotators open their personal links); JSON API under ${url}/api/. Ctrl-C to stop.`,
  );
  let worker: Awaited<ReturnType<typeof createWorker>> | null = null;
  if (values.worker) {
    await ensureLocalServer({ log: console.log });
    const { connection, namespace } = await connectWorker();
    worker = await createWorker({ connection, namespace, taskQueue: await taskQueue() });
  }
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await (worker ? Promise.race([worker.run(), stopped]) : stopped);
  worker?.shutdown();
  await forwarder.stop();
  await new Promise((r) => server.close(r));
  return 0;
}

export const studyCommand: Command = {
  name: 'study',
  summary: 'human pairwise preference studies on a finished run: design, annotation app, durable collection, report',
  usage: USAGE,
  options: {
    run: { type: 'string' },
    copilots: { type: 'string' },
    queries: { type: 'string' },
    'query-file': { type: 'string' },
    'per-item': { type: 'string' },
    seed: { type: 'string' },
    name: { type: 'string' },
    deadline: { type: 'string' },
    'remind-before': { type: 'string' },
    options: { type: 'string' },
    annotators: { type: 'string' },
    'base-url': { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    worker: { type: 'boolean' },
    'judge-run': { type: 'string', multiple: true },
    'tie-margin': { type: 'string' },
    top: { type: 'string' },
    out: { type: 'string' },
    format: { type: 'string' },
    columns: { type: 'string' },
    json: { type: 'boolean' },
    select: { type: 'string' },
    budget: { type: 'string' },
    'disagreement-from': { type: 'string' },
    'target-width': { type: 'string' },
  },
  async run({ values, positionals }) {
    const [action, name, file] = positionals;
    const store = () => openStore();
    switch (action) {
      case 'create': {
        if (typeof values.run !== 'string') throw new InputError(`missing --run RUN_ID\nUsage: ${USAGE}`);
        const study = await designStudy(await store(), {
          runId: values.run,
          name: values.name as string | undefined,
          copilots:
            typeof values.copilots === 'string'
              ? values.copilots
                  .split(',')
                  .map((c) => c.trim())
                  .filter(Boolean)
              : undefined,
          queries: wholeNumber(values, 'queries'),
          queryFile: values['query-file'] as string | undefined,
          perItem: wholeNumber(values, 'per-item', 11)!,
          seed: values.seed as string | undefined,
          deadline: values.deadline as string | undefined,
          remindBefore: values['remind-before'] as string | undefined,
          optionsFile: values.options as string | undefined,
          select: values.select as 'uniform' | 'active' | undefined,
          budget: wholeNumber(values, 'budget'),
          disagreementFrom: values['disagreement-from'] as string | undefined,
        });
        try {
          await ensureLocalServer({ log: (l) => console.error(l) });
          const client = await connectClient();
          try {
            await startStudyWorkflow(client, study, await taskQueue());
          } finally {
            await client.connection.close();
          }
        } catch (error) {
          // The design is stored; the app starts the workflow when it first delivers an answer.
          console.error(
            `warning: could not start the study workflow yet (${(error as Error).message}); \`study serve\` starts it once Temporal answers`,
          );
        }
        const e = study.spec.excluded;
        console.log(
          `Study ${study.name}: ${study.items} items (${study.spec.queryIds.length} queries × pairs of ${study.spec.copilots.join(', ')}), ${study.assignments} assignments (${study.spec.perItem} per item)` +
            `${e.pairs ? `; left out ${e.pairs} items whose responses failed (${e.failed}) or are missing (${e.missing})` : ''}.` +
            `${study.spec.selection?.method === 'active' ? ` Active selection: ${study.items} of ${study.spec.selection.candidates} items drawn by ${study.spec.selection.basis === 'disagreement' ? `where annotators and the judge disagreed in study ${study.spec.selection.disagreementFrom}` : "the judge's uncertainty"} (budget ${study.spec.selection.budget}; every inclusion probability ≥ ${study.spec.selection.floor.toFixed(3)}).` : ''}` +
            `${study.spec.deadline ? ` Closes at ${study.spec.deadline}.` : ''} Workflow ${study.workflowId}. Next: judgeflow study invite ${study.name} --annotators N`,
        );
        if (values.json)
          console.log(
            JSON.stringify({
              study: study.name,
              items: study.items,
              assignments: study.assignments,
              excluded: e,
              workflowId: study.workflowId,
            }),
          );
        return 0;
      }
      case 'invite': {
        const s = await requireStudy(await store(), name);
        const count = wholeNumber(values, 'annotators');
        if (count === undefined) throw new InputError(`missing --annotators N\nUsage: ${USAGE}`);
        const people = await inviteAnnotators(await store(), s.name, count);
        const base = (values['base-url'] as string | undefined) ?? 'http://127.0.0.1:8787';
        console.error(
          `${people.length} personal links (the token in each is the only credential; only its hash is stored, so keep this list):`,
        );
        for (const p of people)
          console.log(`${p.label}\t${p.assignments} assignments\t${annotationLink(base, p.token)}`);
        return 0;
      }
      case 'serve':
        return serve(values);
      case 'close': {
        const s = await requireStudy(await store(), name);
        if (s.status === 'closed') throw new InputError(`study ${s.name} is already closed`);
        const client = await connectClient();
        try {
          const result = await closeStudyWorkflow(client, s, { log: (line) => console.error(line) });
          console.log(
            `Study ${s.name} closed: ${result.recorded} answers recorded by the workflow (${result.recordedAtClose} picked up at close).`,
          );
        } finally {
          await client.connection.close();
        }
        return 0;
      }
      case 'report': {
        const s = await requireStudy(await store(), name);
        const tieMargin = values['tie-margin'] === undefined ? 0 : Number(values['tie-margin']);
        if (!(tieMargin >= 0))
          throw new InputError(
            `--tie-margin ${String(values['tie-margin'])}: expected a number ≥ 0 (in the protocol's total score units)`,
          );
        const { dir, report } = await writeStudyReport(await store(), s, {
          judgeRuns: values['judge-run'] as string[] | undefined,
          tieMargin,
          top: wholeNumber(values, 'top'),
          outDir: values.out as string | undefined,
        });
        if (report.counts.pendingSubmissions)
          console.error(
            `warning: ${report.counts.pendingSubmissions} submitted answers are not yet recorded by the study workflow (is a worker running?); they are not in this report`,
          );
        console.log(`Study report: ${path.join(dir, 'study.md')} (study.json, study.xlsx beside it)`);
        return 0;
      }
      case 'export': {
        const s = await requireStudy(await store(), name);
        const format = (values.format as string | undefined) ?? 'csv';
        if (format !== 'csv' && format !== 'jsonl') throw new InputError(`--format ${format}: expected csv or jsonl`);
        const text = await exportAnnotations(await store(), s, format);
        if (values.out) writeTextAtomic(values.out as string, text);
        else process.stdout.write(text);
        return 0;
      }
      case 'import': {
        const s = await requireStudy(await store(), name);
        if (!file) throw new InputError(`missing FILE\nUsage: ${USAGE}`);
        if (!fs.existsSync(file)) throw new InputError(`${file} does not exist`);
        const n = await importAnnotations(await store(), s, file, parseColumnMap(values.columns as string | undefined));
        console.log(`Imported ${n} annotations into study ${s.name}.`);
        return 0;
      }
      case 'list': {
        // Read-only: a fresh home has no store, and so no studies; nothing is created to say so.
        const existing = await openExistingStore();
        if (!existing) {
          console.error(`No studies: there is no results store at ${storeLocation()} yet.`);
          return 0;
        }
        for (const s of await existing.studies.listStudies())
          console.log(
            `${s.name}\t${s.status}\trun ${s.runId}\tcreated ${s.createdAt}${s.spec.deadline ? `\tdeadline ${s.spec.deadline}` : ''}`,
          );
        return 0;
      }
      case 'status': {
        const st = await openExistingStore();
        if (!st)
          throw new InputError(
            `no study named ${name ?? '(none given)'}: there is no results store at ${storeLocation()} yet (see judgeflow study create)`,
          );
        const s = await requireStudy(st, name);
        const subs = await st.studies.submissions(s.name);
        const annotations = await st.studies.annotations(s.name);
        const assignments = (await st.studies.studyAssignments(s.name)).filter((a) => a.slot >= 0);
        const status = {
          study: s.name,
          status: s.status,
          assignments: assignments.length,
          answered: annotations.filter((a) => a.source === 'app').length,
          imported: annotations.filter((a) => a.source === 'import').length,
          pending: subs.filter((x) => x.status === 'pending').length,
          annotators: (await st.studies.annotators(s.name)).length,
          deadline: s.spec.deadline,
          events: await st.studies.studyEvents(s.name),
        };
        const targetWidth = values['target-width'] === undefined ? undefined : Number(values['target-width']);
        if (targetWidth !== undefined && !(targetWidth > 0 && targetWidth < 1))
          throw new InputError(
            `--target-width ${String(values['target-width'])}: expected a width of win rate between 0 and 1 (0.1 = ten points)`,
          );
        const calibrated = annotations.length ? await calibratedNow(st, s, { targetWidth }) : null;
        if (values.json) {
          console.log(JSON.stringify({ ...status, calibrated }));
          return 0;
        }
        console.log(
          `${s.name}: ${status.status}; ${status.answered}/${status.assignments} assignments answered by ${status.annotators} annotator${status.annotators === 1 ? '' : 's'}, ${status.pending} waiting for the workflow, ${status.imported} imported`,
        );
        if (calibrated) console.log(calibratedStatusLines(calibrated, targetWidth).join('\n'));
        return 0;
      }
      default:
        throw new InputError(`unknown study action "${action ?? ''}"\nUsage: ${USAGE}`);
    }
  },
};

/** Per copilot, the calibrated interval as the labels stand, and the labels projected to reach the target width. */
function calibratedStatusLines(c: CalibratedWinRates, targetWidth: number | undefined): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `Calibrated win rates (${c.design} selection; ${c.annotatedItems} of ${c.items} items annotated; an interval needs ${c.minimumAnnotatedQueries} annotated queries):`,
  ];
  for (const [name, x] of Object.entries(c.copilots)) {
    const now = x.ci95
      ? `${pct(x.winRate!)} [${pct(x.ci95.low)}, ${pct(x.ci95.high)}], width ${pct(x.ci95.high - x.ci95.low)}`
      : `no interval (${x.status}: ${x.moreLabelsNote})`;
    const target =
      targetWidth === undefined || !x.ci95
        ? ''
        : x.moreLabelsToTarget === null
          ? `; width ${pct(targetWidth)} is out of reach by labels alone (more queries are needed)`
          : `; about ${x.moreLabelsToTarget} more annotated items to reach width ${pct(targetWidth)}`;
    lines.push(`  ${name}: ${now}${target}`);
  }
  return lines;
}
