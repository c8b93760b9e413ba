import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../lib/api/serve.ts';
import { sharedDebuggableBrowser } from '../../lib/api/stagehand/browser.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { verifyCommand } from '../../lib/cli/run-tools.ts';
import { manifestedEvidence } from '../../lib/runs/manifested-evidence.ts';
import { mergeRun } from '../../lib/runs/merge.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { Json } from '../../lib/store/ports.ts';

/**
 * Probes of issue 21 against the served runs API (loopback only): hostile CSV cells, evidence and the
 * report opened by a real browser, verify over everything the evidence store holds, ids and paths a
 * store cannot take, slow request bodies, and a bounded fuzz that must never see a 5xx.
 * Runs are planted straight into the stores the server reads, as an agent would leave them.
 */

const TENANT = 'local'; // the CLI's tenant too, so `browserfn verify --out` reads the same runs
let root: string;
let server: Awaited<ReturnType<typeof startServer>>;
let runStore: LocalRunStore;
let evidence: LocalEvidenceStore;
/** A loopback server every planted script calls back to: a request here means a script ran. */
let beacon: Server;
let beaconUrl: string;
const hits: string[] = [];
const saved: Record<string, string | undefined> = {};

const ONE_PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const HOSTILE_CELLS: Record<string, Json> = {
  formula: '=cmd|" /C calc"!A0',
  plus: '+1',
  minus: '-1',
  at: '@x',
  tab: '\tx',
  cr: '\rx',
  number: -5,
  plain: 'ok',
};

/** A finished run of two samples, merged and sealed, with a page-downloaded `evil.html`. */
async function plantRun(runId: string): Promise<void> {
  const now = new Date().toISOString();
  await runStore.createRun({
    tenant: TENANT,
    runId,
    status: 'running',
    spec: { goal: 'read the page' },
    sampleCount: 2,
    createdAt: now,
    updatedAt: now,
  });
  const urls = { s1: 'https://shop.test/1', s2: 'https://shop.test/2' };
  await runStore.putSamples(
    Object.entries(urls).map(([sampleId, url]) => ({
      tenant: TENANT,
      runId,
      sampleId,
      url,
      input: {},
      status: 'running' as const,
      attempts: 1,
      updatedAt: now,
    })),
  );
  const script = `<script>document.title='pwned';fetch('${beaconUrl}/script')</script>`;
  const files: [string, string, string | Uint8Array][] = [
    [
      's1',
      'evil.html',
      `<html><head><title>evil</title></head><body>${script}<img src="${beaconUrl}/img"></body></html>`,
    ],
    ['s1', '01_start.png', ONE_PIXEL_PNG],
    ['s1', 'action_log.json', '[]'],
    ['s2', '01_start.png', ONE_PIXEL_PNG],
  ];
  for (const [sampleId, name, body] of files)
    await manifestedEvidence(evidence, TENANT, runId, sampleId).put(
      sampleEvidenceKey(TENANT, runId, sampleId, name),
      body,
    );
  await runStore.putResult({
    tenant: TENANT,
    runId,
    sampleId: 's1',
    status: 'done',
    reason: 'read',
    data: HOSTILE_CELLS,
    usage: {},
    evidence: [],
    writtenAt: now,
  });
  await runStore.putResult({
    tenant: TENANT,
    runId,
    sampleId: 's2',
    status: 'done',
    reason: `</pre>${script}<img src=x onerror="fetch('${beaconUrl}/onerror')">`,
    data: { name: `${script}"><svg onload=fetch('${beaconUrl}/svg')>` },
    usage: {},
    evidence: [],
    writtenAt: now,
  });
  await mergeRun(runStore, evidence, TENANT, runId);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bfn-hardening-'));
  beacon = createServer((req, res) => {
    // A page that takes longer than the server's request timeout: what a handler does is not cut.
    if (req.url === '/slow') {
      setTimeout(() => res.end('<html><body><h1>Slow</h1><p>here</p></body></html>'), 2_500);
      return;
    }
    hits.push(req.url ?? '');
    res.end('ok');
  });
  await new Promise<void>((r) => beacon.listen(0, '127.0.0.1', () => r()));
  beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
  const env: Record<string, string> = {
    BROWSERFN_API_KEYS: `key-a:${TENANT},key-b:other`,
    BROWSERFN_RUNS_DIR: join(root, '.browserfn', 'runs'),
    BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
    BROWSERFN_REQUEST_TIMEOUT_MS: '1500',
    BROWSERFN_HEADERS_TIMEOUT_MS: '1000',
    BROWSERFN_ALLOW_HOSTS: new URL(beaconUrl).host,
  };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  runStore = new LocalRunStore(env.BROWSERFN_RUNS_DIR!);
  evidence = new LocalEvidenceStore(env.BROWSERFN_EVIDENCE_DIR!);
  server = await startServer({ port: 0, host: '127.0.0.1', cacheDir: join(root, 'cache'), print: () => {} });
  await plantRun('r-main');
}, 60_000);

afterAll(async () => {
  await server?.close();
  await closeGuardProxies();
  beacon?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(root, { recursive: true, force: true });
});

const get = (path: string, key = 'key-a') =>
  fetch(server.url + path, { headers: { authorization: `Bearer ${key}` }, redirect: 'manual' });

describe('spreadsheet-safe CSV (item 3)', () => {
  const rowOf = (csv: string) => {
    const [header, ...rows] = parseCsv(csv, { relax_column_count: true }) as string[][];
    const s1 = rows.find((r) => r[0] === 's1')!;
    return Object.fromEntries(header!.map((h, i) => [h, s1[i]]));
  };

  it('escapes formula-like cells in /results?format=csv and in combined.csv, keeps numbers', async () => {
    const served = await get('/v1/runs/r-main/results?format=csv');
    expect(served.status).toBe(200);
    const stored = await get('/v1/runs/r-main/evidence/combined.csv');
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
    const row = rowOf(await (await get('/v1/runs/r-main/results?format=csv&raw=true')).text());
    expect(row.formula).toBe(HOSTILE_CELLS.formula);
    expect(row.minus).toBe('-1');
    expect(row.cr).toBe('\rx');
    const bad = await get('/v1/runs/r-main/results?format=csv&raw=yes');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues[0]!.path).toBe(
      'raw',
    );
  });
});

describe('evidence served as data, the report under a real CSP (item 4)', () => {
  it('serves evidence with attachment, nosniff and a sandbox CSP; screenshots inline', async () => {
    const html = await get('/v1/runs/r-main/evidence/samples/s1/evil.html');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-disposition')).toBe('attachment; filename="evil.html"');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-security-policy')).toMatch(/^sandbox\b/);
    const png = await get('/v1/runs/r-main/evidence/samples/s1/01_start.png');
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('content-disposition')).toMatch(/^inline/);
    expect(png.headers.get('x-content-type-options')).toBe('nosniff');
    const report = await get('/v1/runs/r-main/report');
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
      await page.goto(`${server.url}/v1/runs/r-main/evidence/samples/s1/evil.html`).catch(() => undefined);
      await page.waitForLoadState('load').catch(() => undefined);
      expect(await page.title()).not.toBe('pwned');

      await page.goto(`${server.url}/v1/runs/r-main/report`);
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
      expect(hits).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});

/** The one-line verdict of `browserfn verify` on the planted run. */
async function verifyLine(runId: string, ...extra: string[]): Promise<{ code: number; line: string }> {
  const lines: string[] = [];
  const code = await verifyCommand([runId, '--out', root, ...extra], (l) => lines.push(l));
  return { code, line: lines.join('\n') };
}

describe('verify covers everything the evidence store holds (item 5)', () => {
  it('passes an untouched run, with its head', async () => {
    await plantRun('r-clean');
    const { code, line } = await verifyLine('r-clean');
    expect(line).toMatch(/^ok: \d+ evidence files match the manifest .*and the stored results match/);
    expect(code).toBe(0);
  });

  it('reports an added symlink, and the evidence route does not follow it', async () => {
    await plantRun('r-link');
    const dir = join(root, 'evidence', TENANT, 'run_r-link', 'samples', 's1');
    await symlink('/etc/hostname', join(dir, 'host.txt'));
    await symlink('/etc', join(dir, 'etcdir'));
    const { code, line } = await verifyLine('r-link');
    expect(code).toBe(1);
    expect(line).toMatch(/^TAMPERED: .*(host\.txt|etcdir).*not a regular file/);
    for (const path of ['samples/s1/host.txt', 'samples/s1/etcdir/hostname']) {
      const res = await get(`/v1/runs/r-link/evidence/${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain((await readFile('/etc/hostname', 'utf8')).trim() || '\u0000');
    }
  });

  it('reports an added .tmp file and a file in a dot folder', async () => {
    await plantRun('r-tmp');
    await writeFile(join(root, 'evidence', TENANT, 'run_r-tmp', 'samples', 's1', 'extra.png.123.tmp'), 'x');
    let v = await verifyLine('r-tmp');
    expect(v.code).toBe(1);
    expect(v.line).toMatch(/^TAMPERED: .*extra\.png\.123\.tmp.*file added/);
    await plantRun('r-dot');
    await mkdir(join(root, 'evidence', TENANT, 'run_r-dot', '.hidden'));
    await writeFile(join(root, 'evidence', TENANT, 'run_r-dot', '.hidden', 'payload.html'), 'x');
    v = await verifyLine('r-dot');
    expect(v.code).toBe(1);
    expect(v.line).toMatch(/^TAMPERED: .*\.hidden\/payload\.html.*file added/);
  });

  it('reports a stored result edited after the merge', async () => {
    await plantRun('r-edit');
    // An attacker with write access to the run store changes what /results and the report show.
    const file = await findFile(
      join(root, '.browserfn', 'runs'),
      (p, text) => p.includes('r-edit') && text.includes('"sampleId": "s1"') && text.includes('"data"'),
    );
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('"plain": "ok"', '"plain": "changed"'));
    const shown = (await (await get('/v1/runs/r-edit/results')).json()) as { results: { data: Json }[] };
    expect(JSON.stringify(shown.results)).toContain('changed');
    const { code, line } = await verifyLine('r-edit');
    expect(code).toBe(1);
    expect(line).toMatch(/^TAMPERED: .*stored result edited.*sample s1/);
  });

  it('checks against a head the caller kept outside both stores', async () => {
    await plantRun('r-head');
    const kept = (await runStore.getRun(TENANT, 'r-head'))!.manifestHead!;
    expect((await verifyLine('r-head', '--head', kept)).code).toBe(0);
    const other = (await verifyLine('r-head', '--head', 'f'.repeat(64))).line;
    expect(other).toMatch(/^TAMPERED: .*chain head differs/);
  });
});

/** The first file under `dir` whose path and text satisfy `match`. */
async function findFile(dir: string, match: (path: string, text: string) => boolean): Promise<string> {
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    if (match(p, await readFile(p, 'utf8'))) return p;
  }
  throw new Error(`no matching file under ${dir}`);
}

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
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(await issuePath(res), path).toBe('id');
    }
    const cancel = await fetch(`${server.url}/v1/runs/${id}/cancel`, {
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
      const res = await get(`/v1/runs/r-main/evidence/${path}`);
      expect(res.status, path).toBe(400);
      expect(await issuePath(res), path).toBe('path');
    }
  });

  it('refuses a 20,000-deep extract schema', async () => {
    const deep = `${'{"type":"object","properties":{"a":'.repeat(20_000)}{"type":"string"}${'}}'.repeat(20_000)}`;
    const res = await fetch(`${server.url}/v1/extract`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: `{"url":"${beaconUrl}/page","instruction":"read it","schema":${deep}}`,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/schema: nested deeper than 64 levels/);
  }, 30_000);
});

/** Sends `head` then `body` one byte every `gapMs`; resolves with what the server answered. */
function trickle(head: string, body: string, gapMs: number): Promise<{ answer: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(server.url);
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
  }, 60_000);

  it('answers 408 to headers that trickle in', async () => {
    const head = `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ${'y'.repeat(60)}\r\n\r\n`;
    const { answer, sent } = await trickle('', head, 250);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(sent).toBeLessThan(head.length);
  }, 60_000);
});

describe('what the timeouts leave alone (item 8)', () => {
  it('answers a call whose work takes longer than the request timeout, once its body was in', async () => {
    const res = await fetch(`${server.url}/v1/act`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${beaconUrl}/slow`, instruction: 'scroll down' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
  }, 60_000);
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
        await check(`${id}${sub}`, await get(`/v1/runs/${id}${sub}`));
      for (const path of paths) await check(`${id} ${path}`, await get(`/v1/runs/${id}/evidence/${path}`));
      for (const op of ['cancel', 'resume'])
        await check(
          `${op} ${id}`,
          await fetch(`${server.url}/v1/runs/${id}/${op}`, {
            method: 'POST',
            headers: { authorization: 'Bearer key-b' },
          }),
        );
    }
    for (const body of bodies)
      await check(
        `POST ${body.slice(0, 30)}`,
        await fetch(`${server.url}/v1/runs`, {
          method: 'POST',
          headers: { authorization: 'Bearer key-b', 'content-type': 'application/json' },
          body,
        }),
      );
    expect(calls).toBe(ids.length * (4 + paths.length + 2) + bodies.length);
    expect(failures).toEqual([]);
  }, 120_000);
});
