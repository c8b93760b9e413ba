/**
 * The served API of issue 21's probes (test/e2e/hardening-*.test.ts): `startServer` on loopback with
 * two keys, local stores in a temp folder that the test reads and tampers with directly, short request
 * timeouts, and a beacon server that any planted script would call back to (a request there means a
 * script ran). Runs are planted straight into the stores, as an agent and the merge leave them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../lib/api/serve.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { manifestedEvidence } from '../../lib/runs/manifested-evidence.ts';
import { mergeRun } from '../../lib/runs/merge.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { Json } from '../../lib/store/ports.ts';

/** The tenant of key-a; also the CLI's, so `browserfn verify --out <root>` reads the same runs. */
export const TENANT = 'local';

const ONE_PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
export const HOSTILE_CELLS: Record<string, Json> = {
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
async function plantRun(
  runStore: LocalRunStore,
  evidence: LocalEvidenceStore,
  beaconUrl: string,
  runId: string,
): Promise<void> {
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

export interface HardeningEnv {
  /** The folder holding `.browserfn/runs` and `evidence` (the CLI's `--out`). */
  root: string;
  url: string;
  runStore: LocalRunStore;
  beaconUrl: string;
  /** Paths the beacon was asked for (never `/slow`, the deliberately slow page). */
  hits: string[];
  /** A finished, merged run of two samples with hostile data and a page-downloaded `evil.html`. */
  plantRun(runId: string): Promise<void>;
  /** GET with a key, redirects not followed. */
  get(path: string, key?: string): Promise<Response>;
  close(): Promise<void>;
}

export async function startHardeningEnv(): Promise<HardeningEnv> {
  const root = await mkdtemp(join(tmpdir(), 'bfn-hardening-'));
  const hits: string[] = [];
  const beacon = createServer((req, res) => {
    // A page that takes longer than the server's request timeout: what a handler does is not cut.
    if (req.url === '/slow') {
      setTimeout(() => res.end('<html><body><h1>Slow</h1><p>here</p></body></html>'), 2_500);
      return;
    }
    hits.push(req.url ?? '');
    res.end('ok');
  });
  await new Promise<void>((r) => beacon.listen(0, '127.0.0.1', () => r()));
  const beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
  const env: Record<string, string> = {
    BROWSERFN_API_KEYS: `key-a:${TENANT},key-b:other`,
    BROWSERFN_RUNS_DIR: join(root, '.browserfn', 'runs'),
    BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
    BROWSERFN_REQUEST_TIMEOUT_MS: '1500',
    BROWSERFN_HEADERS_TIMEOUT_MS: '1000',
    BROWSERFN_ALLOW_HOSTS: new URL(beaconUrl).host,
  };
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  const runStore = new LocalRunStore(env.BROWSERFN_RUNS_DIR!);
  const evidence = new LocalEvidenceStore(env.BROWSERFN_EVIDENCE_DIR!);
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    cacheDir: join(root, 'cache'),
    print: () => {},
  });
  return {
    root,
    url: server.url,
    runStore,
    beaconUrl,
    hits,
    plantRun: (runId) => plantRun(runStore, evidence, beaconUrl, runId),
    get: (path, key = 'key-a') =>
      fetch(server.url + path, { headers: { authorization: `Bearer ${key}` }, redirect: 'manual' }),
    async close() {
      await server.close();
      await closeGuardProxies();
      beacon.close();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}
