/**
 * One tenant's polling load for bench:run-load, in a process of its own: the other tenant's calls are
 * timed from the bench process, so their latency is the server's answer time, not a wait behind this
 * load's response handling in one shared client event loop (two tenants are two clients).
 *
 * Argument: JSON `{ base, key, paths: string[] }` — one poller per path, each sending its read again as
 * soon as the last one answered. Commands on stdin, one per line: `start` begins polling, `stop` ends
 * it and, once every poller is idle, prints `{ "200": n, "429": n, "dropped": n, … }` on stdout.
 */
import { createInterface } from 'node:readline';

const { base, key, paths } = JSON.parse(process.argv[2] ?? '{}') as {
  base: string;
  key: string;
  paths: string[];
};

let polling = false;
let running: Promise<void>[] = [];
let answers = new Map<string, number>();

const count = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);

async function poller(path: string): Promise<void> {
  while (polling) {
    try {
      const res = await fetch(`${base}${path}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(15_000),
      });
      await res.arrayBuffer();
      count(String(res.status));
    } catch {
      count('dropped');
    }
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'start' && !polling) {
    polling = true;
    answers = new Map();
    running = paths.map(poller);
  } else if (line === 'stop') {
    polling = false;
    void Promise.all(running).then(() => {
      process.stdout.write(`${JSON.stringify(Object.fromEntries(answers))}\n`);
    });
  }
});
process.stdin.on('end', () => process.exit(0));
