/**
 * Reading a workflow's pages without a browser, with no Chromium: the extractor on served HTML
 * parsed in Node, the guarded HTTP fetch (default policy, redirects, a name that resolves to
 * loopback only when the proxy connects, limits), and the static replay's right-or-nothing rules.
 * The shop is on loopback: each test that fetches allows its port explicitly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, type GuardPolicy } from '../../lib/browser/guard-policy.ts';
import { startGuardProxy } from '../../lib/browser/guard-proxy.ts';
import { closeStaticAgents, fetchHtml } from '../../lib/browser/static-fetch.ts';
import { parsePlan } from '../../lib/workflows/director.ts';
import { applyHeals } from '../../lib/workflows/heal.ts';
import { type Workflow, WorkflowSchema } from '../../lib/workflows/schema.ts';
import { parsePage, readPage, staticMiss } from '../../lib/workflows/static-html.ts';
import { replayStatic, StaticGate, staticShape } from '../../lib/workflows/static-read.ts';
import { type StaticShop, shopProduct, startStaticShop } from '../support/static-shop.ts';

let shop: StaticShop;
let allowed: GuardPolicy;
beforeAll(async () => {
  shop = await startStaticShop();
  allowed = { allowPrivate: false, allowHosts: [`127.0.0.1:${shop.port}`] };
});
afterAll(async () => {
  await closeStaticAgents();
  await shop?.close();
});

const EXTRACTOR = {
  fields: {
    name: { selector: 'h1.name', type: 'string' as const },
    price: { selector: 'p.price', type: 'number' as const },
    sku: { selector: 'span.sku', type: 'string' as const },
    inStock: { selector: 'p.stock', type: 'boolean' as const },
    // Written as Chromium's tree has it: the parser must add the <tbody> the HTML leaves out.
    wood: { selector: 'table.specs > tbody > tr > td.wood', type: 'string' as const },
  },
};

const workflow = (verified = true, enabled = true): Workflow =>
  WorkflowSchema.parse({
    name: 'read a chair',
    inputs: { url: { type: 'string', default: `${shop.url}/p/1` } },
    nodes: [
      { alias: 'open_page', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
      {
        alias: 'data',
        type: 'browser_query',
        config: { method: 'extract', extractor: EXTRACTOR, instruction: 'the chair', store_variable: true },
      },
    ],
    staticRead: { verified, enabled },
  });

const init = (id: number) => ({
  tenant: 't',
  runId: 'r',
  sampleId: `p${id}`,
  inputs: {},
  url: `${shop.url}/p/${id}`,
});
const want = (id: number) => ({ ...shopProduct(id), wood: 'Walnut' });

describe('served HTML read in Node', () => {
  it('reads every field of a server-rendered page as the extractor types it, through an implied <tbody>', async () => {
    const got = await fetchHtml(`${shop.url}/p/4`, { policy: allowed });
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    const page = parsePage(got.body, got.url, got.contentType);
    expect(staticMiss(page, EXTRACTOR)).toBeUndefined();
    expect(readPage(page, EXTRACTOR)).toEqual(want(4));
  });

  it('reads a list by its repeating item, links made absolute against <base href>', () => {
    const html = `<!doctype html><html><head><base href="https://shop.example/c/"></head><body>
<ul class="list"><li class="card"><a href="chair-1">Chair <b>one</b></a><script>var x=1</script></li>
<li class="card"><a href="/chair-2">Chair two</a><span hidden>secret draft</span></li></ul></body></html>`;
    const page = parsePage(Buffer.from(html), 'http://other.example/');
    const extractor = {
      item: 'ul.list > li.card',
      list: 'chairs',
      fields: {
        name: { selector: 'a', type: 'string' as const },
        link: { selector: 'a', attr: 'href', type: 'string' as const },
        all: { selector: ':scope', type: 'string' as const },
      },
    };
    expect(readPage(page, extractor)).toEqual({
      chairs: [
        { name: 'Chair one', link: 'https://shop.example/c/chair-1', all: 'Chair one' },
        { name: 'Chair two', link: 'https://shop.example/chair-2', all: 'Chair two' },
      ],
    });
  });

  it('calls a page whose slots script fills in a miss, naming the empty field', async () => {
    shop.setMode('script');
    try {
      const got = await fetchHtml(`${shop.url}/p/4`, { policy: allowed });
      if (!got.ok) throw new Error(got.reason);
      expect(staticMiss(parsePage(got.body, got.url), EXTRACTOR)).toBe('name is empty in the served HTML');
    } finally {
      shop.setMode('ssr');
    }
  });
});

describe('the guarded fetch', () => {
  it('refuses a loopback page under the default policy, and sends it nothing', async () => {
    const before = shop.hits.length;
    const got = await fetchHtml(`${shop.url}/p/1`, { policy: DEFAULT_POLICY });
    expect(got).toMatchObject({ ok: false, kind: 'blocked' });
    expect(shop.hits.length).toBe(before);
  });

  it('refuses a redirect to an address the policy does not open (the allowed page redirects to another port)', async () => {
    const got = await fetchHtml(`${shop.url}/redirect?to=${encodeURIComponent('http://127.0.0.1:9/p/1')}`, {
      policy: allowed,
    });
    expect(got).toMatchObject({ ok: false, kind: 'blocked' });
    // A redirect within what is allowed is followed to the page.
    const ok = await fetchHtml(`${shop.url}/redirect?to=/p/2`, { policy: allowed });
    expect(ok).toMatchObject({ ok: true, url: `${shop.url}/p/2` });
  });

  it('refuses a name that resolves to loopback only when the proxy connects (no check-then-connect gap)', async () => {
    // The pre-check cannot resolve the name (so it lets it pass, as the browser would fail on its
    // own); the proxy resolves it itself, to loopback, and refuses the address it would connect to.
    const proxy = await startGuardProxy(DEFAULT_POLICY, async () => ['127.0.0.1']);
    try {
      const before = shop.hits.length;
      const got = await fetchHtml(`http://rebind.invalid:${shop.port}/p/1`, {
        policy: DEFAULT_POLICY,
        proxy,
      });
      expect(got).toMatchObject({ ok: false, kind: 'blocked' });
      expect(shop.hits.length).toBe(before);
    } finally {
      await proxy.close();
    }
  });

  it('unpacks a gzipped page, and stops unpacking one that grows past the size limit', async () => {
    const got = await fetchHtml(`${shop.url}/gz`, { policy: allowed });
    if (!got.ok) throw new Error(got.reason);
    expect(readPage(parsePage(got.body, got.url), EXTRACTOR)).toEqual(want(3));
    expect(await fetchHtml(`${shop.url}/bomb`, { policy: allowed, maxBytes: 100_000 })).toMatchObject({
      ok: false,
      kind: 'limit',
    });
  });

  it('takes only a 2xx HTML page within the size and time limits', async () => {
    expect(await fetchHtml(`${shop.url}/nowhere`, { policy: allowed })).toMatchObject({
      ok: false,
      kind: 'http',
      status: 404,
    });
    expect(await fetchHtml(`${shop.url}/json`, { policy: allowed })).toMatchObject({
      ok: false,
      kind: 'http',
      status: 200,
    });
    expect(await fetchHtml(`${shop.url}/big`, { policy: allowed, maxBytes: 100_000 })).toMatchObject({
      ok: false,
      kind: 'limit',
    });
    expect(await fetchHtml(`${shop.url}/slow`, { policy: allowed, timeoutMs: 500 })).toMatchObject({
      ok: false,
      kind: 'limit',
    });
  });
});

describe('static replay, right or nothing', () => {
  it('replays a marked workflow from the served HTML: every node resolved by static-html, the data right', async () => {
    const got = await replayStatic(workflow(), init(5), { policy: allowed });
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    expect(got.state.status).toBe('done');
    expect(got.state.data).toEqual({ data: want(5) });
    expect(Object.values(got.state.results).map((r) => r.resolvedBy)).toEqual(['static-html', 'static-html']);
  });

  it('gives the page back to the browser when a field is empty, when unmarked or switched off, and when the run signs in', async () => {
    shop.setMode('script');
    try {
      const miss = await replayStatic(workflow(), init(5), { policy: allowed });
      expect(miss).toEqual({ ok: false, reason: expect.stringContaining('data: name is empty') });
    } finally {
      shop.setMode('ssr');
    }
    const before = shop.hits.length;
    for (const [wf, opts] of [
      [workflow(false), {}],
      [workflow(true, false), {}],
      [workflow(), { authenticated: true }],
    ] as const) {
      const got = await replayStatic(wf, init(5), { policy: allowed, ...opts });
      expect(got.ok).toBe(false);
    }
    expect(shop.hits.length).toBe(before);
  });

  it('keeps a secret out of the reason it reports', async () => {
    const got = await replayStatic(
      workflow(),
      { ...init(5), url: `${shop.url}/nowhere?token=s3cr3t-value` },
      {
        policy: allowed,
        variables: { token: 's3cr3t-value' },
      },
    );
    expect(got.ok).toBe(false);
    if (got.ok) return;
    expect(got.reason).not.toContain('s3cr3t-value');
    expect(got.reason).toContain('%token%');
  });

  it('runs the transforms after the reads too: they only reshape the data, so no page is needed for them', async () => {
    const base = workflow();
    const withTransform = (expression: string) =>
      WorkflowSchema.parse({
        ...base,
        nodes: [
          ...base.nodes,
          { alias: 'summary', type: 'transform', config: { expression, store_variable: true } },
        ],
      });
    const wf = withTransform('{ "label": $uppercase(data.name), "cheap": data.price < 45 }');
    const got = await replayStatic(wf, init(3), { policy: allowed });
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    expect(got.state.data).toEqual({ data: want(3), summary: { label: 'WALNUT CHAIR 3', cheap: true } });
    expect(got.state.results.summary?.resolvedBy).toBe('deterministic');
    expect(got.state.steps).toBe(3);
    // A transform that fails is not data: the page goes to the browser, which says why.
    const broken = await replayStatic(withTransform('$nosuchfunction(data.name)'), init(3), {
      policy: allowed,
    });
    expect(broken).toEqual({ ok: false, reason: expect.stringContaining('summary:') });
    // Transforms alone read nothing.
    const only = { ...base, nodes: [base.nodes[0]!, wf.nodes[2]!] } as Workflow;
    expect(staticShape(only)).toEqual({ ok: false, reason: 'it reads nothing' });
  });

  it('only "open a page, read it by CSS" qualifies', () => {
    const wf = workflow();
    expect(staticShape(wf).ok).toBe(true);
    const withClick = {
      ...wf,
      nodes: [
        ...wf.nodes,
        {
          alias: 'buy',
          description: '',
          type: 'browser_ai_action',
          config: { action: 'act', instruction: 'buy' },
        },
      ],
    } as unknown as Workflow;
    expect(staticShape(withClick)).toEqual({
      ok: false,
      reason: expect.stringContaining('buy (browser_ai_action) needs the browser'),
    });
  });

  it('the gate re-checks the first static page and one in N after it, and closes on a difference', () => {
    const gate = new StaticGate(3);
    expect([1, 2, 3, 4, 5, 6, 7].map(() => gate.recheckNow())).toEqual([
      true,
      false,
      false,
      true,
      false,
      false,
      true,
    ]);
    expect(gate.compare('p1', { a: 1 }, { a: 1 })).toBe(true);
    expect(gate.off).toBeUndefined();
    expect(gate.compare('p4', { a: 1 }, { a: 2 })).toBe(false);
    expect(gate.off).toContain('p4');
  });

  it('a healed extractor un-marks the version: the check was of the old selectors', () => {
    const healed = applyHeals(workflow(), [
      {
        alias: 'data',
        path: 'nodes.1',
        url: `${shop.url}/p/1`,
        old: [],
        new: [],
        via: 'llm',
        reason: 'moved',
        confirmed: true,
        extractor: { fields: { name: { selector: 'h1', type: 'string' } } },
      },
    ]);
    expect(healed?.staticRead).toMatchObject({
      verified: false,
      enabled: true,
      reason: expect.stringContaining('healed'),
    });
  });

  it('a model cannot mark its plan readable without a browser: only the compile check does', () => {
    const r = parsePlan(JSON.parse(JSON.stringify(workflow())));
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.workflow.staticRead).toBeUndefined();
  });
});
