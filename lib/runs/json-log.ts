/**
 * Structured logs for Lambda: one JSON object per line, so CloudWatch Logs Insights can filter by
 * `runId`, `sampleId` or `step`. Secrets never reach here: callers log ids, counts and statuses only.
 */
export type LogEvent = { level?: 'debug' | 'info' | 'warn' | 'error'; msg: string; [k: string]: unknown };

export function jsonLog(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
  return (event: LogEvent): void => {
    write(JSON.stringify({ time: new Date().toISOString(), level: event.level ?? 'info', ...event }));
  };
}
