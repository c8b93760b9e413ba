/**
 * A fair share of the server's run reads between keys. Two rules:
 *
 * - At most `slots` reads run at once; a freed slot goes to the waiting key that has the fewest reads
 *   running (the longest-waiting read of that key), so one key's ten polls cannot line up ahead of
 *   another key's one read.
 * - Each key's reads may take only a part (`share`) of the server's time: a read's time (measured,
 *   plus a fixed cost for parsing the request and writing the answer, which happen outside it) is
 *   taken from the key's credit, which grows back at `share` ms per ms up to `burstMs`. A key out of
 *   credit waits (its read is held, not refused) until the credit is back.
 *
 * Why the second rule: Node serves one request at a time on one thread. Taking turns only helps when
 * reads overlap; a key that keeps ten polls going keeps the event loop busy between them all the same,
 * and another key's request, arriving at any moment, waits behind whatever runs then (bench:run-load
 * measured the other key's p95 at 10–40× idle). Held to a share, the heavy key leaves the loop idle
 * most of the time, so a light key's read is answered about as fast as on an idle server. A single
 * poller (a dashboard every second or so) never feels it; ten polls in a loop get their share.
 */

type Admit = (release: () => void) => void;

export interface ShareOptions {
  /** Part of the server's time one key's reads may take over a while (0 < share ≤ 1). */
  share?: number;
  /** Server time a key may spend at once before its reads are paced (ms). */
  burstMs?: number;
  /** Time counted per read on top of its measured time: the HTTP work around the handler (ms). */
  overheadMs?: number;
  now?: () => number;
}

interface KeyState {
  running: number;
  waiting: Admit[];
  /** Server time (ms) the key may still spend; below zero, it waits. */
  credit: number;
  /** When `credit` was last brought up to date. */
  at: number;
}

export class FairShare {
  private readonly keys = new Map<string, KeyState>();
  private inUse = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  readonly share: number;
  readonly burstMs: number;
  readonly overheadMs: number;
  private readonly now: () => number;

  constructor(
    readonly slots: number,
    options: ShareOptions = {},
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`slots: a whole number ≥ 1, got ${slots}`);
    this.share = options.share ?? READ_SHARE;
    if (!(this.share > 0 && this.share <= 1))
      throw new Error(`share: above 0 and at most 1, got ${this.share}`);
    this.burstMs = options.burstMs ?? READ_BURST_MS;
    this.overheadMs = options.overheadMs ?? READ_OVERHEAD_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /** Resolves with a release function (call it exactly once) when the key's read may run. */
  take(key: string): Promise<() => void> {
    return new Promise((resolve) => {
      this.state(key).waiting.push(resolve);
      this.next();
    });
  }

  /** Reads running and waiting, per key (for tests and the benchmark). */
  use(key: string): { running: number; waiting: number } {
    const s = this.keys.get(key);
    return { running: s?.running ?? 0, waiting: s?.waiting.length ?? 0 };
  }

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { running: 0, waiting: [], credit: this.burstMs, at: this.now() };
      this.keys.set(key, s);
    }
    return s;
  }

  /** The key's credit now: what it had, grown back at `share` since, up to the burst. */
  private credit(s: KeyState, now: number): number {
    s.credit = Math.min(this.burstMs, s.credit + (now - s.at) * this.share);
    s.at = now;
    return s.credit;
  }

  private admit(s: KeyState): () => void {
    this.inUse++;
    s.running++;
    const started = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      s.running--;
      const now = this.now();
      this.credit(s, now);
      s.credit -= now - started + this.overheadMs;
      this.next();
    };
  }

  /**
   * Gives free slots to waiting keys that have credit, fewest reads running first (ties: the key
   * that queued first); when only keys out of credit wait, wakes up once the first has it back.
   */
  private next(): void {
    const now = this.now();
    let wakeIn = Number.POSITIVE_INFINITY;
    while (this.inUse < this.slots) {
      let pick: [string, KeyState] | undefined;
      wakeIn = Number.POSITIVE_INFINITY;
      for (const entry of this.keys) {
        const s = entry[1];
        if (s.waiting.length === 0) continue;
        const credit = this.credit(s, now);
        if (credit <= 0) {
          wakeIn = Math.min(wakeIn, -credit / this.share);
          continue;
        }
        if (pick === undefined || s.running < pick[1].running) pick = entry;
      }
      if (!pick) break;
      const admit = pick[1].waiting.shift() as Admit;
      admit(this.admit(pick[1]));
    }
    if (this.inUse >= this.slots) wakeIn = Number.POSITIVE_INFINITY;
    this.prune(now);
    this.wakeUpIn(now, wakeIn);
  }

  /** Forgets keys with nothing running or waiting and their credit full again (a bounded map). */
  private prune(now: number): void {
    for (const [key, s] of this.keys)
      if (s.running === 0 && s.waiting.length === 0 && this.credit(s, now) >= this.burstMs)
        this.keys.delete(key);
  }

  private wakeUpIn(now: number, ms: number): void {
    if (!Number.isFinite(ms) || now + ms >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = now + ms;
    // A millisecond late rather than early: a timer that fires before the credit is back does nothing.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.next();
    }, Math.ceil(ms) + 1);
    // Pending reads keep their sockets, and so the server, alive: the timer need not.
    this.timer.unref?.();
  }
}

/** Run reads the server serves at once, across all keys (the rest wait their fair turn). */
export const RUN_READS_AT_ONCE = 4;
/** A quarter of the server's time per key for run reads. */
export const READ_SHARE = 0.25;
/** Server time a key may spend at once (a few whole-results reads) before its reads are paced. */
export const READ_BURST_MS = 250;
/** Parsing a read's request and writing its answer: about a millisecond of the event loop each. */
export const READ_OVERHEAD_MS = 1;
/**
 * Run reads one key may have in the server at once, held or running (more get a 429): room for ten
 * status polls and a results read, which wait their turn under the share instead of being refused
 * and sent again at once (a refusal costs the server about what a status read does).
 */
export const DEFAULT_READS_PER_TENANT = 16;
