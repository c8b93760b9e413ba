/**
 * The Node server in a process of its own (so a test can run it under a lowered file limit, e.g.
 * `sh -c 'ulimit -n 256; exec node --import tsx test/support/scripts/serve-once.ts'`). Configured by
 * the usual environment; prints `{"url": …}` once listening on a free loopback port, and stops on
 * SIGTERM.
 */
import { startServer } from '../../../lib/api/serve.ts';

const server = await startServer({ port: 0, host: '127.0.0.1', print: () => {} });
process.stdout.write(`${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
process.once('SIGTERM', () => {
  void server.close().finally(() => process.exit(0));
});
