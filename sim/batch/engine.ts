/**
 * The clock and line loop both simulated batch APIs share: a job spends the first tenth of its window (`batchSeconds`)
 * validating, answers its lines one by one across the next eight tenths, and finalizes in the last tenth. A cancel stops
 * it after the line in flight; `batchExpireAfterLines` stops it after that many lines and expires it when the window
 * ends. What a line's answer is, and how the states are named, is each API's module (openai.ts, anthropic.ts).
 */
import type { HttpAnswer } from '../http';
import type { ChatContext, SimOptions, SimRequestLog } from '../types';

export type Phase = 'validating' | 'in_progress' | 'finalizing' | 'ended';
export type Ending = 'completed' | 'failed' | 'expired' | 'cancelled';

export interface BatchLine {
  customId: string;
  body: unknown;
}

/** One processed line: the HTTP answer the live endpoint gave it (or the simulated failure), or why it never ran. */
export type LineOutcome =
  { customId: string; kind: 'answered'; answer: HttpAnswer } | { customId: string; kind: 'expired' | 'canceled' };

export interface BatchJob {
  id: string;
  lines: BatchLine[];
  phase: Phase;
  ending?: Ending;
  /** Milliseconds since the epoch at which each phase began (and the cancel was asked for). */
  at: {
    created: number;
    expires: number;
    in_progress?: number;
    finalizing?: number;
    ended?: number;
    cancelling?: number;
  };
  /** Processing order; one entry per line once the job ended. */
  outcomes: LineOutcome[];
  /** The batch-level failure found while validating (OpenAI), in the provider's shape. */
  errors?: unknown[];
}

export interface JobRunner {
  /** Validate the lines (the OpenAI file's checks); a non-empty list fails the batch. */
  validate?: (job: BatchJob) => unknown[];
  /** Answer one line through the live endpoint's code, logged as a batch line. */
  answer: (line: BatchLine, job: BatchJob) => Promise<HttpAnswer>;
  /** The provider's server error for a line `batchFailLines` picks. */
  failure: (line: BatchLine, job: BatchJob) => HttpAnswer;
}

/** Timers of one server's batches, cleared when it closes. */
export class BatchClock {
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return; // a closed server's jobs stop where they are
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          if (!this.closed) resolve();
        },
        Math.max(0, ms),
      );
      timer.unref();
      this.timers.add(timer);
    });
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

/** A job created now; its window (the simulator's stand-in for the providers' 24 hours) is `batchSeconds`. */
export function newJob(id: string, lines: BatchLine[], phase: Phase, options: SimOptions): BatchJob {
  const now = Date.now();
  return {
    id,
    lines,
    phase,
    at: { created: now, expires: now + windowMs(options), ...(phase === 'in_progress' ? { in_progress: now } : {}) },
    outcomes: [],
  };
}

function windowMs(options: SimOptions): number {
  return Math.max(0, (options.batchSeconds ?? 3) * 1000);
}

/** Run a job to its end in the background; the job object is what the status endpoints read. */
export async function runJob(job: BatchJob, runner: JobRunner, options: SimOptions, clock: BatchClock): Promise<void> {
  const window = windowMs(options);
  if (job.phase === 'validating') {
    await clock.sleep(window * 0.1);
    const errors = runner.validate?.(job) ?? [];
    if (errors.length > 0) {
      job.lines = []; // a failed batch runs none of its lines
      return end(job, 'failed', errors);
    }
    if (job.at.cancelling) return end(job, 'cancelled');
    job.phase = 'in_progress';
    job.at.in_progress = Date.now();
  }
  // Stuck (SimOptions.batchStuck): in_progress past its window, no line run, until a cancel comes.
  while (options.batchStuck && !job.at.cancelling) await clock.sleep(100);
  const gap = (window * 0.8) / Math.max(1, job.lines.length);
  const expireAfter = options.batchExpireAfterLines;
  for (const [i, line] of job.lines.entries()) {
    if (expireAfter !== undefined && i >= expireAfter) {
      await clock.sleep(job.at.expires - Date.now());
      return end(job, job.at.cancelling ? 'cancelled' : 'expired');
    }
    await clock.sleep(gap);
    if (job.at.cancelling) break;
    const failed = options.batchFailLines && (i + 1) % options.batchFailLines === 0;
    job.outcomes.push({
      customId: line.customId,
      kind: 'answered',
      answer: failed ? runner.failure(line, job) : await runner.answer(line, job),
    });
  }
  if (job.at.cancelling) return end(job, 'cancelled');
  job.phase = 'finalizing';
  job.at.finalizing = Date.now();
  await clock.sleep(window * 0.1);
  end(job, 'completed');
}

/** Ask a running job to stop; false when it had ended already. */
export function cancelJob(job: BatchJob): boolean {
  if (job.phase === 'ended') return false;
  job.at.cancelling ??= Date.now();
  return true;
}

function end(job: BatchJob, ending: Ending, errors?: unknown[]): void {
  const done = new Set(job.outcomes.map((o) => o.customId));
  const kind = ending === 'cancelled' ? 'canceled' : 'expired';
  if (ending !== 'failed')
    for (const line of job.lines) if (!done.has(line.customId)) job.outcomes.push({ customId: line.customId, kind });
  job.phase = 'ended';
  job.ending = ending;
  job.at.ended = Date.now();
  if (errors) job.errors = errors;
}

/** How many lines succeeded (2xx), errored, and were never run, so far. */
export function countOutcomes(job: BatchJob): {
  succeeded: number;
  errored: number;
  expired: number;
  canceled: number;
  processing: number;
} {
  const counts = { succeeded: 0, errored: 0, expired: 0, canceled: 0, processing: 0 };
  for (const o of job.outcomes) {
    if (o.kind === 'answered') counts[o.answer.status < 300 ? 'succeeded' : 'errored']++;
    else counts[o.kind]++;
  }
  counts.processing = job.phase === 'ended' ? 0 : job.lines.length - job.outcomes.length;
  return counts;
}

/** A batch line in the request log, under the batch endpoint's path (never the live one), with its batch and custom_id. */
export function logLine(
  path: string,
  line: BatchLine,
  job: BatchJob,
  ctx: { log: SimRequestLog[]; options: SimOptions },
): { entry: SimRequestLog; requestIndex: number } {
  const body = line.body as any;
  const entry: SimRequestLog = {
    at: Date.now(),
    path,
    model: typeof body?.model === 'string' ? body.model : '',
    body,
    headers: {},
    batch: { id: job.id, customId: line.customId },
  };
  const requestIndex = ctx.log.push(entry) - 1;
  ctx.options.onRequest?.(entry);
  return { entry, requestIndex };
}

/** A results line as written: every `batchMalformedLines`-th one cut off in the middle (not JSON), as a damaged file has it. */
export function writtenLine(json: string, index: number, options: SimOptions): string {
  const every = options.batchMalformedLines;
  return every && (index + 1) % every === 0 ? json.slice(0, Math.floor(json.length / 2)) : json;
}

/** The create reply's delay (SimOptions.batchCreateReplyDelayMs): the batch exists at the provider, its id not yet told. */
export function createReplyDelay(options: SimOptions, clock: BatchClock): Promise<void> {
  return options.batchCreateReplyDelayMs ? clock.sleep(options.batchCreateReplyDelayMs) : Promise.resolve();
}

/**
 * What a batch endpoint needs of its server: the options (timing, judges, faults), the request log, the once-faults'
 * memory, the batches it reads (`B`) beside the clock, and the live chat answer a line is answered with (sim/server.ts
 * chatAnswer, handed in so the batch endpoints never import the server or their router).
 */
export interface BatchServerContext<B> {
  options: SimOptions;
  log: SimRequestLog[];
  seenOnce: Set<string>;
  batches: B & { clock: BatchClock };
  chatAnswer: (body: any, ctx: ChatContext) => Promise<HttpAnswer>;
}
