/**
 * A benchmark's own honesty check: how many of its units of work (samples, calls, pages) did what
 * they were meant to. `gate` prints that count as the first line of the report and, when anything
 * failed, says what and exits non-zero before a single figure is printed: a throughput measured
 * over failures is not a throughput.
 */
export class BenchOutcome {
  ok = 0;
  readonly failures: string[] = [];

  constructor(
    /** `bench:fanout` */
    readonly name: string,
    /** What one unit of work is, plural: `samples`, `calls`. */
    readonly unit: string,
  ) {}

  /** One unit of work: fine when `good`, else a failure described by `why`. */
  record(good: boolean, why: string): void {
    if (good) this.ok++;
    else this.failures.push(why);
  }

  get total(): number {
    return this.ok + this.failures.length;
  }

  /** The first line: `bench:fanout ok 200/200 samples`. */
  line(): string {
    return `${this.name} ok ${this.ok}/${this.total} ${this.unit}`;
  }

  /**
   * Prints the ok line; with any failure (or no work at all) lists the first ones and exits 1.
   * `cleanup` runs first then, so browsers and servers do not outlive the process.
   */
  async gate(cleanup?: () => Promise<unknown>): Promise<void> {
    console.log(this.line());
    if (this.failures.length === 0 && this.total > 0) return;
    const shown = this.failures.slice(0, 10);
    for (const f of shown) console.log(`  failed: ${f}`);
    if (this.failures.length > shown.length)
      console.log(`  … and ${this.failures.length - shown.length} more`);
    console.log(
      this.total === 0
        ? `${this.name}: no work was done; no figures`
        : `${this.name}: ${this.failures.length} of ${this.total} ${this.unit} failed; no figures printed over failures`,
    );
    await cleanup?.().catch(() => undefined);
    process.exit(1);
  }
}
