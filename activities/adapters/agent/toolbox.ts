import { canonicalJson } from '../../../core/model/hashing';
import type { ResultsStore } from '../../../core/model/store';
import type { WorldCall } from '../../../core/model/agentSteps';
import { AdapterError } from '../types';
import { callHttpTool, httpToolSpec, type HttpToolConfig } from './httpTools';
import { connectMcp, type McpConnection, type McpServerConfig, type ToolResult } from './mcpTools';
import type { ToolSpec } from './model';
import { worldById, worldKey } from './world';

/**
 * An agent's tools and the world they answer from. `live` asks the services; `record` asks them and keeps each result in
 * the run's recording (a call already recorded there is answered from it, so every copilot of the run sees one world);
 * `replay` answers from a named world snapshot and asks no service at all — not even for the tool list, which the world
 * holds too. A call the world lacks fails the item (`onMissing: fail`) or is asked live and recorded into the run's own
 * recording, which starts as a copy of the replayed world (`onMissing: live`): a new world snapshot.
 */

export interface ToolsSettings {
  mcp: McpServerConfig[];
  http: HttpToolConfig[];
  mode: 'live' | 'record' | 'replay';
  world?: string;
  onMissing: 'fail' | 'live';
}

/** Where a tool comes from, with its spec as the model is told. */
interface ListedTool extends ToolSpec {
  server: string;
}

/** The world key of a server's tool list (the world holds it, so a replay lists no server). */
const toolsKey = (server: string) => worldKey('(tools/list)', { server });

type Flight = Promise<ToolResult & { origin: 'live' | 'world'; recorded: boolean }>;

/** Who claims a call across workers (this process), and how long a claim holds before the next round may take it over. */
const OWNER = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
let claims = 0;
export const CLAIM_LEASE_MS = 60_000;

/** Worlds are content-addressed, so what one id holds never changes: read once per worker. */
const worldCache = new Map<string, Promise<{ recording: string; calls: WorldCall[] }>>();

export class Toolbox {
  private connections = new Map<string, Promise<McpConnection>>();
  /** Calls this copilot is recording now, by recording and key: an item making one already in flight shares it. */
  readonly flights = new Map<string, Flight>();

  constructor(
    private readonly settings: ToolsSettings,
    readonly env: NodeJS.ProcessEnv,
    private readonly expand: (template: string, where: string) => string,
  ) {}

  /** The tools offered to the model, and the world the item answers from (`recording`: where new results go). */
  async open(store: ResultsStore | undefined, recording: string | undefined): Promise<ToolSession> {
    const { mode } = this.settings;
    if (mode !== 'live' && (!store || !recording))
      throw new AdapterError('config', `tools.mode ${mode} needs the results store (it runs inside a run)`);
    const base = mode === 'replay' ? await this.world(store!) : null;
    const recorded = new Map<string, WorldCall>();
    if (mode === 'record') for (const c of await store!.worldCalls(recording!)) recorded.set(c.key, c);
    const session = new ToolSession(this, this.settings, store, recording, base, recorded);
    await session.listTools();
    return session;
  }

  private world(store: ResultsStore): Promise<{ recording: string; calls: WorldCall[] }> {
    const id = this.settings.world!;
    let found = worldCache.get(id);
    if (!found) {
      found = worldById(store, id);
      worldCache.set(id, found);
      found.catch(() => worldCache.delete(id));
    }
    return found;
  }

  connection(server: McpServerConfig): Promise<McpConnection> {
    let made = this.connections.get(server.name);
    if (!made) {
      made = connectMcp(server, this.env, this.expand);
      this.connections.set(server.name, made);
      made.catch(() => this.connections.delete(server.name));
    }
    return made;
  }

  /** A server whose call failed at the transport: connected afresh on the next call. */
  forget(server: string): void {
    const made = this.connections.get(server);
    this.connections.delete(server);
    made?.then((c) => c.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.allSettled(all.map(async (c) => (await c).close()));
  }
}

/** One item's view of the tools: what was listed, and how each call is answered. */
export class ToolSession {
  tools: ListedTool[] = [];

  constructor(
    private readonly box: Toolbox,
    private readonly settings: ToolsSettings,
    private readonly store: ResultsStore | undefined,
    private readonly recording: string | undefined,
    private readonly base: { recording: string; calls: WorldCall[] } | null,
    private readonly recorded: Map<string, WorldCall>,
  ) {}

  private baseCall(key: string): WorldCall | undefined {
    return this.base?.calls.find((c) => c.key === key);
  }

  async listTools(): Promise<void> {
    const tools: ListedTool[] = [];
    for (const server of this.settings.mcp) {
      const key = toolsKey(server.name);
      const held = this.baseCall(key) ?? this.recorded.get(key);
      let specs: ToolSpec[];
      if (held) specs = JSON.parse(held.result);
      else if (this.settings.mode === 'replay' && this.settings.onMissing === 'fail')
        throw new AdapterError(
          'world_miss',
          `world ${this.settings.world} holds no tool list of MCP server ${server.name} (it was recorded without it); replay with tools.onMissing: live to ask the server`,
        );
      else {
        specs = (await this.box.connection(server)).tools;
        await this.keep({
          key,
          tool: '(tools/list)',
          arguments: canonicalJson({ server: server.name }),
          result: JSON.stringify(specs),
          isError: false,
          recordedAt: new Date().toISOString(),
        });
      }
      for (const s of specs) tools.push({ ...s, server: server.name });
    }
    for (const tool of this.settings.http) tools.push({ ...httpToolSpec(tool), server: 'http' });
    const seen = new Map<string, string>();
    for (const t of tools) {
      if (seen.has(t.name))
        throw new AdapterError(
          'config',
          `two tools are named ${t.name} (from ${seen.get(t.name)} and ${t.server}); a model calls tools by name, so rename one`,
        );
      seen.set(t.name, t.server);
    }
    this.tools = tools;
  }

  /** Answer one call: from the world when it holds it, else from the service (recorded when the mode records). */
  async call(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolResult & { origin: 'live' | 'world' }> {
    const key = worldKey(name, args);
    const held = this.baseCall(key) ?? this.recorded.get(key);
    if (held) return { text: held.result, isError: held.isError, origin: 'world' };
    if (this.settings.mode === 'replay' && this.settings.onMissing === 'fail')
      throw new AdapterError(
        'world_miss',
        `world ${this.settings.world} holds no result for ${name} ${canonicalJson(args)} (the recorded agent never made this call); replay with tools.onMissing: live to ask the service and record a new world`,
      );
    if (this.settings.mode === 'live' || !this.store || !this.recording) {
      const result = await this.live(name, args, signal);
      return { text: result.text, isError: result.isError, origin: 'live' };
    }
    return this.recordOnce(name, args, key, signal);
  }

  /**
   * A call into the run's recording, asked of the service once however many items make it at the same moment: the
   * copilot's items in this worker share one flight; across workers the store's first-write-wins claim row
   * (snapshot_work, job `world-claims:<recording>`) picks one asker, and the others wait for its result. A claim whose
   * asker released it (a transport fault, an abort) or that is older than CLAIM_LEASE_MS (its worker died) is taken
   * over by the next round.
   */
  private async recordOnce(
    name: string,
    args: Record<string, unknown>,
    key: string,
    signal: AbortSignal,
  ): Promise<ToolResult & { origin: 'live' | 'world' }> {
    const flight = `${this.recording}\u0000${key}`;
    for (;;) {
      let pending = this.box.flights.get(flight);
      const mine = !pending;
      if (!pending) {
        pending = this.claimAndRecord(name, args, key, signal);
        this.box.flights.set(flight, pending);
        void pending.then(
          () => this.box.flights.delete(flight),
          () => this.box.flights.delete(flight),
        );
      }
      try {
        const { recorded, ...result } = await abortable(pending, signal);
        // An item that shared another's flight was answered from the recording, as if it had come a moment later.
        return mine || !recorded ? result : { ...result, origin: 'world' };
      } catch (error) {
        // Another item's flight ended without a result (its attempt was aborted): this one asks in its own.
        if (mine || signal.aborted) throw error;
      }
    }
  }

  private async claimAndRecord(
    name: string,
    args: Record<string, unknown>,
    key: string,
    signal: AbortSignal,
  ): Promise<ToolResult & { origin: 'live' | 'world'; recorded: boolean }> {
    const store = this.store!;
    const job = `world-claims:${this.recording}`;
    for (let round = 1; ; round++) {
      const held = await this.stored(key);
      if (held) return { text: held.result, isError: held.isError, origin: 'world', recorded: true };
      const claim = `${key}#${round}`;
      const token = `${OWNER}/${++claims}`;
      await store.putWork(job, claim, { token, at: Date.now() });
      const won = await store.getWork<{ token: string; at: number }>(job, claim);
      if (won?.token === token) {
        let kept = false;
        try {
          const result = await this.live(name, args, signal);
          // A transport fault is not what the service answered: shown to the model, never recorded into a world.
          if (result.fault) return { text: result.text, isError: result.isError, origin: 'live', recorded: false };
          const first = await this.keep({
            key,
            tool: name,
            arguments: canonicalJson(args),
            result: result.text,
            isError: result.isError,
            recordedAt: new Date().toISOString(),
          });
          kept = true;
          return { text: first.result, isError: first.isError, origin: 'live', recorded: true };
        } finally {
          if (!kept) await store.putWork(job, `${claim}:released`, { at: Date.now() }).catch(() => undefined);
        }
      }
      // Another asker holds this round: its result, its release or the end of its lease, whichever comes first.
      for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
        const now = await this.stored(key);
        if (now) return { text: now.result, isError: now.isError, origin: 'world', recorded: true };
        if (await store.getWork(job, `${claim}:released`)) break;
        if (!won || Date.now() - won.at > CLAIM_LEASE_MS) break;
        await abortable(new Promise((resolve) => setTimeout(resolve, wait)), signal);
      }
    }
  }

  /** The recording's result for this call: known to this item, or written since by another item or worker. */
  private async stored(key: string): Promise<WorldCall | undefined> {
    const known = this.baseCall(key) ?? this.recorded.get(key);
    if (known) return known;
    const [now] = await this.store!.worldCalls(this.recording!, key);
    if (now) this.recorded.set(key, now);
    return now;
  }

  private async live(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolResult & { fault?: boolean }> {
    const tool = this.tools.find((t) => t.name === name);
    if (!tool)
      return {
        text: `error: there is no tool named ${name}; the tools are: ${this.tools.map((t) => t.name).join(', ')}`,
        isError: true,
        fault: true,
      };
    try {
      if (tool.server === 'http')
        return await callHttpTool(
          this.settings.http.find((t) => t.name === name)!,
          args,
          this.box.env,
          signal,
        );
      const server = this.settings.mcp.find((s) => s.name === tool.server)!;
      try {
        return await (await this.box.connection(server)).call(name, args, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        this.box.forget(server.name);
        throw error;
      }
    } catch (error) {
      if (signal.aborted || error instanceof AdapterError) throw error;
      return { text: `error: the tool call failed: ${(error as Error).message}`, isError: true, fault: true };
    }
  }

  /**
   * Into the run's recording; the first replayed-into-live write copies the replayed world there first. Returns the call
   * as the recording holds it (first write wins: another worker's result, when it wrote first).
   */
  private async keep(call: WorldCall): Promise<WorldCall> {
    if (!this.store || !this.recording) return call;
    if (this.base && this.recorded.size === 0) {
      await this.store.putWorldCalls(this.recording, this.base.calls);
      for (const c of this.base.calls) this.recorded.set(c.key, c);
    }
    await this.store.putWorldCalls(this.recording, [call]);
    const [first = call] = await this.store.worldCalls(this.recording, call.key);
    this.recorded.set(call.key, first);
    return first;
  }
}

/** A promise that rejects when the signal aborts (what it waits for goes on: another item may be sharing it). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}
