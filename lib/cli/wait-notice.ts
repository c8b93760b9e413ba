/**
 * Feedback for long waits on a terminal: after a couple of seconds without a page (or a model
 * answer), one line on stderr says what is being waited for, updated in place; nothing at all
 * when stderr is a file or a pipe, so scripts read clean output.
 */

/** What a command is waiting for right now, e.g. "http://x/ to load". */
export interface Waiting {
  what: string;
}

export const NOTICE_AFTER_MS = 2000;

/** The line shown after `ms` of waiting. */
export function noticeLine(what: string, ms: number): string {
  return `browserfn: waiting for ${what} (${Math.floor(ms / 1000)} s)…`;
}

export interface NoticeOptions {
  isTTY?: boolean;
  write?: (text: string) => void;
  afterMs?: number;
  everyMs?: number;
}

/** Starts the notice; the returned function stops it and clears the line. */
export function startWaitNotice(waiting: Waiting, options: NoticeOptions = {}): () => void {
  const isTTY = options.isTTY ?? process.stderr.isTTY === true;
  if (!isTTY) return () => undefined;
  const write = options.write ?? ((t: string) => process.stderr.write(t));
  const started = Date.now();
  let shown = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    write(`\r\x1b[K${noticeLine(waiting.what, Date.now() - started)}`);
    shown = true;
    timer = setTimeout(tick, options.everyMs ?? 1000);
    timer.unref();
  };
  timer = setTimeout(tick, options.afterMs ?? NOTICE_AFTER_MS);
  timer.unref();
  return () => {
    clearTimeout(timer);
    if (shown) write('\r\x1b[K');
  };
}
