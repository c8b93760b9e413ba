import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../../lib/browser/session.ts';
import { discover } from '../../lib/runs/discover/discover.ts';
import { readItemSource, writeItemSource } from '../../lib/runs/discover/item-source.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { sealManifest, verifyRun } from '../../lib/store/manifest-store.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { fixtureSession } from '../support/ops-env.ts';

let browser: Browser;
let site: FixtureServer;
let session: Session;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  session = await fixtureSession(browser, site, '/index.html');
});

afterAll(async () => {
  await session?.close();
  await browser?.close();
  await site?.close();
});

const deps = () => ({ page: session.page, checkNavigation: session.checkNavigation });
const itemsOnly = '*/products/item-*';

describe('discovery', () => {
  it('follows next links across pages, dedupes repeated and tracked links, and keeps only matching URLs', async () => {
    const result = await discover({ listings: [`${site.url}/listing.html`], include: itemsOnly }, deps());
    // 6 pages x 12 items, the first item of each page repeating the last of the one before.
    expect(result.urls).toHaveLength(72);
    expect(new Set(result.urls).size).toBe(72);
    expect(result.urls[0]).toBe(`${site.url}/products/item-1.html`);
    expect(result.urls.at(-1)).toBe(`${site.url}/products/item-72.html`);
    expect(result.urls.some((u) => u.includes('utm_'))).toBe(false);
    expect(result.listingPages).toBe(6);
    expect(result.linksSeen).toBeGreaterThan(72);
    expect(result.truncated).toBe(false);
    expect(result.tokens).toBe(0);
  });

  it('walks a numbered pager that has no next link', async () => {
    const result = await discover(
      { listings: [`${site.url}/listing.html?nonext=1&pages=4`], linkSelector: 'a.item' },
      deps(),
    );
    expect(result.urls).toHaveLength(48);
    expect(result.listingPages).toBe(4);
  });

  it('stops at the URL cap and says so', async () => {
    const result = await discover(
      { listings: [`${site.url}/listing.html`], include: itemsOnly, maxUrls: 30 },
      deps(),
    );
    expect(result.urls).toHaveLength(30);
    expect(result.truncated).toBe(true);
    expect(result.listingPages).toBe(3);
  });

  it('scrolls an infinite feed until it stops growing', async () => {
    const result = await discover({ listings: [`${site.url}/infinite.html`], include: itemsOnly }, deps());
    expect(result.urls).toHaveLength(100);
    expect(result.urls.at(-1)).toBe(`${site.url}/products/item-100.html`);
  });

  it('refuses listings the network guard blocks', async () => {
    await expect(discover({ listings: ['http://127.0.0.1:9/listing.html'] }, deps())).rejects.toThrow(
      /block/i,
    );
  });

  it('hands the URLs to the Map through the evidence store, not the state payload', async () => {
    const evidence = new LocalEvidenceStore(await mkdtemp(join(tmpdir(), 'bfn-disc-')));
    const result = await discover({ listings: [`${site.url}/listing.html`], include: itemsOnly }, deps());
    const written = await writeItemSource(evidence, 'tenant-a', 'run1', result.urls);
    expect(written.count).toBe(72);
    const items = await readItemSource(evidence, 'tenant-a', 'run1');
    expect(items.map((i) => i.url)).toEqual(result.urls);
    expect(items[71]?.sampleId).toBe('d000072');
    // The item source is evidence of the run: sealed into its manifest, it verifies.
    const sealed = await sealManifest(evidence, 'tenant-a', 'run1');
    expect(await verifyRun(evidence, 'tenant-a', 'run1', sealed.head)).toMatchObject({ ok: true, files: 1 });
  });
});
