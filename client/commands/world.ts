import { diffWorlds, listWorlds } from '../../activities/adapters/agent/world';
import { InputError } from '../../core/model/inputError';
import { openExistingStore } from '../../stores';
import type { Command } from '../args';

const USAGE = 'judgeflow world list [--json] | world show WORLD_ID [--json] | world diff WORLD_A WORLD_B [--json]';

/** World snapshots: the tool results agent runs recorded (tools.mode record), content-addressed (world-…). */
export const worldCommand: Command = {
  name: 'world',
  summary: 'list, show and compare the world snapshots (recorded tool results) agent copilots replay',
  usage: USAGE,
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [verb, ...ids] = positionals;
    if (!verb || !['list', 'show', 'diff'].includes(verb))
      throw new InputError(`world: say list, show or diff\nUsage: ${USAGE}`);
    const store = await openExistingStore();
    const worlds = store ? await listWorlds(store) : [];
    const find = (id: string | undefined) => {
      if (!id) throw new InputError(`world ${verb}: missing WORLD_ID\nUsage: ${USAGE}`);
      const found = worlds.find((w) => w.id === id);
      if (!found)
        throw new InputError(
          `no world snapshot ${id} in this results store (${worlds.length ? `there are: ${worlds.map((w) => w.id).join(', ')}` : 'it holds none'}); record one with tools.mode: record`,
        );
      return found;
    };
    const isTools = (tool: string) => tool === '(tools/list)';
    if (verb === 'list') {
      if (values.json)
        console.log(
          JSON.stringify(
            worlds.map((w) => ({
              id: w.id,
              recording: w.recording,
              calls: w.calls.filter((c) => !isTools(c.tool)).length,
              firstAt: w.firstAt,
              lastAt: w.lastAt,
            })),
            null,
            2,
          ),
        );
      else if (!worlds.length) console.log('No world snapshots yet: run an agent copilot with tools.mode: record.');
      else
        for (const w of worlds)
          console.log(
            `${w.id}  recorded by ${w.recording}  ${w.calls.filter((c) => !isTools(c.tool)).length} tool calls  ${w.firstAt} … ${w.lastAt}`,
          );
      return 0;
    }
    if (verb === 'show') {
      const w = find(ids[0]);
      if (values.json) console.log(JSON.stringify(w, null, 2));
      else {
        console.log(`${w.id}: recorded by ${w.recording}, ${w.calls.length} entries`);
        for (const c of w.calls)
          console.log(
            `  ${c.tool} ${c.arguments}${c.isError ? '  (error)' : ''}\n    ${c.result.length > 300 ? `${c.result.slice(0, 300)}… (${c.result.length} chars)` : c.result}`,
          );
      }
      return 0;
    }
    const a = find(ids[0]);
    const b = find(ids[1]);
    const diff = diffWorlds(a.calls, b.calls);
    if (values.json) console.log(JSON.stringify({ a: a.id, b: b.id, ...diff }, null, 2));
    else {
      console.log(
        `${a.id} vs ${b.id}: ${diff.same} the same, ${diff.changed.length} changed, ${diff.onlyA.length} only in ${a.id}, ${diff.onlyB.length} only in ${b.id}`,
      );
      for (const c of diff.changed)
        console.log(
          `  changed ${c.a.tool} ${c.a.arguments}\n    ${a.id}: ${c.a.result.slice(0, 200)}\n    ${b.id}: ${c.b.result.slice(0, 200)}`,
        );
      for (const c of diff.onlyA) console.log(`  only in ${a.id}: ${c.tool} ${c.arguments}`);
      for (const c of diff.onlyB) console.log(`  only in ${b.id}: ${c.tool} ${c.arguments}`);
    }
    return 0;
  },
};
