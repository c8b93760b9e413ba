import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardProxyFor } from '../../lib/browser/guard-proxy.ts';
import { openSession, type Session } from '../../lib/browser/session.ts';
import { startBrowser } from '../support/browser.ts';

/** Accepts connections and never answers: the page that never loads. It hangs up only when the client does. */
let hang: net.Server;
let hangPort: number;
const open = new Set<net.Socket>();
/** Serves a page whose image comes from the hanging server. */
let pages: http.Server;
let pagesPort: number;
let browser: Browser;

const listen = <S extends net.Server>(s: S) => new Promise<S>((r) => s.listen(0, '127.0.0.1', () => r(s)));
const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

async function until(what: string, ok: () => boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  hang = await listen(
    net.createServer((s) => {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
      // Reads what it is sent (so it sees the client hang up), answers nothing.
      s.resume();
    }),
  );
  hangPort = portOf(hang);
  pages = await listen(
    http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<h1>Waiting</h1><img alt="never" src="http://127.0.0.1:${hangPort}/never.png"><button>Go</button>`,
      );
    }),
  );
  pagesPort = portOf(pages);
  browser = await startBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const s of open) s.destroy();
  hang?.close();
  pages?.close();
});

describe('guard proxy connections', () => {
  it('closes connections to destinations that never answer once their pages are gone', async () => {
    const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${hangPort}`] };
    const proxy = await guardProxyFor(policy);
    const baseline = proxy.openUpstreams();
    expect(open.size).toBe(0);
    const sessions: Session[] = [];
    for (let i = 0; i < 10; i++) {
      const s = await openSession({ browser, policy });
      sessions.push(s);
      // Half plain HTTP (proxied requests), half HTTPS (CONNECT tunnels); neither ever answers.
      const url = i % 2 ? `https://127.0.0.1:${hangPort}/page${i}` : `http://127.0.0.1:${hangPort}/page${i}`;
      void s.page.goto(url, { timeout: 60_000 }).catch(() => undefined);
    }
    await until('10 connections at the hanging server', () => open.size >= 10);
    expect(proxy.openUpstreams() - baseline).toBeGreaterThanOrEqual(10);
    await Promise.all(sessions.map((s) => s.close()));
    await until('the hanging server to see every connection closed', () => open.size === 0);
    await until('the proxy to hold no connection', () => proxy.openUpstreams() === baseline);
  });

  it('lets the Lambda handler process exit by itself after shutdown', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/support/scripts/lambda-once.ts', `http://127.0.0.1:${pagesPort}/`],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: process.env.TMPDIR,
          BROWSERFN_API_KEYS: 'k:t',
          BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${pagesPort},127.0.0.1:${hangPort}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running');
      }, 60_000);
      let shutAt = 0;
      const poll = setInterval(() => {
        if (!shutAt && out.includes('shut down')) shutAt = Date.now();
        // Once shut down, a few seconds is plenty to exit.
        if (shutAt && Date.now() - shutAt > 5000) {
          clearInterval(poll);
          clearTimeout(timer);
          child.kill('SIGKILL');
          resolve('still running 5 s after shutdown');
        }
      }, 100);
      child.on('exit', (c) => {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(c ?? 'killed');
      });
    });
    expect(out, err).toContain('status 200');
    expect(code, `${out}\n${err}`).toBe(0);
  });
});
