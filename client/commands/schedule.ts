import path from 'node:path';
import type { Client, ScheduleSpec } from '@temporalio/client';
import { temporalClient } from '../temporalSdk';
import type { Command } from '../args';
import type { ResultsStore } from '../../core/model/store';
import { openStore } from '../../stores';
import { listWorlds } from '../../activities/adapters/agent/world';
import { resolveSnapshotId, saveSnapshot } from '../../core/snapshots/snapshots';
import { protocolFor } from '../../rubrics';
import { assertName } from '../../core/model/names';
import { InputError } from '../../core/model/inputError';
import { refreshSnapshot } from '../../workflows';
import type { RefreshInput } from '../../contract/snapshot';
import type { StoredRunConfig } from '../../activities/deps';
import { taskQueue } from '../connection';
import { withClient } from '../runWorkflow';
import { ensureLocalServer } from '../temporalServer';
import {
  assertTrafficSource,
  CURATE_USAGE,
  curateInput,
  curateOptions,
  GENERATE_USAGE,
  generateInput,
  generateOptions,
  llmOptions,
  loadThenRunConfig,
} from '../snapshotOptions';

const USAGE = [
  'judgeflow schedule create NAME (--every 7d [--at HH:MM] | --at HH:MM | --cron "0 6 * * MON") --refresh generate|curate|none <options> [--then-run CONFIG [--alert-url URL | --alert-url-env VAR] [--alert-on regression|any] [--refresh-worlds]] [--paused] [--json]',
  `    generate options: ${GENERATE_USAGE}`,
  `    curate options:   ${CURATE_USAGE.replace('--from traffic.jsonl', '--from FILE|DIR|GLOB (newest file is used)')}`,
  '    none options:     --snapshot ID | --queries FILE, [--collect-again]; needs --then-run (the same queries benchmarked each time)',
  "    --every counts from the schedule's creation; --at HH:MM (UTC) fires at that time of day instead (every day when alone)",
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
  if (!m || Number(m[1]) <= 0)
    throw new InputError(
      `${flag} ${text}: expected a positive whole number and a unit s, m, h, d or w (e.g. 7d, 12h, 30m)`,
    );
  return Number(m[1]) * UNITS[m[2]];
}

function validName(name: string | undefined, usage: string, creating: boolean): string {
  if (!name) throw new InputError(`missing schedule NAME\nUsage: ${usage}`);
  // A new name is checked in full (it becomes the schedule id and part of every refresh's workflow ids); others only name what exists.
  return creating ? assertName(name, 'schedule name') : name;
}

/** "06:00" → milliseconds after midnight UTC. */
export function parseAt(text: string): number {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  if (!m) throw new InputError(`--at ${text}: expected a time of day HH:MM (UTC, 00:00 to 23:59)`);
  return (Number(m[1]) * 60 + Number(m[2])) * 60_000;
}

/**
 * Temporal fires an interval at epoch + n·every + offset. The offset puts the first firing where a user expects it:
 * one interval after creation, or (with --at) at the next such time of day, then every interval from there.
 */
export function intervalSpec(everyMs: number, atMs: number | undefined, now: Date): { every: number; offset: number } {
  const DAY = 86_400_000;
  let first = now.getTime() + everyMs;
  if (atMs !== undefined) {
    first = Math.floor(now.getTime() / DAY) * DAY + atMs;
    if (first <= now.getTime()) first += DAY;
  }
  return { every: everyMs, offset: ((first % everyMs) + everyMs) % everyMs };
}

export function spec(values: Record<string, unknown>, now = new Date()): ScheduleSpec {
  const every = typeof values.every === 'string' ? values.every : undefined;
  const cron = typeof values.cron === 'string' ? values.cron : undefined;
  const at = typeof values.at === 'string' ? parseAt(values.at) : undefined;
  if (cron && (every || at !== undefined))
    throw new InputError('give --cron "EXPRESSION" alone, or --every DURATION and/or --at HH:MM');
  if (!cron && !every && at === undefined)
    throw new InputError('give --every DURATION (and optionally --at HH:MM), --at HH:MM, or --cron "EXPRESSION"');
  if (!cron) return { intervals: [intervalSpec(every ? parseEvery(every) : 86_400_000, at, now)] };
  if (cron!.trim().split(/\s+/).length < 5 && !cron!.trim().startsWith('@'))
    throw new InputError(
      `--cron "${cron}": expected 5-7 fields (minute hour day-of-month month day-of-week ...) or @daily/@weekly/...`,
    );
  return { cronExpressions: [cron!.trim()] };
}

/** Build the refresh workflow's input from the command line, validating everything that can be checked now. */
export async function refreshInputFrom(
  name: string,
  values: Record<string, unknown>,
  store?: () => Promise<ResultsStore>,
): Promise<RefreshInput<StoredRunConfig>> {
  const kind = values.refresh;
  if (kind !== 'generate' && kind !== 'curate' && kind !== 'none')
    throw new InputError(
      `--refresh must be "generate", "curate" or "none"${kind ? `, not "${kind}"` : ''}\nUsage: ${USAGE}`,
    );
  if (values['collect-again'] && kind !== 'none')
    throw new InputError(
      `--collect-again re-collects one fixed snapshot: it needs --refresh none (a ${kind} schedule makes a new snapshot each time)`,
    );
  const alertUrl = typeof values['alert-url'] === 'string' ? values['alert-url'] : undefined;
  // A webhook URL with a token in it is a secret: --alert-url-env names the worker's environment variable that holds it.
  const alertUrlEnv = typeof values['alert-url-env'] === 'string' ? values['alert-url-env'] : undefined;
  const alertOn = values['alert-on'] ?? 'regression';
  if (alertOn !== 'regression' && alertOn !== 'any')
    throw new InputError(`--alert-on must be "regression" or "any", not "${alertOn}"`);
  if (alertUrl && alertUrlEnv) throw new InputError('give --alert-url URL or --alert-url-env VAR, not both');
  if (values['alert-on'] !== undefined && !alertUrl && !alertUrlEnv)
    throw new InputError('--alert-on needs --alert-url URL (or --alert-url-env VAR)');
  if (alertUrlEnv && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(alertUrlEnv))
    throw new InputError(`--alert-url-env ${alertUrlEnv}: expected an environment variable name (letters, digits, _)`);
  if ((alertUrl || alertUrlEnv) && typeof values['then-run'] !== 'string')
    throw new InputError(
      '--alert-url needs --then-run CONFIG: the alert compares each scheduled run with the previous one',
    );
  if (alertUrl) {
    let url: URL | undefined;
    try {
      url = new URL(alertUrl);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol))
      throw new InputError(`--alert-url ${alertUrl}: expected an http:// or https:// URL`);
  }
  let refresh: RefreshInput['refresh'];
  let fixedProtocol: string | undefined;
  if (kind === 'none') {
    if (typeof values['then-run'] !== 'string')
      throw new InputError(
        '--refresh none needs --then-run CONFIG: with no new snapshot to make, each firing is that benchmark run',
      );
    const snapshot = typeof values.snapshot === 'string' ? values.snapshot : undefined;
    const queries = typeof values.queries === 'string' ? values.queries : undefined;
    if (Boolean(snapshot) === Boolean(queries))
      throw new InputError(
        '--refresh none needs exactly one of --snapshot ID (a snapshot in the results store) or --queries FILE (imported as a snapshot now)',
      );
    const config = loadThenRunConfig(values['then-run'] as string, 'none');
    const s = await (store ?? openStore)();
    let snapshotId: string;
    if (snapshot) {
      const found = await resolveSnapshotId(s, snapshot);
      snapshotId = found.snapshotId;
      fixedProtocol = typeof found.meta?.protocol === 'string' ? found.meta.protocol : undefined;
    } else {
      const file = path.resolve(queries!);
      const protocol = protocolFor(config.protocol);
      snapshotId = (
        await saveSnapshot(s, protocol.labelsOf, {
          queries: protocol.parseQueries(file),
          parentId: null,
          meta: { generator: 'import', protocol: protocol.id, source: file, schedule: name },
        })
      ).snapshotId;
      fixedProtocol = protocol.id;
    }
    refresh = { kind, options: { snapshotId, collectAgain: Boolean(values['collect-again']) } };
  } else if (kind === 'generate') refresh = { kind, options: generateInput(values as never) };
  else {
    const from = typeof values.from === 'string' ? values.from : '';
    if (!from)
      throw new InputError(
        '--refresh curate needs --from FILE|DIR|GLOB (the newest traffic file is curated each time)',
      );
    assertTrafficSource(path.resolve(from));
    refresh = { kind, options: curateInput(values as never, from) };
  }
  const thenRun =
    typeof values['then-run'] === 'string'
      ? {
          config: loadThenRunConfig(
            values['then-run'],
            kind,
            refresh.kind === 'none' ? { protocol: fixedProtocol } : refresh.options,
          ),
        }
      : undefined;
  const on = alertOn as 'regression' | 'any';
  const alert = alertUrl ? { url: alertUrl, on } : alertUrlEnv ? { urlEnv: alertUrlEnv, on } : undefined;
  const refreshWorlds = Boolean(values['refresh-worlds']);
  if (refreshWorlds) await checkReplayedWorlds(thenRun?.config, values['then-run'] as string, store);
  return {
    schedule: name,
    refresh,
    ...(thenRun ? { thenRun } : {}),
    ...(alert ? { alert } : {}),
    ...(refreshWorlds ? { refreshWorlds: true } : {}),
  };
}

/**
 * --refresh-worlds: the --then-run config must have agent copilots that replay a world, and each world they name must
 * be in the results store (the first firing asks its calls again).
 */
async function checkReplayedWorlds(
  config: StoredRunConfig | undefined,
  file: string,
  store?: () => Promise<ResultsStore>,
): Promise<void> {
  if (!config)
    throw new InputError(
      "--refresh-worlds needs --then-run CONFIG: it refreshes the world snapshots that config's agent copilots replay before each run",
    );
  const replaying = config.copilots.flatMap((c) =>
    c.type === 'agent' && c.tools.mode === 'replay' ? [{ name: c.name, world: c.tools.world! }] : [],
  );
  if (!replaying.length)
    throw new InputError(
      `--refresh-worlds: no copilot of ${path.resolve(file)} replays a world snapshot (type: agent, tools.mode: replay, tools.world: world-…), so there is no world to refresh`,
    );
  const held = new Set((await listWorlds(await (store ?? openStore)())).map((w) => w.id));
  for (const c of replaying)
    if (!held.has(c.world))
      throw new InputError(
        `--refresh-worlds: copilot ${c.name} replays ${c.world}, which is not in the results store (${held.size ? `it holds: ${[...held].join(', ')}` : 'it holds no world snapshot'}; see judgeflow world list)`,
      );
}

const fmt = (d: Date | undefined) => (d ? d.toISOString() : '-');

function specText(
  s:
    | { intervals?: Array<{ every: number; offset?: number }>; cronExpressions?: string[]; calendars?: unknown[] }
    | undefined,
): string {
  if (!s) return '?';
  if (s.intervals?.length) return `every ${s.intervals.map((i) => humanMs(i.every)).join(', ')}`;
  if (s.cronExpressions?.length) return `cron ${s.cronExpressions.join(', ')}`;
  if (s.calendars?.length) return `calendar ${JSON.stringify(s.calendars)}`;
  return '?';
}

function humanMs(ms: number): string {
  // Days rather than weeks: "--every 14d" reads back as "every 14d".
  for (const [unit, size] of Object.entries(UNITS)
    .filter(([u]) => u !== 'w')
    .reverse())
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

export async function describeSchedule(client: Client, name: string, store?: ResultsStore) {
  const handle = client.schedule.getHandle(name);
  let d;
  try {
    d = await handle.describe();
  } catch (error) {
    if (error instanceof temporalClient().ScheduleNotFoundError)
      throw new InputError(`no schedule "${name}" (see judgeflow schedule list)`);
    throw error;
  }
  const recent = d.info.recentActions.map((a) => ({
    workflowId: a.action.workflow.workflowId,
    scheduledAt: a.scheduledAt,
    takenAt: a.takenAt,
  }));
  const results = store ?? (await openStore());
  const snapshots = await results.scheduleSnapshots(name);
  const input = (d.action as { args?: unknown[] }).args?.[0] as RefreshInput | undefined;
  const config = input?.thenRun?.config as
    | {
        judge?: { model: string; baseURL: string };
        judges?: Array<{ name?: string; model: string; baseURL: string }>;
        copilots?: Array<{ name: string; type: string; model?: string }>;
      }
    | undefined;
  const runs = [];
  for (const row of snapshots.filter((r) => r.runId).slice(0, 10)) {
    const run = await results.getRun(row.runId!);
    runs.push({
      runId: row.runId!,
      snapshotId: row.snapshotId,
      status: run?.status ?? 'not started',
      startedAt: run?.startedAt ?? null,
      finishedAt: run?.finishedAt ?? null,
    });
  }
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
    next: d.info.nextActionTimes.slice(0, 5),
    refresh: input?.refresh.kind ?? String(d.memo?.refresh ?? '?'),
    fixedSnapshot: input?.refresh.kind === 'none' ? input.refresh.options.snapshotId : null,
    /** The --then-run config file as given at creation (its contents were read then and are what each run uses). */
    config: String(d.memo?.thenRun ?? '') || null,
    judge: config?.judge ? { model: config.judge.model, baseURL: config.judge.baseURL } : null,
    judges: config?.judges?.map((j) => ({ name: j.name ?? j.model, model: j.model, baseURL: j.baseURL })) ?? null,
    copilots: config?.copilots?.map((c) => ({ name: c.name, type: c.type, model: c.model ?? null })) ?? [],
    alert: input?.alert ? { on: input.alert.on, ...(input.alert.urlEnv ? { urlEnv: input.alert.urlEnv } : {}) } : null,
    /** --refresh-worlds: the replaying agent copilots' world snapshots are asked again before each run. */
    refreshWorlds: Boolean(input?.refreshWorlds),
    runs,
    snapshots,
  };
}

export const scheduleCommand: Command = {
  name: 'schedule',
  summary:
    'periodic snapshot refresh with Temporal Schedules (create, list, describe, pause, unpause, trigger, delete)',
  usage: USAGE,
  options: {
    every: { type: 'string' },
    cron: { type: 'string' },
    refresh: { type: 'string' },
    'then-run': { type: 'string' },
    at: { type: 'string' },
    snapshot: { type: 'string' },
    queries: { type: 'string' },
    'collect-again': { type: 'boolean' },
    'alert-url': { type: 'string' },
    'alert-url-env': { type: 'string' },
    'alert-on': { type: 'string' },
    'refresh-worlds': { type: 'boolean' },
    paused: { type: 'boolean' },
    json: { type: 'boolean' },
    ...llmOptions,
    ...generateOptions,
    ...curateOptions,
  },
  async run({ values, positionals }) {
    const [action, rawName] = positionals;
    if (!action) throw new InputError(`missing action\nUsage: ${USAGE}`);
    if (!['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'delete'].includes(action))
      throw new InputError(`unknown action "${action}"\nUsage: ${USAGE}`);
    const name = action === 'list' ? '' : validName(rawName, USAGE, action === 'create');
    // Validate everything before touching the server.
    const created =
      action === 'create' ? { spec: spec(values), input: await refreshInputFrom(name, values) } : undefined;
    await ensureLocalServer({ log: (l) => console.error(l) });
    return withClient(async (client) => {
      const handle = client.schedule.getHandle(name);
      const missing = (error: unknown) => {
        if (error instanceof temporalClient().ScheduleNotFoundError)
          throw new InputError(`no schedule "${name}" (see judgeflow schedule list)`);
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
              action: {
                type: 'startWorkflow',
                workflowType: refreshSnapshot,
                taskQueue: queue,
                workflowId: `${name}-refresh`,
                args: [input],
              },
              // A refresh still running when the next is due is not stacked: the next one is skipped.
              policies: { overlap: temporalClient().ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
              memo: {
                [MARK]: 'snapshot-refresh',
                refresh: input.refresh.kind,
                thenRun: typeof values['then-run'] === 'string' ? path.resolve(values['then-run']) : '',
                alert: input.alert ? input.alert.on : '',
                refreshWorlds: Boolean(input.refreshWorlds),
              },
              state: { paused: Boolean(values.paused), note: `judgeflow snapshot refresh (${input.refresh.kind})` },
            });
          } catch (error) {
            if (error instanceof temporalClient().ScheduleAlreadyRunning)
              throw new InputError(
                `schedule "${name}" already exists; delete it first (judgeflow schedule delete ${name}) or pick another name`,
              );
            throw error;
          }
          if (values.json) console.log(JSON.stringify({ name, created: true }));
          else
            console.log(
              `Created schedule "${name}" (${specText(created!.spec as never)}, ${input.refresh.kind === 'none' ? `snapshot ${input.refresh.options.snapshotId} each time` : `refresh by ${input.refresh.kind}`}${input.thenRun ? `, then a benchmark run${input.refreshWorlds ? ' on refreshed world snapshots' : ''}` : ''}${input.alert ? `, alert on ${input.alert.on}` : ''}) on task queue ${queue}.\nA worker must be running (judgeflow worker). Run it now with: judgeflow schedule trigger ${name}`,
            );
          return 0;
        }
        case 'list': {
          const rows = [];
          for await (const s of client.schedule.list()) {
            if (!s.memo?.[MARK]) continue;
            rows.push({
              name: s.scheduleId,
              spec: specText(s.spec as never),
              paused: s.state.paused,
              refresh: String(s.memo.refresh ?? '?'),
              last: s.info.recentActions.at(-1)?.action.workflow.workflowId ?? null,
              next: s.info.nextActionTimes[0],
            });
          }
          if (values.json) console.log(JSON.stringify(rows));
          else if (!rows.length) console.log('No judgeflow schedules (create one with judgeflow schedule create).');
          else
            for (const r of rows)
              console.log(
                `${r.name}  ${r.spec}  refresh ${r.refresh}${r.paused ? '  PAUSED' : ''}  next ${fmt(r.next)}  last ${r.last ?? '-'}`,
              );
          return 0;
        }
        case 'describe': {
          const d = await describeSchedule(client, name);
          if (values.json) console.log(JSON.stringify(d));
          else {
            console.log(
              `${d.name}: ${d.spec}, ${d.paused ? 'PAUSED' : 'active'}${d.note ? ` (${d.note})` : ''}; ${d.actionsTaken} action(s) taken, ${d.skippedOverlap} skipped for overlap`,
            );
            console.log(`  refresh: ${d.refresh}${d.fixedSnapshot ? ` (snapshot ${d.fixedSnapshot} each time)` : ''}`);
            console.log(`  config: ${d.config ?? '- (no --then-run: snapshots only)'}`);
            if (d.judge) console.log(`  judge: ${d.judge.model} at ${d.judge.baseURL}`);
            for (const j of d.judges ?? []) console.log(`  judge ${j.name}: ${j.model} at ${j.baseURL}`);
            if (d.copilots.length)
              console.log(
                `  copilots: ${d.copilots.map((c) => `${c.name} (${c.type}${c.model ? ` ${c.model}` : ''})`).join(', ')}`,
              );
            if (d.alert) console.log(`  alert: on ${d.alert.on}`);
            if (d.refreshWorlds)
              console.log("  worlds: the replaying agent copilots' world snapshots are asked again before each run");
            console.log(`  next: ${d.next.map(fmt).join(', ') || '-'}`);
            for (const r of d.runs)
              console.log(`  run ${r.runId}: ${r.status}${r.startedAt ? ` (started ${r.startedAt})` : ''}`);
            if (d.running.length) console.log(`  running: ${d.running.join(', ')}`);
            for (const r of d.recent) console.log(`  started ${fmt(r.takenAt)}: ${r.workflowId}`);
            for (const s of d.snapshots)
              console.log(
                `  snapshot ${s.snapshotId} (parent ${s.parentId ?? '-'}) at ${s.createdAt}${s.runId ? `, run ${s.runId}` : ''}`,
              );
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
          console.log(
            `Triggered schedule "${name}" (skipped if a refresh is still running; see judgeflow schedule describe ${name}).`,
          );
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
