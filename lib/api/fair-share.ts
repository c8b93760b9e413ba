/**
 * A fair share of the server's run reads between keys. At most `slots` reads run at once; a read that
 * finds them taken waits, and a freed slot goes to the waiting key that has the fewest reads running
 * (the longest-waiting read of that key). So a key that keeps ten polls open gets the slots nobody
 * else wants, while another key's read takes the next free one instead of lining up behind all ten.
 * Why it is needed: Node answers requests first come, first served; under one key's polling, another
 * key's one-file status read waited behind every poll in the queue (p95 ~10× idle).
 */

type Admit = (release: () => void) => void;

export class FairShare {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Admit[]>();
  private inUse = 0;

  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`slots: a whole number ≥ 1, got ${slots}`);
  }

  /** Resolves with a release function (call it exactly once) when the key's read may run. */
  take(key: string): Promise<() => void> {
    return new Promise((resolve) => {
      if (this.inUse < this.slots) {
        resolve(this.admit(key));
        return;
      }
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
  }

  /** Reads running and waiting, per key (for tests and the benchmark). */
  use(key: string): { running: number; waiting: number } {
    return { running: this.running.get(key) ?? 0, waiting: this.waiting.get(key)?.length ?? 0 };
  }

  private admit(key: string): () => void {
    this.inUse++;
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
      this.next();
    };
  }

  /** Gives free slots to the waiting keys with the fewest reads running (ties: the key queued first). */
  private next(): void {
    while (this.inUse < this.slots && this.waiting.size > 0) {
      let pick: string | undefined;
      for (const key of this.waiting.keys())
        if (pick === undefined || (this.running.get(key) ?? 0) < (this.running.get(pick) ?? 0)) pick = key;
      const queue = this.waiting.get(pick as string) as Admit[];
      const admit = queue.shift() as Admit;
      if (queue.length === 0) this.waiting.delete(pick as string);
      admit(this.admit(pick as string));
    }
  }
}

/** Run reads the server serves at once, across all keys (the rest wait their fair turn). */
export const RUN_READS_AT_ONCE = 4;
