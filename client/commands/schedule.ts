import path from 'node:path';
import type { Client, ScheduleSpec } from '@temporalio/client';
import { temporalClient } from '../temporalSdk';
import type { Command } from '../args';
import type { ResultsStore } from '../../core/store';
import { openStore } from '../../stores';
import { assertName } from '../../core/names';
import { InputError } from '../../core/inputError';
import { refreshSnapshot } from '../../workflows';
import type { RefreshInput } from '../../workflows/snapshotTypes';
import { taskQueue } from '../connection';
import { withClient } from '../runWorkflow';
import { ensureLocalServer } from '../temporalServer';
import { assertTrafficSource, CURATE_USAGE, curateInput, curateOptions, GENERATE_USAGE, generateInput, generateOptions, llmOptions, loadThenRunConfig } from '../snapshotOptions';

const USAGE = [
  'judgeflow schedule create NAME (--every 7d | --cron "0 6 * * MON") --refresh generate|curate <options> [--then-run CONFIG] [--paused] [--json]',
  `    generate options: ${GENERATE_USAGE}`,
  `    curate options:   ${CURATE_USAGE.replace('--from traffic.jsonl', '--from FILE|DIR|GLOB (newest file is used)')}`,
  '       judgeflow schedule list [--json]',
  '       judgeflow schedule describe NAME [--json]',
  '       judgeflow schedule pause|unpause|trigger|delete NAME',
].join('\n');

/** Memo key marking schedules judgeflow created, so `schedule list` leaves other schedules on the namespace alone. */
export const MARK = 'judgeflow';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "7d", "12h", "30m", "90s", "2w" → milliseconds. */
export function parseEvery(text: string, flag = '--every'): number {
  const m = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0) throw new InputError(`${flag} ${text}: expected a positive whole number and a unit s, m, h, d or w (e.g. 7d, 12h, 30m)`);
  return Number(m[1]) * UNITS[m[2]];
}

function validName(name: string | undefined, usage: string, creating: boolean): string {
  if (!name) throw new InputError(`missing schedule NAME\nUsage: ${usage}`);
  // A new name is checked in full (it becomes the schedule id and part of every refresh's workflow ids); others only name what exists.
  return creating ? assertName(name, 'schedule name') : name;
}

function spec(values: Record<string, unknown>): ScheduleSpec {
  const every = typeof values.every === 'string' ? values.every : undefined;
  const cron = typeof values.cron === 'string' ? values.cron : undefined;
  if (Boolean(every) === Boolean(cron)) throw new InputError('give exactly one of --every DURATION or --cron "EXPRESSION"');
  if (every) return { intervals: [{ every: parseEvery(every) }] };
  if (cron!.trim().split(/\s+/).length < 5 && !cron!.trim().startsWith('@')) throw new InputError(`--cron "${cron}": expected 5-7 fields (minute hour day-of-month month day-of-week ...) or @daily/@weekly/...`);
  return { cronExpressions: [cron!.trim()] };
}

/** Build the refresh workflow's input from the command line, validating everything that can be checked now. */
export function refreshInputFrom(name: string, values: Record<string, unknown>): RefreshInput {
  const kind = values.refresh;
  if (kind !== 'generate' && kind !== 'curate') throw new InputError(`--refresh must be "generate" or "curate"${kind ? `, not "${kind}"` : ''}\nUsage: ${USAGE}`);
  let refresh: RefreshInput['refresh'];
  if (kind === 'generate') refresh = { kind, options: generateInput(values as never) };
  else {
    const from = typeof values.from === 'string' ? values.from : '';
    if (!from) throw new InputError('--refresh curate needs --from FILE|DIR|GLOB (the newest traffic file is curated each time)');
    assertTrafficSource(path.resolve(from));
    refresh = { kind, options: curateInput(values as never, from) };
  }
  const thenRun = typeof values['then-run'] === 'string' ? { config: loadThenRunConfig(values['then-run'], kind, refresh.options) as unknown as NonNullable<RefreshInput['thenRun']>['config'] } : undefined;
  return { schedule: name, refresh, ...(thenRun ? { thenRun } : {}) };
}

const fmt = (d: Date | undefined) => (d ? d.toISOString() : '-');

function specText(s: { intervals?: Array<{ every: number }>; cronExpressions?: string[]; calendars?: unknown[] } | undefined): string {
  if (!s) return '?';
  if (s.intervals?.length) return `every ${s.intervals.map((i) => humanMs(i.every)).join(', ')}`;
  if (s.cronExpressions?.length) return `cron ${s.cronExpressions.join(', ')}`;
  if (s.calendars?.length) return `calendar ${JSON.stringify(s.calendars)}`;
  return '?';
}

function humanMs(ms: number): string {
  // Days rather than weeks: "--every 14d" reads back as "every 14d".
  for (const [unit, size] of Object.entries(UNITS).filter(([u]) => u !== 'w').reverse()) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

export async function describeSchedule(client: Client, name: string, store?: ResultsStore) {
  const handle = client.schedule.getHandle(name);
  let d;
  try {
    d = await handle.describe();
  } catch (error) {
    if (error instanceof temporalClient().ScheduleNotFoundError) throw new InputError(`no schedule "${name}" (see judgeflow schedule list)`);
    throw error;
  }
  const recent = d.info.recentActions.map((a) => ({ workflowId: a.action.workflow.workflowId, scheduledAt: a.scheduledAt, takenAt: a.takenAt }));
  return {
    name,
    spec: specText(d.spec as never),
    paused: d.state.paused,
    note: d.state.note ?? null,
    memo: d.memo ?? {},
    actionsTaken: d.info.numActionsTaken,
    skippedOverlap: d.info.numActionsSkippedOverlap,
    running: d.info.runningActions.map((a) => a.workflow.workflowId),
    recent,
    next: d.info.nextActionTimes.slice(0, 3),
    snapshots: await (store ?? (await openStore())).scheduleSnapshots(name),
  };
}

export const scheduleCommand: Command = {
  name: 'schedule',
  summary: 'periodic snapshot refresh with Temporal Schedules (create, list, describe, pause, unpause, trigger, delete)',
  usage: USAGE,
  options: {
    every: { type: 'string' },
    cron: { type: 'string' },
    refresh: { type: 'string' },
    'then-run': { type: 'string' },
    paused: { type: 'boolean' },
    json: { type: 'boolean' },
    ...llmOptions,
    ...generateOptions,
    ...curateOptions,
  },
  async run({ values, positionals }) {
    const [action, rawName] = positionals;
    if (!action) throw new InputError(`missing action\nUsage: ${USAGE}`);
    if (!['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'delete'].includes(action)) throw new InputError(`unknown action "${action}"\nUsage: ${USAGE}`);
    const name = action === 'list' ? '' : validName(rawName, USAGE, action === 'create');
    // Validate everything before touching the server.
    const created = action === 'create' ? { spec: spec(values), input: refreshInputFrom(name, values) } : undefined;
    await ensureLocalServer({ log: (l) => console.error(l) });
    return withClient(async (client) => {
      const handle = client.schedule.getHandle(name);
      const missing = (error: unknown) => {
        if (error instanceof temporalClient().ScheduleNotFoundError) throw new InputError(`no schedule "${name}" (see judgeflow schedule list)`);
        throw error;
      };
      switch (action) {
        case 'create': {
          const { input } = created!;
          const queue = await taskQueue();
          try {
            await client.schedule.create({
              scheduleId: name,
              spec: created!.spec,
              action: { type: 'startWorkflow', workflowType: refreshSnapshot, taskQueue: queue, workflowId: `${name}-refresh`, args: [input] },
              // A refresh still running when the next is due is not stacked: the next one is skipped.
              policies: { overlap: temporalClient().ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
              memo: { [MARK]: 'snapshot-refresh', refresh: input.refresh.kind, thenRun: typeof values['then-run'] === 'string' ? path.resolve(values['then-run']) : '' },
              state: { paused: Boolean(values.paused), note: `judgeflow snapshot refresh (${input.refresh.kind})` },
            });
          } catch (error) {
            if (error instanceof temporalClient().ScheduleAlreadyRunning) throw new InputError(`schedule "${name}" already exists; delete it first (judgeflow schedule delete ${name}) or pick another name`);
            throw error;
          }
          if (values.json) console.log(JSON.stringify({ name, created: true }));
          else console.log(`Created schedule "${name}" (${specText(created!.spec as never)}, refresh by ${input.refresh.kind}${input.thenRun ? ', then a benchmark run' : ''}) on task queue ${queue}.\nA worker must be running (judgeflow worker). Run it now with: judgeflow schedule trigger ${name}`);
          return 0;
        }
        case 'list': {
          const rows = [];
          for await (const s of client.schedule.list()) {
            if (!s.memo?.[MARK]) continue;
            rows.push({ name: s.scheduleId, spec: specText(s.spec as never), paused: s.state.paused, refresh: String(s.memo.refresh ?? '?'), last: s.info.recentActions.at(-1)?.action.workflow.workflowId ?? null, next: s.info.nextActionTimes[0] });
          }
          if (values.json) console.log(JSON.stringify(rows));
          else if (!rows.length) console.log('No judgeflow schedules (create one with judgeflow schedule create).');
          else for (const r of rows) console.log(`${r.name}  ${r.spec}  refresh ${r.refresh}${r.paused ? '  PAUSED' : ''}  next ${fmt(r.next)}  last ${r.last ?? '-'}`);
          return 0;
        }
        case 'describe': {
          const d = await describeSchedule(client, name);
          if (values.json) console.log(JSON.stringify(d));
          else {
            console.log(`${d.name}: ${d.spec}, ${d.paused ? 'PAUSED' : 'active'}${d.note ? ` (${d.note})` : ''}; ${d.actionsTaken} action(s) taken, ${d.skippedOverlap} skipped for overlap`);
            console.log(`  next: ${d.next.map(fmt).join(', ') || '-'}`);
            if (d.running.length) console.log(`  running: ${d.running.join(', ')}`);
            for (const r of d.recent) console.log(`  started ${fmt(r.takenAt)}: ${r.workflowId}`);
            for (const s of d.snapshots) console.log(`  snapshot ${s.snapshotId} (parent ${s.parentId ?? '-'}) at ${s.createdAt}${s.runId ? `, run ${s.runId}` : ''}`);
          }
          return 0;
        }
        case 'pause':
          await handle.pause('paused with judgeflow schedule pause').catch(missing);
          console.log(`Paused schedule "${name}".`);
          return 0;
        case 'unpause':
          await handle.unpause('unpaused with judgeflow schedule unpause').catch(missing);
          console.log(`Unpaused schedule "${name}".`);
          return 0;
        case 'trigger':
          // Same overlap rule as scheduled actions: a refresh already running is not doubled.
          await handle.trigger(temporalClient().ScheduleOverlapPolicy.SKIP).catch(missing);
          console.log(`Triggered schedule "${name}" (skipped if a refresh is still running; see judgeflow schedule describe ${name}).`);
          return 0;
        case 'delete':
          await handle.delete().catch(missing);
          console.log(`Deleted schedule "${name}" (its snapshots stay in the results store).`);
          return 0;
      }
      return 2;
    });
  },
};
