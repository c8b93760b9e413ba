import { connect } from 'node:net';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDebuggableBrowser } from '../../lib/api/stagehand/browser.ts';
import { type HardeningEnv, HOSTILE_CELLS, startHardeningEnv } from '../support/hardening-env.ts';

/**
 * Probes of issue 21 against the served runs API (loopback only): hostile CSV cells, evidence and the
 * report opened by a real browser, ids and paths a store cannot take, slow requests, and a bounded
 * fuzz that must never see a 5xx. (verify: hardening-verify.test.ts.)
 */

let env: HardeningEnv;

beforeAll(async () => {
  env = await startHardeningEnv();
  await env.plantRun('r-main');
});

afterAll(async () => {
  await env?.close();
});

describe('spreadsheet-safe CSV (item 3)', () => {
  const rowOf = (csv: string) => {
    const [header, ...rows] = parseCsv(csv, { relax_column_count: true }) as string[][];
    const s1 = rows.find((r) => r[0] === 's1')!;
    return Object.fromEntries(header!.map((h, i) => [h, s1[i]]));
  };

  it('escapes formula-like cells in /results?format=csv and in combined.csv, keeps numbers', async () => {
    const served = await env.get('/v1/runs/r-main/results?format=csv');
    expect(served.status).toBe(200);
    const stored = await env.get('/v1/runs/r-main/evidence/combined.csv');
    expect(stored.status).toBe(200);
    for (const csv of [await served.text(), await stored.text()]) {
      const row = rowOf(csv);
      expect(row.formula).toBe(`'${HOSTILE_CELLS.formula}`);
      expect(row.plus).toBe("'+1");
      expect(row.minus).toBe("'-1");
      expect(row.at).toBe("'@x");
      expect(row.tab).toBe("'\tx");
      expect(row.cr).toBe("'\rx");
      expect(row.number).toBe('-5');
      expect(row.plain).toBe('ok');
    }
  });

  it('gives the values as extracted with raw=true, and names the field of a bad raw', async () => {
    const row = rowOf(await (await env.get('/v1/runs/r-main/results?format=csv&raw=true')).text());
    expect(row.formula).toBe(HOSTILE_CELLS.formula);
    expect(row.minus).toBe('-1');
    expect(row.cr).toBe('\rx');
    const bad = await env.get('/v1/runs/r-main/results?format=csv&raw=yes');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues[0]!.path).toBe(
      'raw',
    );
  });
});

describe('evidence served as data, the report under a real CSP (item 4)', () => {
  it('serves evidence with attachment, nosniff and a sandbox CSP; screenshots inline', async () => {
    const html = await env.get('/v1/runs/r-main/evidence/samples/s1/evil.html');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-disposition')).toBe('attachment; filename="evil.html"');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-security-policy')).toMatch(/^sandbox\b/);
    const png = await env.get('/v1/runs/r-main/evidence/samples/s1/01_start.png');
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('content-disposition')).toMatch(/^inline/);
    expect(png.headers.get('x-content-type-options')).toBe('nosniff');
    const report = await env.get('/v1/runs/r-main/report');
    const csp = report.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toMatch(/unsafe-inline/);
  });

  it('a real browser opening the served evidence and the report runs no planted script', async () => {
    const { browser } = await sharedDebuggableBrowser();
    const context = await browser.newContext({ extraHTTPHeaders: { authorization: 'Bearer key-a' } });
    try {
      const page = await context.newPage();
      // The attachment becomes a download; before the fix the page rendered and its script ran.
      await page.goto(`${env.url}/v1/runs/r-main/evidence/samples/s1/evil.html`).catch(() => undefined);
      await page.waitForLoadState('load').catch(() => undefined);
      expect(await page.title()).not.toBe('pwned');

      await page.goto(`${env.url}/v1/runs/r-main/report`);
      // The report's own filter script (allowed by its hash) ran: it counted the rows shown.
      await expect.poll(() => page.textContent('#shown')).toBe('2');
      expect(await page.title()).toBe('browserfn run r-main');
      // The escaped hostile data is shown as text.
      expect(await page.textContent('tr[data-sample="s2"] .reason')).toContain('<script>');
      // And a script that got into the page anyway would not run: inline script is not allowed.
      const after = await page.evaluate(() => {
        const s = document.createElement('script');
        s.textContent = 'document.title = "pwned"';
        document.body.append(s);
        return document.title;
      });
      expect(after).toBe('browserfn run r-main');
      // Give any beacon a moment to arrive (a script that ran would have called at load already).
      await page.reload();
      await expect.poll(() => page.textContent('#shown')).toBe('2');
      expect(env.hits).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('ids and paths a store cannot take are a 400 naming the field (item 7)', () => {
  const issuePath = async (res: Response) =>
    ((await res.json()) as { error: { issues?: { path: string }[] } }).error.issues?.[0]?.path;

  it('refuses a 300-character run id on every run route', async () => {
    const id = 'r'.repeat(300);
    for (const path of [
      `/v1/runs/${id}`,
      `/v1/runs/${id}/results`,
      `/v1/runs/${id}/report`,
      `/v1/runs/${id}/evidence/a.png`,
    ]) {
      const res = await env.get(path);
      expect(res.status, path).toBe(400);
      expect(await issuePath(res), path).toBe('id');
    }
    const cancel = await fetch(`${env.url}/v1/runs/${id}/cancel`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a' },
    });
    expect(cancel.status).toBe(400);
  });

  it('refuses climbing, absolute, hidden and NUL evidence paths', async () => {
    for (const path of [
      'x%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
      '%2fetc%2fpasswd',
      'combined.csv%00.png',
      '..%2fmanifest.jsonl',
      '.hidden%2fpayload.html',
      'samples%2f%2e%2e%2f%2e%2e%2fcombined.csv',
      `${'a/'.repeat(40)}b`,
    ]) {
      const res = await env.get(`/v1/runs/r-main/evidence/${path}`);
      expect(res.status, path).toBe(400);
      expect(await issuePath(res), path).toBe('path');
    }
  });

  it('refuses a 20,000-deep extract schema', async () => {
    const deep = `${'{"type":"object","properties":{"a":'.repeat(20_000)}{"type":"string"}${'}}'.repeat(20_000)}`;
    const res = await fetch(`${env.url}/v1/extract`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: `{"url":"${env.beaconUrl}/page","instruction":"read it","schema":${deep}}`,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/schema: nested deeper than 64 levels/);
  });
});

/** Sends `head` then `body` one byte every `gapMs`; resolves with what the server answered. */
function trickle(head: string, body: string, gapMs: number): Promise<{ answer: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(env.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => {
      answer += d.toString();
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, sent });
    });
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent >= body.length || socket.destroyed) return clearInterval(timer);
        socket.write(body[sent++]!);
      }, gapMs);
    });
  });
}

describe('slow requests are cut (item 8)', () => {
  it('answers 408 to a body that trickles in, long before it is complete', async () => {
    const body = JSON.stringify({ prompt: 'x'.repeat(60) });
    const head =
      'POST /v1/runs HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer key-a\r\n' +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const { answer, sent } = await trickle(head, body, 250);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(sent).toBeLessThan(body.length);
  });

  it('answers 408 to headers that trickle in', async () => {
    const head = `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ${'y'.repeat(60)}\r\n\r\n`;
    const { answer, sent } = await trickle('', head, 250);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(sent).toBeLessThan(head.length);
  });
});

describe('what the timeouts leave alone (item 8)', () => {
  it('answers a call whose work takes longer than the request timeout, once its body was in', async () => {
    const res = await fetch(`${env.url}/v1/act`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${env.beaconUrl}/slow`, instruction: 'scroll down' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
  });
});

describe('run and evidence inputs, fuzzed (item 9)', () => {
  it('never answers 5xx to hostile run ids, evidence paths or run bodies', async () => {
    const ids = [
      'r-main',
      'x'.repeat(129),
      '%00',
      '..',
      '.',
      '%2e%2e',
      'a%2fb',
      'ü',
      '~',
      'r main',
      'r-main%00',
    ];
    const paths = [
      '',
      '%',
      '%zz',
      '..',
      'a/../../b',
      '%5c..%5cx',
      'combined.csv%0a',
      'a'.repeat(300),
      '~/x',
      'samples//x',
    ];
    const bodies = [
      '',
      '{',
      '[]',
      'null',
      '{"spec":[]}',
      '{"samples":"x"}',
      '{"csv":1}',
      '{"prompt":""}',
      `{"spec":{"goal":"g"},"samples":[{"url":"http://x","sample_id":"${'s'.repeat(300)}"}]}`,
      '{"spec":{"goal":"g"},"csv":"sample_id,url\\n../x,https://a.test/"}',
    ];
    const failures: string[] = [];
    let calls = 0;
    const check = async (what: string, res: Response) => {
      calls++;
      if (res.status >= 500) failures.push(`${what} → ${res.status}`);
      await res.body?.cancel();
    };
    for (const id of ids) {
      for (const sub of ['', '/results', '/results?format=csv', '/report'])
        await check(`${id}${sub}`, await env.get(`/v1/runs/${id}${sub}`));
      for (const path of paths)
        await check(`${id} ${path}`, await env.get(`/v1/runs/${id}/evidence/${path}`));
      for (const op of ['cancel', 'resume'])
        await check(
          `${op} ${id}`,
          await fetch(`${env.url}/v1/runs/${id}/${op}`, {
            method: 'POST',
            headers: { authorization: 'Bearer key-b' },
          }),
        );
    }
    for (const body of bodies)
      await check(
        `POST ${body.slice(0, 30)}`,
        await fetch(`${env.url}/v1/runs`, {
          method: 'POST',
          headers: { authorization: 'Bearer key-b', 'content-type': 'application/json' },
          body,
        }),
      );
    expect(calls).toBe(ids.length * (4 + paths.length + 2) + bodies.length);
    expect(failures).toEqual([]);
  }, 120_000);
});
