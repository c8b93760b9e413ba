import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../lib/api/serve.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

/** Tenant names that used to collapse onto one cache directory, or climb out of it. */
const TENANTS = ['a/b', 'a_b', 'a b', '..', '.'];

let site: FixtureServer;
let root: string;
let server: Awaited<ReturnType<typeof startServer>>;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  site = await startFixtureServer();
  root = await mkdtemp(join(tmpdir(), 'bfn-tenants-'));
  // The served cache lives one level down, so a tenant that climbs would show up in `root`.
  await mkdir(join(root, 'srv', 'cache'), { recursive: true });
  for (const k of [
    'BROWSERFN_API_KEYS',
    'BROWSERFN_ALLOW_HOSTS',
    'BROWSERFN_MODEL',
    'BROWSERFN_MAX_CALLS_PER_KEY',
  ])
    saved[k] = process.env[k];
  // The burst below is one key's 20 calls at once: its share is raised to let them all in.
  process.env.BROWSERFN_MAX_CALLS_PER_KEY = '20';
  process.env.BROWSERFN_API_KEYS = TENANTS.map((t, i) => `key${i}:${t}`).join(',');
  process.env.BROWSERFN_ALLOW_HOSTS = `127.0.0.1:${site.port}`;
  delete process.env.BROWSERFN_MODEL;
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    cacheDir: join(root, 'srv', 'cache'),
    print: () => {},
  });
});
afterAll(async () => {
  await server?.close();
  await closeGuardProxies();
  await site?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(root, { recursive: true, force: true });
});

const act = async (key: string, instruction = 'click the Sign in button') => {
  const res = await fetch(`${server.url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ url: `${site.url}/login.html`, instruction }),
  });
  return { status: res.status, json: (await res.json()) as { success?: boolean; cache?: string } };
};

describe('tenants and the action cache, through the served API', () => {
  it('gives look-alike tenants caches of their own, all inside the cache directory', async () => {
    const seen: string[] = [];
    for (let i = 0; i < TENANTS.length; i++) {
      const first = await act(`key${i}`);
      expect(first.status, TENANTS[i]).toBe(200);
      expect(first.json.success).toBe(true);
      // A tenant that shared another's cache would hit on its first call.
      seen.push(`${TENANTS[i]}:${first.json.cache}`);
    }
    expect(seen).toEqual(TENANTS.map((t) => `${t}:miss`));
    const again = await act('key0');
    expect(again.json.cache).toBe('hit');
    expect(await readdir(root)).toEqual(['srv']);
    expect(await readdir(join(root, 'srv'))).toEqual(['cache']);
    expect((await readdir(join(root, 'srv', 'cache'))).sort()).toEqual(
      ['a~2Fb', 'a_b', 'a~20b', '~2E~2E', '~2E'].sort(),
    );
  });

  it('answers 20 concurrent acts on one cached instruction without a 5xx', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => act('key1', 'click the Forgot password link')),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(results.every((r) => r.json.success === true)).toBe(true);
  });
});
