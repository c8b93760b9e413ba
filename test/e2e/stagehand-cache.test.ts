import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stagehand } from '@browserbasehq/stagehand';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTenantCaches } from '../../lib/api/tenant-caches.ts';
import { type StagehandEnv, sdkFor, startStagehandEnv } from '../support/stagehand-env.ts';

/** The SDK's server cache switch (`serverCache`) against browserfn's action cache. */

let env: StagehandEnv;
let sh: Stagehand;
let cacheRoot: string;

beforeAll(async () => {
  cacheRoot = await mkdtemp(join(tmpdir(), 'bfn-sh-cache-'));
  env = await startStagehandEnv({ cacheFor: localTenantCaches(cacheRoot) });
  sh = sdkFor('key-a');
  await sh.init();
});

afterAll(async () => {
  await sh?.close();
  await env?.close();
  await rm(cacheRoot, { recursive: true, force: true });
});

const TYPE_EMAIL = 'type "ada@acme.test" into the Email field';

async function freshForm() {
  const page = sh.context.pages()[0]!;
  await page.goto(`${env.site.url}/login.html`);
  return page;
}
const emailValue = (page: Awaited<ReturnType<typeof freshForm>>) =>
  page.evaluate(() => (document.getElementById('email') as HTMLInputElement).value);

/** How browserfn resolved each act of the session, from its replay (what `metrics` reads). */
async function resolvedBy(): Promise<string[]> {
  const res = await env.call(`/v1/sessions/${sh.browserbaseSessionID}/replay`, 'key-a');
  const body = (await res.json()) as {
    data: { pages: { actions: { method: string; result: { resolvedBy?: string } }[] }[] };
  };
  return body.data.pages
    .flatMap((p) => p.actions)
    .filter((a) => a.method === 'act')
    .map((a) => a.result.resolvedBy ?? '');
}

describe('Stagehand server cache on browserfn', () => {
  it('reports MISS, then HIT for the same instruction on the same kind of page, and the HIT still acts', async () => {
    let page = await freshForm();
    const first = await sh.act(TYPE_EMAIL);
    expect(first.success).toBe(true);
    expect(first.cacheStatus).toBe('MISS');
    page = await freshForm();
    const second = await sh.act(TYPE_EMAIL);
    expect(second.success).toBe(true);
    expect(second.cacheStatus).toBe('HIT');
    expect(await emailValue(page)).toBe('ada@acme.test');
    expect(await resolvedBy()).toEqual(['matcher', 'cache']);
  });

  it('serverCache: false on the call resolves afresh, and the SDK shows no cache status', async () => {
    const page = await freshForm();
    const result = await sh.act(TYPE_EMAIL, { serverCache: false });
    expect(result.success).toBe(true);
    expect(result.cacheStatus).toBeUndefined();
    expect(await emailValue(page)).toBe('ada@acme.test');
    expect((await resolvedBy()).at(-1)).toBe('matcher');
  });
});
