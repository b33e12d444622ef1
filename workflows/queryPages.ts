import { condition } from '@temporalio/workflow';
import type { PreparedRun } from '../contract/run';
import type { WorkSource } from './endpointLane';

/** Query ids read in one activity (about 20–60 KB of result at typical id lengths). */
export const QUERY_PAGE = 2_000;

/**
 * A run's queries in snapshot order, read from the results store a page at a time (`load`, an activity) as its lanes
 * reach them, so the workflow's inputs and results carry a count, never every id (Temporal refuses a payload over 2 MB).
 * Pages read are kept in the workflow's memory only; a continued run reads again from where its copilots stand. A run
 * prepared by an older build carries its ids (`PreparedRun.queryIds`): then every page is held from the start and
 * nothing is read, so such runs replay as they were recorded.
 */
export class QueryPages {
  private readonly pages = new Map<number, string[]>();
  private readonly loading = new Map<number, Promise<void>>();

  private constructor(
    readonly length: number,
    private readonly load: (offset: number, limit: number) => Promise<string[]>,
  ) {}

  /** Every id known already (an older run's carried ids, a resumed run's queries still to ask). */
  static held(ids: string[]): QueryPages {
    const pages = new QueryPages(ids.length, async () => []);
    for (let page = 0; page * QUERY_PAGE < ids.length; page++)
      pages.pages.set(page, ids.slice(page * QUERY_PAGE, (page + 1) * QUERY_PAGE));
    return pages;
  }

  static of(prepared: PreparedRun, load: (offset: number, limit: number) => Promise<string[]>): QueryPages {
    if (prepared.queryIds) return QueryPages.held(prepared.queryIds);
    return new QueryPages(prepared.queryCount ?? 0, load);
  }

  /** Every page is held (nothing more to read). */
  get complete(): boolean {
    return this.pages.size * QUERY_PAGE >= this.length;
  }

  /** How many ids from `position` on are held without a gap. */
  heldFrom(position: number): number {
    let end = position;
    while (end < this.length && this.pages.has(Math.floor(end / QUERY_PAGE)))
      end = Math.min(this.length, (Math.floor(end / QUERY_PAGE) + 1) * QUERY_PAGE);
    return end - position;
  }

  /** The held ids at positions [from, to). */
  slice(from: number, to: number): string[] {
    const ids: string[] = [];
    for (let at = from; at < to;) {
      const page = Math.floor(at / QUERY_PAGE);
      const held = this.pages.get(page);
      if (!held) throw new Error(`query page ${page} is not read yet`);
      const upTo = Math.min(to, (page + 1) * QUERY_PAGE);
      ids.push(...held.slice(at - page * QUERY_PAGE, upTo - page * QUERY_PAGE));
      at = upTo;
    }
    return ids;
  }

  /** Read page `page` (once, however many lanes ask for it). */
  fetch(page: number): Promise<void> {
    if (this.pages.has(page) || page * QUERY_PAGE >= this.length) return Promise.resolve();
    let loading = this.loading.get(page);
    if (!loading) {
      loading = this.load(page * QUERY_PAGE, QUERY_PAGE).then((ids) => {
        this.pages.set(page, ids);
        this.loading.delete(page);
      });
      this.loading.set(page, loading);
    }
    return loading;
  }

  /** Every id, in order (imports and re-judges plan every query at once). */
  async all(): Promise<string[]> {
    for (let page = 0; page * QUERY_PAGE < this.length; page++) await this.fetch(page);
    return this.slice(0, this.length);
  }

  /**
   * The lane's work source over these queries from `position()` on, reading each page while the lane is still in the
   * one before (`stop()` ends the reading). Closed once every remaining id is held.
   */
  source(
    position: () => number,
    advance: (taken: number) => void,
    stop: () => boolean,
  ): WorkSource<string> & {
    reading: Promise<void>;
  } {
    const reading = this.complete ? Promise.resolve() : this.readAhead(position, stop);
    return {
      reading,
      available: () => this.heldFrom(position()),
      take: (n) => {
        const taken = this.slice(position(), position() + n);
        advance(taken.length);
        return taken;
      },
      closed: () => this.heldFrom(position()) >= this.length - position(),
    };
  }

  private async readAhead(position: () => number, stop: () => boolean): Promise<void> {
    for (let page = Math.floor(position() / QUERY_PAGE); page * QUERY_PAGE < this.length; page++) {
      // One page ahead: page p is read once the lane has reached page p - 1.
      await condition(() => stop() || page * QUERY_PAGE < position() + QUERY_PAGE);
      if (stop()) return;
      await this.fetch(page);
    }
  }
}
