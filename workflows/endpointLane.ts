import { condition, isCancellation, patched } from '@temporalio/workflow';
import type { ItemGroupResult } from '../activities/itemGroup';
import { batchSize, CallTimes } from './limits/itemGroupSize';
import type { Limiter, Ticket } from './limits/limiter';
import type { CallOutcome, ItemFailure, SendSlot, StageCounts } from '../contract/run';

/** Where a lane's items come from: how many could start now, and whether more will come. */
export interface WorkSource<K> {
  /** Items that could start now. */
  available(): number;
  /** Take the next `n` items (n ≤ available()). */
  take(n: number): K[];
  /** No item will be added any more. */
  closed(): boolean;
}

/** What an item's result counts as: finished, failed (missing data), or nothing (it had nothing to do). */
export type ItemOutcome = 'done' | 'failed' | 'none';

/** How one endpoint's items are asked (one activity per item, or several in one) and what their results mean. */
export interface LaneCalls<K, R extends { outcome: CallOutcome }> {
  /** One item in its own activity; `attempt` counts this lane's tries of it (each earlier one was throttled). */
  one(key: K, attempt: number, slot: { send?: SendSlot }): Promise<R>;
  /** Several items in one activity, in a row (activities/itemGroup.ts). */
  many(keys: K[]): Promise<ItemGroupResult<Omit<R, 'outcome'>>>;
  /** The endpoint asked for fewer calls: the item is asked again, within the (smaller) window. */
  throttled(result: Omit<R, 'outcome'>): boolean;
  outcome(result: Omit<R, 'outcome'>): ItemOutcome;
  /** Every attempt of an item failed: store it as missing data, with the reason. */
  recordFailure(key: K, error: unknown): Promise<void>;
  /** Why a finished result is a failure, when it says (a copilot's stored failure). */
  failureOf?(result: Omit<R, 'outcome'>): ItemFailure | undefined;
  /** After each item is counted (progress, the judge planner, the breaker), with why it failed when it did. */
  counted?(key: K, outcome: ItemOutcome, failure?: ItemFailure): void;
}

/** How far ahead a paced start may be taken (see Limiter.acquire). */
const SEND_AHEAD_MS = 1_000;

/**
 * One endpoint (a copilot, a judge): its limiter, its items asked one per activity with their attempts or several per
 * activity, and its counts. `drain` starts an item the moment the limiter has a place for it, whatever else is in flight.
 */
export class EndpointLane<K, R extends { outcome: CallOutcome }> {
  private readonly callTimes = new CallTimes();
  private readonly running = new Set<Promise<void>>();
  /** Starts in flight: when each began (workflow time) and how many items it carries, for filledBatchSize. */
  private readonly inFlight = new Set<{ at: number; items: number }>();
  /** Whether this endpoint's latest counted item failed: until one succeeds its items go one per activity. */
  private failing = false;

  constructor(
    readonly endpoint: string,
    private readonly limiter: Limiter,
    private readonly calls: LaneCalls<K, R>,
    readonly counts: StageCounts,
    /** True while the run is paused: no new call starts (one in flight finishes). */
    private readonly held: () => boolean = () => false,
    /**
     * The most items one activity may carry now. The workflow hears of a batch's items only when it ends, so what
     * watches them (a budget's look at the spend) sees them that late: a budgeted run keeps batches at SHARE_BATCH.
     */
    private readonly maxBatch: () => number = () => Infinity,
    /**
     * Batches sized to end with the window's other places (filledBatchSize): a judge's lane, whose items nothing waits
     * on. A copilot's lane keeps the share rule's smaller batches: the workflow hears a batch's answers only when it
     * ends, and the judge plans the answers it has heard of, so larger batches would start judging later.
     */
    private readonly fillBatches = false,
  ) {}

  /** Start the source's items until it is closed and empty, or `stop()`; then wait for those in flight. */
  async drain(source: WorkSource<K>, stop: () => boolean): Promise<void> {
    for (;;) {
      await condition(() => stop() || (!this.held() && (source.available() > 0 || source.closed())));
      if (source.available() === 0) {
        if (source.closed() || stop()) break;
        continue;
      }
      const ticket = await this.limiter.acquire(() => stop() || this.held(), SEND_AHEAD_MS);
      if (!ticket) {
        if (stop()) break;
        continue; // paused while waiting for a place
      }
      const keys = source.take(this.sizeOf(ticket, source.available()));
      this.track(keys.length > 1 ? this.batch(keys, ticket) : this.single(keys[0], ticket));
    }
    await Promise.all(this.running);
  }

  /**
   * One item in its own activity, attempt after attempt: a throttled call is asked again within the (now smaller)
   * window, even while stopping (it has started). When every attempt failed the failure is recorded; a cancelled run's
   * cancellation is thrown (a cancelled run records nothing more).
   */
  private async single(key: K, ticket: Ticket | null): Promise<void> {
    let held: Ticket | null = ticket ?? (await this.limiter.acquire(() => false, SEND_AHEAD_MS));
    try {
      for (let attempt = 1; ; attempt++) {
        const began = Date.now();
        const result = await this.started(1, () => this.calls.one(key, attempt, sendSlot(this.endpoint, held!)));
        this.limiter.release(held!, result.outcome);
        held = null;
        if (!this.calls.throttled(result)) {
          this.callTimes.note(this.endpoint, Date.now() - began, 1);
          return this.count(key, this.calls.outcome(result), this.calls.failureOf?.(result));
        }
        // Asked again is a new call: it waits while the run is paused.
        if (this.held()) await condition(() => !this.held());
        held = await this.limiter.acquire(() => false, SEND_AHEAD_MS);
      }
    } catch (error) {
      if (held) this.limiter.release(held, {});
      if (isCancellation(error)) throw error;
      // Even an endpoint that breaks every attempt must not lose the rest of the run.
      await this.calls.recordFailure(key, error);
      this.count(key, 'failed', failureOfError(error));
    }
  }

  /**
   * One start carrying several items (one activity): what it finished is counted, its ticket goes back with what the
   * endpoint said, and each item it did not finish (a throttle, an error, a batch that failed for good) is asked again
   * on its own, with that item's own attempts.
   */
  private async batch(keys: K[], ticket: Ticket): Promise<void> {
    const began = Date.now();
    let finished = 0;
    let released = false;
    try {
      const result = await this.started(keys.length, () => this.calls.many(keys));
      releaseBatch(this.limiter, ticket, result);
      released = true;
      finished = result.results.length;
      result.results.forEach((r, i) => this.count(keys[i], this.calls.outcome(r), this.calls.failureOf?.(r)));
      if (!result.stoppedBy) this.callTimes.note(this.endpoint, Date.now() - began, keys.length);
    } catch (error) {
      if (!released) this.limiter.release(ticket, {});
      if (isCancellation(error)) throw error;
    }
    // Items the batch did not start wait while the run is paused (it stops at a pause, activities/itemGroup.ts).
    for (const key of keys.slice(finished)) {
      if (this.held()) await condition(() => !this.held());
      await this.single(key, null);
    }
  }

  /** An item of this endpoint finished by other means (a Batch API round): counted as if this lane had asked it. */
  finishedElsewhere(key: K, result: Omit<R, 'outcome'>): void {
    this.count(key, this.calls.outcome(result), this.calls.failureOf?.(result));
  }

  private count(key: K, outcome: ItemOutcome, failure?: ItemFailure): void {
    if (outcome !== 'none') this.counts.done++;
    if (outcome === 'failed') this.counts.failures++;
    if (outcome !== 'none') this.failing = outcome === 'failed';
    this.calls.counted?.(
      key,
      outcome,
      outcome === 'failed' ? (failure ?? { kind: 'unknown', message: 'failed' }) : undefined,
    );
  }

  /**
   * Items for a start just taken: one, unless only the endpoint's window limits it now (see batchSize), and one while
   * the endpoint is failing (the breaker counts each failure as it comes, not a batch's worth at its end).
   */
  private sizeOf(ticket: Ticket, remaining: number): number {
    if (this.failing || sendSlot(this.endpoint, ticket).send || !this.limiter.windowOnly(Date.now())) return 1;
    const timed = this.callTimes.of(this.endpoint);
    // A judge's: sized to end with the other places' work (see filledBatchSize); a run started before replays the share rule.
    const filled = this.fillBatches && timed !== undefined && patched('fill-batches');
    // In even batches, timed by the batches' calls (CallTimes.ofBatches); a run started before replays the plain average.
    const even = filled && patched('even-batches');
    const callMs = even ? this.callTimes.ofBatches(this.endpoint) : timed;
    return batchSize({
      remaining,
      allowed: this.limiter.allowed,
      callMs,
      max: this.maxBatch(),
      ...(filled ? { busyMs: this.busyMs(callMs!), even } : {}),
    });
  }

  /** The work the starts in flight still have (ms): each one's items × callMs, less what it has run. */
  private busyMs(callMs: number): number {
    const now = Date.now();
    let busy = 0;
    for (const start of this.inFlight) busy += Math.max(0, start.at + start.items * callMs - now);
    return busy;
  }

  /** `call` (one start carrying `items` items), counted in flight until it ends. */
  private async started<T>(items: number, call: () => Promise<T>): Promise<T> {
    const start = { at: Date.now(), items };
    this.inFlight.add(start);
    try {
      return await call();
    } finally {
      this.inFlight.delete(start);
    }
  }

  /** Work started in the background: its failure is observed at once (an unobserved rejection would fail every workflow task), and it is awaited at the end. */
  private track(work: Promise<void>): void {
    work.catch(() => undefined);
    this.running.add(work);
    void work.finally(() => this.running.delete(work)).catch(() => undefined);
  }
}

/** An activity's failure as the breaker reads it: the ApplicationFailure's type and the innermost message. */
function failureOfError(error: unknown): ItemFailure {
  let kind = 'unknown';
  let transient: boolean | undefined;
  let e = error as { message?: string; type?: string; nonRetryable?: boolean; cause?: unknown } | undefined;
  for (; e && typeof e === 'object'; e = e.cause as typeof e) {
    if (typeof e.type === 'string' && e.type) kind = e.type;
    if (typeof e.nonRetryable === 'boolean') transient = !e.nonRetryable;
    if (!e.cause) break;
  }
  return { kind, message: e?.message ?? String(error), ...(transient === undefined ? {} : { transient }) };
}

/** A paced start carries when its call may leave (the activity waits until then) and the spacing between sends. */
function sendSlot(endpoint: string, ticket: Ticket): { send?: SendSlot } {
  return ticket.startedAt > Date.now() || ticket.spacingMs
    ? { send: { at: ticket.startedAt, spacingMs: ticket.spacingMs, endpoint } }
    : {};
}

/**
 * A batch is back: its later calls count as starts, and its ticket goes back with what the endpoint said (a throttle
 * as of the call it stopped at).
 */
function releaseBatch(limiter: Limiter, ticket: Ticket, batch: { sentAt: number[]; outcome: CallOutcome }): void {
  limiter.noteStarts(batch.sentAt.slice(1));
  limiter.release(
    batch.outcome.throttled && batch.sentAt.length ? { startedAt: batch.sentAt[batch.sentAt.length - 1] } : ticket,
    batch.outcome,
  );
}
