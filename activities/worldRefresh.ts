import { canonicalJson } from '../core/model/hashing';
import { InputError } from '../core/model/inputError';
import type { WorldCall } from '../core/model/agentSteps';
import type { WorldRefresh } from '../contract/snapshot';
import { Toolbox, type ToolsSettings } from './adapters/agent/toolbox';
import { diffWorlds, listWorlds, worldById, worldIdOf } from './adapters/agent/world';
import { expandEnv } from './adapters/common';
import type { ActivityDeps, StoredRunConfig } from './deps';
import { nonRetryableInput } from './failures';
import { cancellationSignal, withHeartbeat } from './heartbeat';

/**
 * A schedule's world refresh (issue 34): before a scheduled run, every call of the world a replaying agent copilot
 * answers from is asked of its tools again and recorded as a new world snapshot, which the run then replays — so the
 * configs it compares still see one world, and that world is today's. The new world's recording is named after the schedule, the
 * copilot and the firing (`schedule:<name>:<copilot>:<firing>`), and the next firing refreshes the newest one of them:
 * worlds of one schedule form a chain, as its query snapshots do. A call the tools no longer answer (a transport fault,
 * a tool gone from the server) keeps its previous result, counted as `kept`.
 */

type Copilot = StoredRunConfig['copilots'][number];
type Replaying = Copilot & { type: 'agent'; tools: ToolsSettings & { mode: 'replay'; world: string } };

const isReplaying = (c: Copilot): c is Replaying =>
  c.type === 'agent' && (c as { tools?: ToolsSettings }).tools?.mode === 'replay';

const TOOLS_LIST = '(tools/list)';

export const worldRecordingPrefix = (schedule: string, copilot: string) => `schedule:${schedule}:${copilot}:`;

export function worldRefreshActivities(deps: ActivityDeps) {
  const { store, env } = deps;

  /** The schedule's newest world for this copilot (an earlier firing's), else the one its config names. */
  async function previousWorld(schedule: string, copilot: Replaying, recording: string) {
    const prefix = worldRecordingPrefix(schedule, copilot.name);
    const mine = (await listWorlds(store))
      .filter((w) => w.recording.startsWith(prefix) && w.recording !== recording)
      .sort((a, b) => a.lastAt.localeCompare(b.lastAt));
    const last = mine[mine.length - 1];
    if (last) return last;
    try {
      return { id: copilot.tools.world, ...(await worldById(store, copilot.tools.world)) };
    } catch (error) {
      // No such world: a config fault no retry mends (the message names the worlds there are).
      throw new InputError(`copilot ${copilot.name}: ${(error as Error).message}`);
    }
  }

  /** Ask every call of `base` again into `recording` (a retried attempt keeps what an earlier one recorded). */
  async function askAgain(tools: ToolsSettings, base: WorldCall[], recording: string): Promise<void> {
    const box = new Toolbox({ ...tools, mode: 'record', world: undefined, onMissing: 'fail' }, env, (template, where) =>
      expandEnv(template, env, where),
    );
    try {
      const session = await box.open(store, recording);
      for (const call of base)
        if (call.tool !== TOOLS_LIST) await session.call(call.tool, JSON.parse(call.arguments), cancellationSignal());
    } finally {
      await box.close();
    }
    const now = new Set((await store.worldCalls(recording)).map((c) => c.key));
    const kept = base.filter((c) => !now.has(c.key));
    if (kept.length) await store.putWorldCalls(recording, kept);
  }

  return {
    /**
     * Refresh the world of every replaying agent copilot of `copilots`; the copilots come back pointing at their new
     * worlds. Copilots that replay one world with the same tools share one round of calls (the others copy its result).
     */
    async refreshWorlds({
      schedule,
      workflowId,
      copilots,
    }: {
      schedule: string;
      workflowId: string;
      copilots: Copilot[];
    }): Promise<{ copilots: Copilot[]; worlds: WorldRefresh[] }> {
      return withHeartbeat(async () => {
        const worlds: WorldRefresh[] = [];
        const done = new Map<string, string>();
        const out: Copilot[] = [];
        for (const copilot of copilots) {
          if (!isReplaying(copilot)) {
            out.push(copilot);
            continue;
          }
          const recording = `${worldRecordingPrefix(schedule, copilot.name)}${workflowId}`;
          const from = await nonRetryableInput(() => previousWorld(schedule, copilot, recording));
          const group = `${from.id}\u0000${canonicalJson({ mcp: copilot.tools.mcp, http: copilot.tools.http })}`;
          const asked = done.get(group);
          if (asked) await store.putWorldCalls(recording, await store.worldCalls(asked));
          else await askAgain(copilot.tools, from.calls, recording);
          done.set(group, asked ?? recording);
          const calls = await store.worldCalls(recording);
          const to = worldIdOf(calls);
          const diff = diffWorlds(from.calls, calls);
          worlds.push({
            copilot: copilot.name,
            from: from.id,
            to,
            calls: calls.filter((c) => c.tool !== TOOLS_LIST).length,
            changed: diff.changed.filter((c) => c.a.tool !== TOOLS_LIST).length,
            kept: calls.filter((c) => c.tool !== TOOLS_LIST && from.calls.some((b) => sameRecord(b, c))).length,
            recording,
          });
          out.push({ ...copilot, tools: { ...copilot.tools, world: to } });
        }
        return { copilots: out, worlds };
      });
    },
  };
}

/** The very record of the earlier world (copied over, not asked again): same result, same time of recording. */
const sameRecord = (a: WorldCall, b: WorldCall) =>
  a.key === b.key && a.result === b.result && a.recordedAt === b.recordedAt;
