/**
 * The workflow routes over real HTTP on a loopback port, on the local workflow store: save (version 1,
 * then the next version), every problem of a bad document named by alias and field, list, read,
 * versions, validate, export, and another key's workflow answering 404.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import { serveOnLoopback } from '../support/serve.ts';

let server: ServerType;
let base: string;

beforeAll(async () => {
  const store = new LocalWorkflowStore(await mkdtemp(join(tmpdir(), 'bfn-wf-api-')));
  const app = createApp({
    keys: new Map([
      ['key-a', 'tenant-a'],
      ['key-b', 'tenant-b'],
    ]),
    policy: { allowPrivate: false, allowHosts: [] },
    browser: async () => {
      throw new Error('these routes never open a browser');
    },
    workflows: store,
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
});
afterAll(() => new Promise<void>((r) => server?.close(() => r())));

const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const workflow = (heading: string) => ({
  name: 'Product page',
  version: 1,
  inputs: {},
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: 'https://shop.test/p/1' } },
    {
      alias: 'buy',
      type: 'browser_action',
      config: {
        action: 'click',
        target: {
          candidates: [{ kind: 'css', value: '#buy' }],
          instruction: heading,
        },
      },
    },
  ],
});

describe('/v1/workflows', () => {
  it('saves version 1, then version 2 of the same id, and lists and reads them', async () => {
    const first = await call('POST', '/v1/workflows', 'key-a', { workflow: workflow('the buy button') });
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ id: 'product-page', version: 1, verified: false });
    const second = await call('POST', '/v1/workflows', 'key-a', {
      id: 'product-page',
      workflow: workflow('the green buy button'),
    });
    expect(await second.json()).toMatchObject({ id: 'product-page', version: 2 });

    expect(await (await call('GET', '/v1/workflows', 'key-a')).json()).toEqual({
      workflows: [expect.objectContaining({ id: 'product-page', name: 'Product page', latest: 2 })],
    });
    const latest = await (await call('GET', '/v1/workflows/product-page', 'key-a')).json();
    expect(latest.workflow.nodes[1].config.target.instruction).toBe('the green buy button');
    const v1 = await (await call('GET', '/v1/workflows/product-page?version=1', 'key-a')).json();
    expect(v1.workflow.nodes[1].config.target.instruction).toBe('the buy button');
    const versions = await (await call('GET', '/v1/workflows/product-page/versions', 'key-a')).json();
    expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
  });

  it("answers 404 for another key's workflow and a missing version", async () => {
    await call('POST', '/v1/workflows', 'key-a', { id: 'secret-flow', workflow: workflow('x') });
    for (const path of ['/v1/workflows/secret-flow', '/v1/workflows/secret-flow/versions']) {
      const res = await call('GET', path, 'key-b');
      expect(res.status).toBe(404);
      expect((await res.json()).error.kind).toBe('not_found');
    }
    expect((await (await call('GET', '/v1/workflows', 'key-b')).json()).workflows).toEqual([]);
    expect((await call('GET', '/v1/workflows/secret-flow?version=9', 'key-a')).status).toBe(404);
    expect((await call('GET', '/v1/workflows/secret-flow?version=zero', 'key-a')).status).toBe(400);
  });

  it('refuses a bad document with every problem named by alias and field, and saves nothing', async () => {
    const bad = {
      name: 'Broken',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate' } },
        { alias: 'open', type: 'transform', config: { expression: 'x' } },
        { alias: 'Bad Alias', type: 'route', config: { branches: [] } },
      ],
    };
    const res = await call('POST', '/v1/workflows', 'key-a', { id: 'broken', workflow: bad });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.kind).toBe('invalid');
    const paths = body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([expect.stringMatching(/^workflow\.nodes\.0\.config\.url/)]),
    );
    expect(body.error.issues.length).toBeGreaterThanOrEqual(2);
    expect(body.error.issues.some((i: { alias?: string }) => i.alias === 'open')).toBe(true);
    expect((await call('GET', '/v1/workflows/broken', 'key-a')).status).toBe(404);

    const checked = await (await call('POST', '/v1/workflows/validate', 'key-a', bad)).json();
    expect(checked.ok).toBe(false);
    expect(checked.issues.length).toBe(body.error.issues.length);
    const good = await (await call('POST', '/v1/workflows/validate', 'key-a', workflow('ok'))).json();
    expect(good).toMatchObject({ ok: true, workflow: { name: 'Product page' } });
    const badId = await call('POST', '/v1/workflows', 'key-a', { id: '../up', workflow: workflow('x') });
    expect(badId.status).toBe(400);
    expect((await badId.json()).error.message).toMatch(/^id:/);
  });

  it('exports a saved version as a playwright-core script and documents the routes', async () => {
    await call('POST', '/v1/workflows', 'key-a', { id: 'exportable', workflow: workflow('the buy button') });
    const res = await call('GET', '/v1/workflows/exportable/export', 'key-a');
    expect(res.status).toBe(200);
    const script = await res.text();
    expect(script).toContain('playwright-core');
    expect(script).toContain('#buy');
    const spec = await (await fetch(`${base}/openapi.json`)).json();
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(['/v1/workflows', '/v1/workflows/{id}', '/v1/workflows/{id}/versions']),
    );
  });
});
