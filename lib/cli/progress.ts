/**
 * Run progress for the terminal: a live bar (cli-progress) on a TTY, one plain line per finished
 * sample otherwise (logs, CI, pipes). The numbers come from `ProgressTally`, a pure accumulator.
 */
import { SingleBar } from 'cli-progress';

export interface SampleDone {
  sampleId: string;
  status: string;
  tokens: number;
  /** Undefined when the model has no known price: the cost is then unknown, not free. */
  costUsd: number | undefined;
  /** Why a sample did not end `done` (its result's reason). */
  reason?: string;
}

const ENDED_WELL = new Set(['done', 'partial_success']);

/** One finished sample as a line: its status, and why when it did not go well. */
export function sampleLine(s: SampleDone): string {
  const why = !ENDED_WELL.has(s.status) && s.reason ? ` (${s.reason.split('\n')[0]})` : '';
  return `${s.sampleId}: ${s.status}${why}`;
}

export class ProgressTally {
  done = 0;
  failed = 0;
  running = new Set<string>();
  tokens = 0;
  costUsd = 0;
  /** Some tokens were spent at no known price: the sum in `costUsd` is then not the cost. */
  unpriced = false;
  private readonly startedMs: number;

  constructor(
    readonly total: number,
    /** Samples already finished before this process started (a resume). */
    readonly skipped = 0,
    now = Date.now(),
    /**
     * Tokens come in through `spend` as each model call answers (or fails), so the line moves while
     * samples work; a finished sample's own count is then not added again.
     */
    readonly live = false,
  ) {
    this.startedMs = now;
  }

  /** A model call's tokens and cost, counted the moment it returns. */
  spend(u: { promptTokens: number; completionTokens: number; costUsd?: number | undefined }): void {
    this.count(u.promptTokens + u.completionTokens, u.costUsd);
  }

  /**
   * What the samples finished before this process (a resume) spent, so the line shows the run's
   * totals rather than the totals since the resume.
   */
  carry(before: { tokens: number; costUsd: number | undefined }): void {
    this.count(before.tokens, before.costUsd);
  }

  /** The cost as a reader should see it: dollars, or "unknown" when any part had no price. */
  cost(): string {
    return this.unpriced ? 'unknown' : `$${this.costUsd.toFixed(4)}`;
  }

  private count(tokens: number, costUsd: number | undefined): void {
    this.tokens += tokens;
    if (costUsd === undefined) {
      if (tokens > 0) this.unpriced = true;
    } else this.costUsd += costUsd;
  }

  start(sampleId: string): void {
    this.running.add(sampleId);
  }

  finish(s: SampleDone): void {
    this.running.delete(s.sampleId);
    if (ENDED_WELL.has(s.status)) this.done++;
    else this.failed++;
    if (this.live) return;
    this.count(s.tokens, s.costUsd);
  }

  /** Pages per minute over this process's work, and seconds left at that pace. */
  rates(now = Date.now()): { perMinute: number; etaSeconds: number | undefined } {
    const minutes = (now - this.startedMs) / 60_000;
    const finished = this.done + this.failed;
    const perMinute = minutes > 0 ? finished / minutes : 0;
    const left = this.total - this.skipped - finished;
    return { perMinute, etaSeconds: perMinute > 0 ? Math.round((left / perMinute) * 60) : undefined };
  }

  line(now = Date.now()): string {
    const { perMinute, etaSeconds } = this.rates(now);
    return (
      `${this.skipped + this.done + this.failed}/${this.total} · done ${this.skipped + this.done} · failed ${this.failed}` +
      ` · running ${this.running.size} · ${perMinute.toFixed(1)} pages/min · ${this.tokens} tokens` +
      ` · ${this.cost()}${etaSeconds !== undefined ? ` · ETA ${etaSeconds}s` : ''}`
    );
  }
}

export interface ProgressView {
  update(tally: ProgressTally, finished?: SampleDone): void;
  stop(): void;
}

/** The live bar when `stream` is a terminal, plain lines otherwise. */
export function progressView(
  stream: NodeJS.WriteStream,
  tally: ProgressTally,
  print: (s: string) => void,
): ProgressView {
  if (!stream.isTTY) {
    return {
      update: (t, finished) => {
        if (finished) print(`${sampleLine(finished)} — ${t.line()}`);
      },
      stop: () => undefined,
    };
  }
  const newBar = () =>
    new SingleBar({
      stream,
      format:
        '{bar} {value}/{total} | done {done} failed {failed} running {running} | {rate} pages/min | {tokens} tokens | USD {cost} | ETA {eta_s}',
      barCompleteChar: '█',
      barIncompleteChar: '░',
      hideCursor: true,
      etaBuffer: 50,
    });
  const payload = (t: ProgressTally) => {
    const { perMinute, etaSeconds } = t.rates();
    return {
      done: t.skipped + t.done,
      failed: t.failed,
      running: t.running.size,
      rate: perMinute.toFixed(1),
      tokens: t.tokens,
      cost: t.unpriced ? 'unknown' : t.costUsd.toFixed(4),
      eta_s: etaSeconds === undefined ? '?' : `${etaSeconds}s`,
    };
  };
  let bar = newBar();
  bar.start(tally.total, tally.skipped, payload(tally));
  const timer = setInterval(() => bar.update(payload(tally)), 1000);
  timer.unref();
  /** A line above the bar: the bar is taken off its line, the line printed, and the bar started below. */
  const above = (line: string, t: ProgressTally) => {
    // cli-progress reads this option when the bar stops: this one bar goes without a trace.
    (bar as unknown as { options: { clearOnComplete: boolean } }).options.clearOnComplete = true;
    bar.stop();
    stream.write(`${line}\n`);
    bar = newBar();
    bar.start(t.total, t.skipped + t.done + t.failed, payload(t));
  };
  return {
    update: (t, finished) => {
      // A sample that went wrong says why; the ones that went well only count.
      if (finished && !ENDED_WELL.has(finished.status)) above(sampleLine(finished), t);
      bar.update(t.skipped + t.done + t.failed, payload(t));
    },
    stop: () => {
      clearInterval(timer);
      bar.stop();
    },
  };
}
