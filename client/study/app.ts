import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { renderMarkdown } from '../../core/study/safeMarkdown';
import type { Annotator, Answer, StoredAssignment, StudyRecord } from '../../core/study/types';
import type { ResultsStore } from '../../core/model/store';
import { tokenHash } from './create';
import { hostAllowed } from '../hostGuard';

/**
 * The annotation app: one static page and a small JSON API. An annotator is whoever holds a token (sent as
 * `Authorization: Bearer TOKEN`); every response is blind — opaque assignment ids, texts and positions only, never a
 * copilot, model, adapter, latency or score. Answers are acknowledged once they are in the results store; `onSubmitted`
 * then hands them to the study workflow (see SubmissionForwarder).
 */

const PAGE_DIR = path.join(__dirname, 'page');
const STATIC: Record<string, { file: string; type: string }> = {
  '/annotate': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

const SECURITY_HEADERS = {
  // No inline script, no remote anything: even a rendering bug could not run script or fetch a remote image.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function answerSchema(study: StudyRecord) {
  const o = study.spec.options;
  const ids = <T extends { id: string }>(xs: T[]) => xs.map((x) => x.id) as [string, ...string[]];
  return z
    .object({
      choice: z.enum(['A', 'B', 'tie']),
      reason: z.enum(ids(o.reasons)).nullable().optional(),
      seriousError: z.boolean().optional().default(false),
      errorType: z.enum(ids(o.errorTypes)).nullable().optional(),
      comment: z.string().max(4000).nullable().optional(),
      /** A client-chosen id makes a retried POST idempotent. */
      submissionId: z
        .string()
        .regex(/^[A-Za-z0-9_-]{8,100}$/)
        .optional(),
    })
    .strict()
    .superRefine((a, ctx) => {
      if (a.choice !== 'tie' && !a.reason)
        ctx.addIssue({
          code: 'custom',
          path: ['reason'],
          message: `required when a response wins (one of ${ids(o.reasons).join(', ')})`,
        });
      if (a.choice === 'tie' && a.reason)
        ctx.addIssue({
          code: 'custom',
          path: ['reason'],
          message: 'a tie has no winning response, so no main reason for one; leave reason out (or null)',
        });
      if (a.seriousError && a.choice === 'tie')
        ctx.addIssue({
          code: 'custom',
          path: ['seriousError'],
          message: 'a serious error is flagged on the rejected response; a tie rejects neither',
        });
      if (a.seriousError && !a.errorType)
        ctx.addIssue({
          code: 'custom',
          path: ['errorType'],
          message: `required when seriousError is true (one of ${ids(o.errorTypes).join(', ')})`,
        });
      if (!a.seriousError && a.errorType)
        ctx.addIssue({ code: 'custom', path: ['errorType'], message: 'only with seriousError: true' });
    });
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    throw new HttpError(415, 'send the answer as JSON with Content-Type: application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new HttpError(413, 'request body larger than 64 KiB');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    throw new HttpError(400, `body is not valid JSON: ${(e as Error).message}`);
  }
}

export interface StudyAppOptions {
  store: ResultsStore;
  onSubmitted?: () => void;
  log?: (line: string) => void;
  /** The address it is bound to: its pages answer only to that Host (DNS rebinding); the API needs each annotator's token anyway. */
  host?: string;
}

export function createStudyApp({ store, onSubmitted, host }: StudyAppOptions): http.Server {
  const studies = store.studies;

  async function authenticate(req: http.IncomingMessage): Promise<{ annotator: Annotator; study: StudyRecord }> {
    // Authentication schemes are case-insensitive (RFC 9110 §11.1): "bearer" is "Bearer".
    const m = /^Bearer\s+([A-Za-z0-9_-]{16,200})$/i.exec(req.headers.authorization ?? '');
    if (!m)
      throw new HttpError(
        401,
        'missing or malformed token: send "Authorization: Bearer TOKEN" with the token from your personal link',
      );
    const annotator = await studies.annotatorByTokenHash(tokenHash(m[1]));
    const study = annotator && (await studies.getStudy(annotator.study));
    if (!annotator || !study) throw new HttpError(401, 'unknown token: use the personal link you were given');
    return { annotator, study };
  }

  async function view(study: StudyRecord, queue: Array<StoredAssignment & { answer: Answer | null }>, index: number) {
    const a = queue[index];
    const item = (await studies.studyItems(study.name)).find((it) => it.itemId === a.itemId)!;
    const run = (await store.getRun(study.runId))!;
    const query = await store.snapshotQuery(run.snapshotId, item.queryId);
    const text = async (copilot: string) => (await store.getResponse(study.runId, item.queryId, copilot))?.text ?? '';
    return {
      id: a.assignmentId,
      position: index + 1,
      total: queue.length,
      query: {
        text: query.text,
        history: (query.history ?? []).map((t) => ({ role: t.role, html: renderMarkdown(t.content) })),
      },
      responseA: { html: renderMarkdown(await text(a.left)) },
      responseB: { html: renderMarkdown(await text(a.right)) },
      answer: a.answer,
    };
  }

  const progress = (queue: Array<{ answer: Answer | null }>) => ({
    done: queue.filter((a) => a.answer).length,
    total: queue.length,
  });

  async function api(req: http.IncomingMessage, url: URL): Promise<{ status: number; body: unknown }> {
    const { annotator, study } = await authenticate(req);
    const queue = await studies.annotatorQueue(annotator.annotatorId);
    const route = url.pathname.replace(/\/+$/, '');
    if (req.method === 'GET' && route === '/api/me')
      return {
        status: 200,
        body: {
          study: study.name,
          open: study.status === 'open',
          progress: progress(queue),
          options: study.spec.options,
          assignments: queue.map((a, i) => ({ id: a.assignmentId, position: i + 1, done: Boolean(a.answer) })),
        },
      };
    if (req.method === 'GET' && route === '/api/progress') return { status: 200, body: progress(queue) };
    if (req.method === 'GET' && route === '/api/next') {
      const index = queue.findIndex((a) => !a.answer);
      return {
        status: 200,
        body: { progress: progress(queue), assignment: index < 0 ? null : await view(study, queue, index) },
      };
    }
    const m = /^\/api\/assignments\/([A-Za-z0-9_-]{1,100})(\/answer)?$/.exec(route);
    if (!m)
      throw new HttpError(
        404,
        `no API route ${req.method} ${url.pathname} (see the README: GET /api/me, /api/next, /api/progress, /api/assignments/ID; POST /api/assignments/ID/answer)`,
      );
    const index = queue.findIndex((a) => a.assignmentId === m[1]);
    // Someone else's assignment looks exactly like one that does not exist.
    if (index < 0) throw new HttpError(404, `assignment ${m[1]} is not one of yours`);
    if (req.method === 'GET' && !m[2]) return { status: 200, body: await view(study, queue, index) };
    if ((req.method === 'POST' || req.method === 'PUT') && m[2]) {
      if (study.status !== 'open')
        throw new HttpError(409, `study ${study.name} is closed; answers are no longer accepted`);
      const parsed = answerSchema(study).safeParse(await readJson(req));
      if (!parsed.success)
        throw new HttpError(
          400,
          parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        );
      const { submissionId, ...a } = parsed.data;
      const answer: Answer = {
        choice: a.choice,
        reason: a.reason ?? null,
        seriousError: a.seriousError,
        errorType: a.errorType ?? null,
        comment: a.comment?.trim() ? a.comment : null,
      };
      const stored = await studies.putSubmission({
        submissionId: submissionId ?? `sub-${crypto.randomBytes(12).toString('base64url')}`,
        study: study.name,
        assignmentId: m[1],
        annotatorId: annotator.annotatorId,
        answer,
        receivedAt: new Date().toISOString(),
      });
      if (!stored) throw new HttpError(409, `study ${study.name} is closed; answers are no longer accepted`);
      if (stored.assignmentId !== m[1] || stored.annotatorId !== annotator.annotatorId)
        throw new HttpError(409, 'submissionId already used for another answer; omit it or send a fresh one');
      onSubmitted?.();
      return {
        status: 200,
        body: {
          ok: true,
          submissionId: stored.submissionId,
          progress: progress(await studies.annotatorQueue(annotator.annotatorId)),
        },
      };
    }
    throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
      res.end(body);
    };
    if (
      !url.pathname.startsWith('/api/') &&
      host !== undefined &&
      !hostAllowed(req, host, (server.address() as AddressInfo).port)
    )
      return send(
        421,
        'text/plain; charset=utf-8',
        `this annotation app answers only to the address it was started on (Host ${JSON.stringify(req.headers.host ?? '')} refused)`,
      );
    if (req.method === 'GET' && (url.pathname === '/' || STATIC[url.pathname])) {
      const page = STATIC[url.pathname === '/' ? '/annotate' : url.pathname];
      return send(200, page.type, fs.readFileSync(path.join(PAGE_DIR, page.file)));
    }
    if (url.pathname === '/favicon.ico') return send(204, 'text/plain', '');
    if (!url.pathname.startsWith('/api/')) return send(404, 'text/plain; charset=utf-8', 'not found');
    api(req, url).then(
      ({ status, body }) => send(status, 'application/json', JSON.stringify(body)),
      (error) => {
        const status = error instanceof HttpError ? error.status : 500;
        send(
          status,
          'application/json',
          JSON.stringify({ error: status === 500 ? 'internal error' : (error as Error).message }),
        );
        if (status === 500) console.error(`study app: ${req.method} ${url.pathname}: ${(error as Error).stack}`);
      },
    );
  });
  return server;
}

export async function listen(server: http.Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
}
