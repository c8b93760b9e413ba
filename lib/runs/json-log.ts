/**
 * Structured logs: one JSON object per line, so CloudWatch Logs Insights (or `jq`) can filter by
 * `runId`, `sampleId` or `step`. Secrets never reach here: callers log ids, counts and statuses only.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogEvent = { level?: LogLevel; msg: string; [k: string]: unknown };
export type Logger = (event: LogEvent) => void;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** `BROWSERFN_LOG_LEVEL` (debug | info | warn | error; default info); anything else is refused by name. */
export function logLevelFrom(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  const v = value.trim().toLowerCase();
  if (v in RANK) return v as LogLevel;
  throw new Error(`BROWSERFN_LOG_LEVEL: expected debug, info, warn or error, got "${value}"`);
}

/** The process stream a default writer is for. */
export type LogStream = 'stdout' | 'stderr';
/** Where the default writers put each line. */
export type LogSink = (line: string, stream: LogStream) => void;

const processStreams: LogSink = (line, stream) => void process[stream].write(`${line}\n`);
let sink: LogSink = processStreams;

/**
 * Sends the lines of every default writer of this process elsewhere, and returns the sink it
 * replaced (undefined: the process streams again). The test suite routes them through its console,
 * which the runner holds back for passing tests: its `silent` option does not reach raw stream writes.
 */
export function setLogSink(next: LogSink | undefined): LogSink {
  const before = sink;
  sink = next ?? processStreams;
  return before;
}

/** A writer of lines to `stream`, through whatever sink is set when each line is written. */
export function linesTo(stream: LogStream): (line: string) => void {
  return (line) => sink(line, stream);
}

/** Lines at `level` or above, written whole. */
export function jsonLog(
  write: (line: string) => void = linesTo('stdout'),
  level: LogLevel = logLevelFrom(process.env.BROWSERFN_LOG_LEVEL),
): Logger {
  return (event: LogEvent): void => {
    const at = event.level ?? 'info';
    if (RANK[at] < RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), ...event, level: at }));
  };
}

/**
 * The logger a sample's code gets: every line it writes carries the run and sample it belongs to,
 * whatever the code deep inside (agent, workflow, ops) thought to include.
 */
export function logFor<E extends { msg: string }>(
  log: (event: E) => void,
  ids: { tenant?: string; runId: string; sampleId?: string },
): (event: E) => void {
  return (event) => log({ ...event, ...ids });
}
