/**
 * Run progress for the terminal: a live bar (cli-progress) on a TTY, one plain line per finished
 * sample otherwise (logs, CI, pipes). The numbers come from `ProgressTally`, a pure accumulator.
 */
import { SingleBar } from 'cli-progress';

export interface SampleDone {
  sampleId: string;
  status: string;
  tokens: number;
  costUsd: number;
}

export class ProgressTally {
  done = 0;
  failed = 0;
  running = new Set<string>();
  tokens = 0;
  costUsd = 0;
  private readonly startedMs: number;

  constructor(
    readonly total: number,
    /** Samples already finished before this process started (a resume). */
    readonly skipped = 0,
    now = Date.now(),
  ) {
    this.startedMs = now;
  }

  start(sampleId: string): void {
    this.running.add(sampleId);
  }

  finish(s: SampleDone): void {
    this.running.delete(s.sampleId);
    if (s.status === 'done' || s.status === 'partial_success') this.done++;
    else this.failed++;
    this.tokens += s.tokens;
    this.costUsd += s.costUsd;
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
      ` · $${this.costUsd.toFixed(4)}${etaSeconds !== undefined ? ` · ETA ${etaSeconds}s` : ''}`
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
        if (finished) print(`${finished.sampleId}: ${finished.status} — ${t.line()}`);
      },
      stop: () => undefined,
    };
  }
  const bar = new SingleBar({
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
      cost: t.costUsd.toFixed(4),
      eta_s: etaSeconds === undefined ? '?' : `${etaSeconds}s`,
    };
  };
  bar.start(tally.total, tally.skipped, payload(tally));
  const timer = setInterval(() => bar.update(payload(tally)), 1000);
  timer.unref();
  return {
    update: (t) => bar.update(t.skipped + t.done + t.failed, payload(t)),
    stop: () => {
      clearInterval(timer);
      bar.stop();
    },
  };
}
