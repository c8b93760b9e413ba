import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJobContext, newPage, saveStorageState } from '../../lib/browser/context.ts';
import { chromiumArgs, embeddedExecutablePath, launchBrowser } from '../../lib/browser/launch.ts';
import { settle } from '../../lib/browser/settle.ts';
import { readPage } from '../../lib/ops/page-state.ts';
import { snapshotIfQuiet } from '../../lib/perception/snapshot.ts';
import { startBrowser } from '../support/browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await startBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function runChild(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/scripts/launch-once.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('settle on a live page', () => {
  it('does not wait on event streams or long polls', async () => {
    const { startFixtureServer } = await import('../support/fixture-server.ts');
    const site = await startFixtureServer();
    const ctx = await newJobContext(browser);
    const page = await newPage(ctx);
    try {
      await page.goto(`${site.url}/live.html`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'live: hello');
      const res = await settle(page, { quietMs: 150, timeoutMs: 3000 });
      // Quiet, not timed out: it did not wait on the stream (waiting on it would have run into the
      // 3 s limit). How long reaching quiet took is the machine's business.
      expect(res.quiet).toBe(true);
    } finally {
      await ctx.close();
      await site.close();
    }
  });
});

describe('reading a page that is still changing', () => {
  it('a quiet-only snapshot declines while the DOM changes and reads the page once it is still', async () => {
    const ctx = await newJobContext(browser);
    const page = await newPage(ctx);
    try {
      await page.setContent('<p id="t">0</p><button>Go</button>');
      await page.evaluate(
        'globalThis.ticker = setInterval(() => { t.textContent = String(Date.now()); }, 20)',
      );
      await page.waitForTimeout(60);
      expect(await snapshotIfQuiet(page, 200)).toBeUndefined();
      await page.evaluate('clearInterval(globalThis.ticker); t.textContent = "done"');
      await page.waitForTimeout(250);
      const snap = await snapshotIfQuiet(page, 200);
      expect(snap?.tree).toContain('done');
      expect(snap?.elements.map((e) => e.name)).toContain('Go');
    } finally {
      await ctx.close();
    }
  });

  it('readPage waits out a page that is still rendering and reads what it ends with', async () => {
    const ctx = await newJobContext(browser);
    const page = await newPage(ctx);
    try {
      await page.setContent('<ul id="list"></ul>');
      // Items arrive every 40 ms for ~320 ms; the last one is what a reader must not miss.
      await page.evaluate(`(() => {
        let n = 0;
        const timer = setInterval(() => {
          const li = document.createElement('li');
          li.textContent = n === 7 ? 'Last item' : 'Item ' + n;
          list.append(li);
          if (++n === 8) clearInterval(timer);
        }, 40);
      })()`);
      const snap = await readPage({ page }, { budget: null });
      expect(snap.tree).toContain('Last item');
      expect(snap.tree.match(/Item \d/g)).toHaveLength(7);
    } finally {
      await ctx.close();
    }
  });
});

describe('embedded browser', () => {
  it('drops the flags that would kill shared browsers or weaken isolation', () => {
    const args = chromiumArgs(['--single-process', '--disable-web-security', '--no-sandbox']);
    expect(args).not.toContain('--single-process');
    expect(args).not.toContain('--disable-web-security');
    expect(args).toContain('--no-sandbox');
    expect(args).toContain('--disable-background-networking');
  });

  it('draws without the emulated GPU, and pages that use WebGL still get it', async () => {
    expect(chromiumArgs()).toContain('--disable-gpu');
    const ctx = await newJobContext(browser);
    const page = await newPage(ctx);
    await page.setContent('<canvas id="c" width="8" height="8"></canvas>');
    const drawn = await page.evaluate(() => {
      const gl = (document.getElementById('c') as HTMLCanvasElement).getContext('webgl');
      if (!gl) return null;
      gl.clearColor(1, 0, 0, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      const px = new Uint8Array(4);
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return Array.from(px);
    });
    expect(drawn).toEqual([255, 0, 0, 255]);
    await ctx.close();
  });

  it('two processes unpacking the binary at once both start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bfn-race-'));
    try {
      const [a, b] = await Promise.all([runChild({ TMPDIR: dir }), runChild({ TMPDIR: dir })]);
      expect(a.out).toContain('launched ok');
      expect(b.out).toContain('launched ok');
      expect([a.code, b.code]).toEqual([0, 0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('starts a Chromium that died while starting once more, and reports one that keeps dying', async () => {
    const real = await embeddedExecutablePath();
    const dir = await mkdtemp(join(tmpdir(), 'bfn-flaky-'));
    const tries = join(dir, 'tries');
    // Exits at once on its first start (as a browser short of memory does), then runs the real one.
    const script = (failAlways: boolean) =>
      `#!/bin/sh\necho x >> '${tries}'\n${failAlways ? 'exit 1' : `if [ "$(wc -l < '${tries}')" -lt 2 ]; then exit 1; fi\nexec '${real}' "$@"`}\n`;
    const saved = process.env.BROWSERFN_CHROMIUM_PATH;
    const attempts = async () => (await readFile(tries, 'utf8')).trim().split('\n').length;
    try {
      await writeFile(join(dir, 'flaky.sh'), script(false), { mode: 0o755 });
      process.env.BROWSERFN_CHROMIUM_PATH = join(dir, 'flaky.sh');
      const flaky = await launchBrowser();
      try {
        expect(flaky.isConnected()).toBe(true);
        expect(flaky.version()).toMatch(/^\d+\./);
      } finally {
        await flaky.close();
      }
      expect(await attempts()).toBe(2);
      await rm(tries);
      await writeFile(join(dir, 'dead.sh'), script(true), { mode: 0o755 });
      process.env.BROWSERFN_CHROMIUM_PATH = join(dir, 'dead.sh');
      await expect(launchBrowser()).rejects.toThrow();
      expect(await attempts()).toBe(2);
    } finally {
      if (saved === undefined) delete process.env.BROWSERFN_CHROMIUM_PATH;
      else process.env.BROWSERFN_CHROMIUM_PATH = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serves many isolated contexts from one browser; closing one leaves the others working', async () => {
    const a = await newJobContext(browser);
    const b = await newJobContext(browser);
    const pa = await newPage(a);
    const pb = await newPage(b);
    await pa.setContent('<p>a</p>');
    await a.close();
    await pb.setContent('<p>still here</p>');
    expect(await pb.locator('p').textContent()).toBe('still here');
    expect(browser.isConnected()).toBe(true);
    await b.close();
  });

  it('saves and restores storage state (an auth profile)', async () => {
    const http = await import('node:http');
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<p id="c">${req.headers.cookie ?? 'no cookie'}</p>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      const first = await newJobContext(browser);
      const p1 = await newPage(first);
      await p1.goto(url);
      await first.addCookies([{ name: 'session', value: 'abc', url }]);
      const file = join(await mkdtemp(join(tmpdir(), 'bfn-state-')), 'profile.json');
      await saveStorageState(first, file);
      await first.close();
      const second = await newJobContext(browser, { storageState: file });
      const p2 = await newPage(second);
      await p2.goto(url);
      expect(await p2.locator('#c').textContent()).toBe('session=abc');
      await second.close();
      await writeFile(file, '');
    } finally {
      server.close();
    }
  });

  it('settle waits for DOM quiet and requests, capped, and ignores streams', async () => {
    const ctx = await newJobContext(browser);
    const page = await newPage(ctx);
    await page.setContent('<p id="t">0</p>');
    // Mutations for 400 ms, then quiet. The page notes when each one happened, by its own clock.
    await page.evaluate(() => {
      const w = window as unknown as { marks: number[] };
      w.marks = [];
      let n = 0;
      const timer = setInterval(() => {
        document.getElementById('t')!.textContent = String(++n);
        w.marks.push(performance.now());
        if (n === 8) clearInterval(timer);
      }, 50);
    });
    const res = await settle(page, { quietMs: 150, timeoutMs: 10_000 });
    expect(res.quiet).toBe(true);
    // Settle came back after all eight changes — or, on a machine so busy that the page's own timer
    // stalled, after the page really had been still for the quiet window since its last change.
    const { marks, now } = await page.evaluate(() => ({
      marks: (window as unknown as { marks: number[] }).marks,
      now: performance.now(),
    }));
    expect(marks.length).toBeGreaterThan(0);
    if (marks.length < 8) expect(now - marks.at(-1)!).toBeGreaterThanOrEqual(150);
    else expect(await page.locator('#t').textContent()).toBe('8');
    // A page that never stops mutating is capped.
    await page.evaluate('setInterval(() => { document.body.dataset.tick = String(Date.now()); }, 20)');
    await page.waitForTimeout(60);
    const capped = await settle(page, { quietMs: 150, timeoutMs: 600 });
    expect(capped.quiet).toBe(false);
    expect(capped.ms).toBeGreaterThanOrEqual(550);
    // Capped near the 600 ms limit; the slack is for a busy machine, the bound for a settle that never stops.
    expect(capped.ms).toBeLessThan(30_000);
    await ctx.close();
  });
});
