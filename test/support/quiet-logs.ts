/**
 * Setup file of the suite (vitest.config.ts `setupFiles`): the JSON log lines of servers and
 * handlers run in the test process go through the console, which the runner prints only for a
 * failing test (`silent: 'passed-only'`), instead of straight to the process streams, which no
 * runner option reaches. Child processes (a CLI, `serve`) are untouched: tests read their streams.
 */
import { vi } from 'vitest';
import { setLogSink } from '../../lib/runs/json-log.ts';

setLogSink((line, stream) => {
  // A test that watches a stream itself (the queue Lambda's, on stdout) still gets its lines there.
  if (vi.isMockFunction(process[stream].write)) process[stream].write(`${line}\n`);
  else if (stream === 'stderr') console.error(line);
  else console.log(line);
});
