/**
 * `judgeflow view`: a local, read-only web app over the results store. Runs (with live progress from each running
 * run's workflow `progress` query), each run's report.html (the same renderer the run writes) and its artefacts, a compare of any two
 * runs, snapshots and their lineage, schedules and their next fire times, links to the Temporal Web UI.
 *
 * Read-only: GET and HEAD only, nothing is written to the store or to disk. Pages carry a Content-Security-Policy
 * (scripts by nonce only, fetches to this server only), and every untrusted text is escaped or set as DOM text.
 */
import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { buildRunReport } from '../../services/runReport';
import { buildCompareHtml } from '../../core/compare/html';
import { dataTable, esc, htmlPage, section } from '../../core/report/html/page';
import type { Artefact, ResultsStore } from '../../core/model/store';
import { InputError } from '../../core/model/inputError';
import { renderMarkdown } from '../../core/study/safeMarkdown';
import { progressQuery } from '../../contract/control';
import type { Progress } from '../../contract/run';
import { describeSchedule, MARK } from '../commands/schedule';
import { listRunRows, type RunRow } from '../commands/runs';
import { compareStoredRuns } from '../compareRuns';
import { trendStoredRuns } from '../../services/storedComparison';
import { trendSections } from '../../core/report/html/trend';
import { scheduleRunIds } from '../commands/trend';
import { hostAllowed, sameSecret } from '../hostGuard';
import { answeredWithin } from '../connection';

export interface ViewOptions {
  store: ResultsStore;
  env?: NodeJS.ProcessEnv;
  port?: number;
  host?: string;
  /** A Temporal client for progress and schedules; the view still lists runs without one. */
  temporal?: () => Promise<Client | undefined>;
  /** Base of the Temporal Web UI (default TEMPORAL_UI_URL or http://127.0.0.1:8233). */
  webUi?: string;
  namespace?: string;
  /** How often pages poll for progress (ms). */
  pollMs?: number;
  /**
   * A shared secret every request must carry (required on a host other than loopback): `?token=…` once (it is then kept
   * in a same-site cookie), or `Authorization: Bearer …`.
   */
  token?: string;
}

export interface ViewServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

type Row = RunRow & { progress: Progress | null; temporalUrl: string };

const NAV = (active: string) =>
  `<nav aria-label="judgeflow view" class="toc"><ul>${[
    ['/', 'Runs'],
    ['/snapshots', 'Snapshots'],
    ['/schedules', 'Schedules'],
    ['/studies', 'Studies'],
  ]
    .map(([href, label]) => `<li><a href="${href}"${label === active ? ' aria-current="page"' : ''}>${label}</a></li>`)
    .join('')}</ul></nav>`;

export async function startViewServer(options: ViewOptions): Promise<ViewServer> {
  const env = options.env ?? process.env;
  const { store } = options;
  const namespace = options.namespace ?? env.TEMPORAL_NAMESPACE ?? 'default';
  const webUi = (options.webUi ?? env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233').replace(/\/+$/, '');
  const pollMs = options.pollMs ?? 1500;
  const temporalUrl = (runId: string) =>
    `${webUi}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(runId)}`;

  /** The run workflow's own answer, bounded in time: a run with no worker just shows no progress. */
  async function progressOf(runId: string): Promise<Progress | null> {
    const client = await options.temporal?.().catch(() => undefined);
    if (!client) return null;
    // Bounded by a deadline (see answeredWithin): no retry of it is left pending when the view closes its connection.
    return (await answeredWithin(client, 2000, () => client.workflow.getHandle(runId).query(progressQuery))) ?? null;
  }

  async function rows(): Promise<Row[]> {
    const list = await listRunRows(store);
    return Promise.all(
      list.map(async (r) => ({
        ...r,
        progress: r.status === 'running' ? await progressOf(r.runId) : null,
        temporalUrl: temporalUrl(r.runId),
      })),
    );
  }

  const page = (title: string, active: string, body: string) =>
    htmlPage({
      title: `${title} — judgeflow view`,
      header: `<h1>${esc(title)}</h1>${NAV(active)}`,
      body,
      connect: "'self'",
    });

  function runsPage(): string {
    const table = `<div id="runs-live" data-interval="${pollMs}"><form id="compare-form" class="controls"><button type="submit">Compare the two picked runs</button><span id="compare-msg" role="status" class="muted"></span></form><div class="table-wrap"><table><caption>Runs in ${esc(store.location)}, newest first (updates live)</caption><thead><tr>${[
      'pick',
      'run',
      'protocol',
      'snapshot',
      'rubric',
      'judge',
      'status',
      'started',
      'scores',
      'Temporal',
    ]
      .map((h) => `<th scope="col">${h}</th>`)
      .join('')}</tr></thead><tbody></tbody></table></div></div>`;
    return page(
      'Runs',
      'Runs',
      section(
        'runs',
        'Runs',
        table,
        'Pick two runs to compare them (the older one is A). Running runs show their progress as the workflow reports it.',
      ),
    );
  }

  async function runPage(runId: string): Promise<string | StreamedPage> {
    const run = await store.getRun(runId);
    if (!run) throw new NotFound(`no run ${runId} in ${store.location}`);
    const schedule = await scheduleOf(runId);
    const madeBy = schedule
      ? ` · made by schedule <a href="/schedules/${encodeURIComponent(schedule)}">${esc(schedule)}</a>`
      : '';
    const back = `<p><a href="/">← all runs</a>${madeBy} · <a href="${esc(temporalUrl(runId))}" rel="noopener noreferrer" target="_blank">this run in the Temporal Web UI</a></p>`;
    if (run.status === 'completed') {
      // A large report (every answer of a big run: tens of megabytes) is streamed from the report.html the run wrote, so
      // several readers do not each hold it in memory; smaller ones, or one rendered on another machine, are built from
      // the store as it is now.
      const written = run.reportPath ? path.join(path.dirname(run.reportPath), 'report.html') : null;
      if (written && fs.existsSync(written) && fs.statSync(written).size > STREAM_REPORTS_ABOVE_BYTES)
        return { file: written, inject: ['<header class="page-header">', `<header class="page-header">${back}`] };
      const { html } = await buildRunReport({ store, env }, runId);
      const pieces: string[] = [];
      for await (const piece of html) pieces.push(piece);
      return pieces.join('').replace('<header class="page-header">', `<header class="page-header">${back}`);
    }
    const progress = run.status === 'running' ? await progressOf(runId) : null;
    const body =
      run.status === 'running'
        ? `<div id="run-live" data-run="${esc(runId)}"><p>Running: <span class="progress-text">${esc(progress ? `${progress.stage} ${progress.done}/${progress.total}` : 'waiting for a worker')}</span></p><progress max="${progress?.total || 1}" value="${progress?.done ?? 0}" aria-label="progress"></progress><p class="muted">The report appears here when the run finishes.</p></div>`
        : `<p class="status-failed">This run failed: ${esc((run.summary as { error?: string } | null)?.error ?? 'no reason recorded')}</p>`;
    return page(`Run ${runId}`, 'Runs', back + body);
  }

  /** The schedule a run came from: its id starts with the schedule's name (workflows/refreshSnapshot.ts scheduledRunId), which the store confirms. */
  async function scheduleOf(runId: string): Promise<string | null> {
    const m = /^(.+)-\d{8}-\d{4}-[0-9a-z]{6}$/.exec(runId);
    if (!m) return null;
    return (await store.scheduleSnapshots(m[1])).some((r) => r.runId === runId) ? m[1] : null;
  }

  async function schedulePage(name: string): Promise<string> {
    const t = await trendStoredRuns(
      store,
      await scheduleRunIds(store, name).catch((error: unknown) => {
        if (error instanceof InputError) throw new NotFound(error.message);
        throw error;
      }),
    );
    const body = trendSections(t, {
      run: (id) => `/runs/${encodeURIComponent(id)}`,
      compare: (a, b) => `/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`,
    });
    return page(`Schedule ${name}`, 'Schedules', `<p><a href="/schedules">← all schedules</a></p>${body}`);
  }

  async function snapshotsPage(): Promise<string> {
    const snapshots = await store.listSnapshots();
    const byId = new Map(snapshots.map((s) => [s.snapshotId, s]));
    const lineage = (id: string) => {
      const chain: string[] = [];
      for (let s = byId.get(id); s && chain.length < 50; s = s.parentId ? byId.get(s.parentId) : undefined)
        chain.push(s.snapshotId);
      const last = byId.get(chain[chain.length - 1]);
      if (last?.parentId && !byId.has(last.parentId)) chain.push(`${last.parentId} (not in this store)`);
      return chain.join(' ← ');
    };
    const table = dataTable(
      'Snapshots, newest first',
      ['snapshot', 'created', 'queries', 'generator', 'parent', 'lineage (newest ← oldest)'],
      snapshots.map((s) => [
        s.snapshotId,
        s.createdAt,
        s.queryCount,
        String(s.meta.generator ?? '–'),
        s.parentId,
        lineage(s.snapshotId),
      ]),
    );
    return page('Snapshots', 'Snapshots', section('snapshots', 'Snapshots and lineage', table));
  }

  async function schedulesPage(): Promise<string> {
    const client = await options.temporal?.().catch(() => undefined);
    if (!client)
      return page('Schedules', 'Schedules', '<p>Temporal is not reachable, so schedules cannot be listed.</p>');
    const details = [];
    for await (const s of client.schedule.list())
      if (s.memo?.[MARK]) details.push(await describeSchedule(client, s.scheduleId, store));
    const table = dataTable(
      'judgeflow schedules',
      ['schedule', 'spec', 'paused', 'next fire times', 'actions taken', 'running', 'latest snapshot', 'latest run'],
      details.map((d) => [
        d.name,
        d.spec,
        d.paused ? 'yes' : 'no',
        d.next.map((t: Date) => t.toISOString()).join(', ') || '–',
        d.actionsTaken,
        d.running.join(', ') || '–',
        d.snapshots[0]?.snapshotId ?? '–',
        d.runs[0] ? `${d.runs[0].runId} (${d.runs[0].status})` : '–',
      ]),
    );
    // Each schedule's name links to its page (dataTable escapes its cells, so the links go in afterwards).
    const linked = details.reduce(
      (html, d) =>
        html.replace(
          `<th scope="row">${esc(d.name)}</th>`,
          `<th scope="row"><a href="/schedules/${encodeURIComponent(d.name)}">${esc(d.name)}</a></th>`,
        ),
      table,
    );
    return page(
      'Schedules',
      'Schedules',
      section('schedules', 'Schedules', details.length ? linked : '<p>No judgeflow schedules.</p>'),
    );
  }

  /** The request's token is the view's (or the view has none); `?token=` is swapped for a cookie and a clean address. */
  function authorised(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const token = options.token;
    if (!token) return true;
    const given = url.searchParams.get('token');
    if (given !== null && sameSecret(given, token)) {
      url.searchParams.delete('token');
      res.writeHead(303, {
        location: url.pathname + url.search,
        'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      res.end();
      return false;
    }
    const bearer = /^bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const cookie = (req.headers.cookie ?? '')
      .split(/;\s*/)
      .find((c) => c.startsWith(`${TOKEN_COOKIE}=`))
      ?.slice(TOKEN_COOKIE.length + 1);
    const presented = bearer ?? (cookie === undefined ? undefined : decodeURIComponent(cookie));
    if (presented !== undefined && sameSecret(presented, token)) return true;
    send(
      res,
      401,
      'text/plain',
      'this judgeflow view needs its token: open the address it printed with ?token=TOKEN once, or send "Authorization: Bearer TOKEN"',
    );
    return false;
  }

  /** Human preference studies, and each one's report (the figures study.md has, computed from the store now). */
  async function studiesPage(): Promise<string> {
    const studies = await store.studies.listStudies();
    const table = dataTable(
      'Studies, newest first',
      ['study', 'run', 'status', 'created', 'deadline'],
      studies.map((s) => [s.name, s.runId, s.status, s.createdAt, s.spec.deadline ?? '–']),
    );
    const links = studies.length
      ? `<ul>${studies.map((s) => `<li><a href="/studies/${encodeURIComponent(s.name)}">${esc(s.name)}: report</a></li>`).join('')}</ul>`
      : '<p>No studies in this store (see judgeflow study create).</p>';
    return page('Studies', 'Studies', section('studies', 'Human preference studies', table + links));
  }

  async function studyPage(name: string): Promise<string> {
    const study = await store.studies.getStudy(name);
    if (!study) throw new NotFound(`no study ${name} in ${store.location}`);
    const { studyFigures, studyMarkdown } = require('../study/report') as typeof import('../study/report');
    const markdown = studyMarkdown(await studyFigures(store, study));
    // study.md writes `<` and `>` of outside text as entities (core/report/markdown.ts mdText); this renderer escapes every
    // character itself, so they are turned back first, or they would show as "&lt;".
    const html = renderMarkdown(markdown.replace(/&lt;/g, '<').replace(/&gt;/g, '>'));
    return page(
      `Study ${name}`,
      'Studies',
      `<p><a href="/studies">← all studies</a></p>` +
        section(
          'study',
          `Study ${name}`,
          `<div class="study-report">${html}</div>`,
          'The report study.md has (judgeflow study report writes it with study.json and study.xlsx).',
        ),
    );
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req, boundHost, boundPort()))
      return send(
        res,
        421,
        'text/plain',
        `judgeflow view answers only to the address it was started on (Host ${JSON.stringify(req.headers.host ?? '')} refused)`,
      );
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, 'text/plain', 'judgeflow view is read-only', { allow: 'GET, HEAD' });
    const url = new URL(req.url ?? '/', 'http://view');
    if (!authorised(req, res, url)) return;
    const p = url.pathname;
    const runMatch = /^\/runs\/([^/]+)$/.exec(p);
    const apiRun = /^\/api\/runs\/([^/]+)$/.exec(p);
    if (p === '/' || p === '/runs') return sendHtml(res, runsPage());
    if (p === '/api/runs') return send(res, 200, 'application/json', JSON.stringify(await rows()));
    if (apiRun) {
      const row = (await rows()).find((r) => r.runId === decodeURIComponent(apiRun[1]));
      return row
        ? send(res, 200, 'application/json', JSON.stringify(row))
        : send(res, 404, 'application/json', '{"error":"no such run"}');
    }
    if (runMatch) {
      const pageOrFile = await runPage(decodeURIComponent(runMatch[1]));
      return typeof pageOrFile === 'string' ? sendHtml(res, pageOrFile) : streamHtml(res, pageOrFile);
    }
    // A run page's links to its artefacts are relative (`artefacts/<id>-<name>`, as next to a rendered report.html).
    const artefactMatch = /^\/runs\/artefacts\/([0-9a-f]{16})-[^/]*$/.exec(p);
    if (artefactMatch) {
      const artefact = await store.getArtefact(artefactMatch[1]);
      if (!artefact) throw new NotFound(`no artefact ${artefactMatch[1]} in ${store.location}`);
      return sendArtefact(res, artefact);
    }
    if (p === '/compare') {
      const a = url.searchParams.get('a');
      const b = url.searchParams.get('b');
      if (!a || !b) throw new NotFound('compare needs ?a=RUN_A&b=RUN_B');
      return sendHtml(res, buildCompareHtml((await compareStoredRuns(store, a, b, { top: 10 })).comparison));
    }
    if (p === '/snapshots') return sendHtml(res, await snapshotsPage());
    if (p === '/schedules') return sendHtml(res, await schedulesPage());
    const scheduleMatch = /^\/schedules\/([^/]+)$/.exec(p);
    if (scheduleMatch) return sendHtml(res, await schedulePage(decodeURIComponent(scheduleMatch[1])));
    if (p === '/studies') return sendHtml(res, await studiesPage());
    const studyMatch = /^\/studies\/([^/]+)$/.exec(p);
    if (studyMatch) return sendHtml(res, await studyPage(decodeURIComponent(studyMatch[1])));
    throw new NotFound(`nothing at ${p}`);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      // A malformed percent-encoding in the path (decodeURIComponent's URIError) is the request's fault, not the server's.
      const malformed = error instanceof URIError;
      const status = error instanceof NotFound ? 404 : error instanceof InputError || malformed ? 400 : 500;
      const message = malformed
        ? `the address ${JSON.stringify(req.url ?? '')} has a malformed percent-encoding (a % must be followed by two hex digits of UTF-8)`
        : (error as Error).message;
      if (!res.headersSent)
        sendHtml(
          res,
          page(
            status === 500 ? 'Error' : status === 400 ? 'Bad request' : 'Not found',
            '',
            `<p>${esc(message)}</p><p><a href="/">← all runs</a></p>`,
          ),
          status,
        );
      else res.end();
    });
  });
  const boundHost = options.host ?? '127.0.0.1';
  const boundPort = () => (server.address() as AddressInfo).port;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, boundHost, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = boundHost;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

class NotFound extends Error {}

const TOKEN_COOKIE = 'judgeflow_view_token';
/** Reports larger than this are streamed from disk rather than rebuilt in memory per request. */
export const STREAM_REPORTS_ABOVE_BYTES = 8 * 1024 * 1024;

/** A page served from a file as it is read, with one replacement near its top (the view's navigation). */
interface StreamedPage {
  file: string;
  inject: [string, string];
}

async function streamHtml(res: ServerResponse, page: StreamedPage): Promise<void> {
  const handle = await fs.promises.open(page.file, 'r');
  try {
    const head = Buffer.alloc(256 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    // Replaced as bytes (the marker is ASCII): nothing is decoded, so no character is split at the head's end.
    const at = head.subarray(0, bytesRead).indexOf(page.inject[0]);
    const first =
      at < 0
        ? head.subarray(0, bytesRead)
        : Buffer.concat([
            head.subarray(0, at),
            Buffer.from(page.inject[1]),
            head.subarray(at + Buffer.byteLength(page.inject[0]), bytesRead),
          ]);
    const cut = bytesRead;
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
    if (res.req.method === 'HEAD') return void res.end();
    res.write(first);
    await pipeline(handle.createReadStream({ start: cut, autoClose: false }), res);
  } finally {
    await handle.close();
  }
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Images are shown; anything else is offered as a download. Nothing served here may run script. */
const SHOWN = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

function sendArtefact(res: ServerResponse, artefact: Artefact): void {
  const shown = SHOWN.has(artefact.contentType);
  res.writeHead(200, {
    'content-type': shown ? artefact.contentType : 'application/octet-stream',
    ...(shown ? {} : { 'content-disposition': 'attachment' }),
    'content-length': String(artefact.bytes.length),
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(res.req.method === 'HEAD' ? undefined : artefact.bytes);
}

/** The page's own CSP meta tag carries the nonce; the header adds framing and sniffing protection. */
function sendHtml(res: ServerResponse, html: string, status = 200): void {
  send(res, status, 'text/html', html, { 'x-frame-options': 'DENY' });
}
