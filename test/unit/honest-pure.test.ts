import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUrl, isAllowedPage } from '../../lib/browser/guard.ts';
import { unreachableMessage } from '../../lib/browser/page-watch.ts';
import { pageArg } from '../../lib/cli/page-arg.ts';
import { NOTICE_AFTER_MS, noticeLine, startWaitNotice } from '../../lib/cli/wait-notice.ts';
import { assertKnownVariables } from '../../lib/ops/act.ts';
import { formOf, observeWithoutModel } from '../../lib/ops/observe-match.ts';
import type { Snapshot, SnapshotElement } from '../../lib/perception/types.ts';

type Spec = { role: string; name: string; xpath: string; interactive?: boolean };

function page(specs: Spec[]): Snapshot {
  const elements: SnapshotElement[] = specs.map((s, i) => ({
    id: i + 1,
    role: s.role,
    name: s.name,
    tag: 'x',
    frame: 0,
    locator: { xpath: s.xpath, role: s.role, name: s.name },
    inViewport: true,
    interactive: s.interactive ?? true,
    states: {},
  }));
  return {
    url: 'https://shop.test/',
    title: 't',
    tree: '',
    elements,
    urls: {},
    frames: [{ index: 0, url: 'https://shop.test/', xpath: '', offset: { x: 0, y: 0 } }],
    stats: {
      nodes: 0,
      elements: elements.length,
      interactive: elements.length,
      lines: 0,
      chars: 0,
      tokens: 0,
      ms: 0,
      omittedLines: 0,
      omittedInteractive: 0,
    },
    signature: 's',
    contentHash: 'h',
    confidence: 1,
  } as Snapshot;
}

// A sign-in form and a newsletter form on one page.
const TWO_FORMS = page([
  { role: 'link', name: 'Home', xpath: '/html/body/nav/a' },
  { role: 'textbox', name: 'Email', xpath: '/html/body/main/form[1]/input[1]' },
  { role: 'textbox', name: 'Password', xpath: '/html/body/main/form[1]/input[2]' },
  { role: 'button', name: 'Sign in', xpath: '/html/body/main/form[1]/button' },
  { role: 'textbox', name: 'Your email', xpath: '/html/body/footer/form[2]/input' },
  { role: 'checkbox', name: 'Weekly', xpath: '/html/body/footer/form[2]/label/input' },
  { role: 'button', name: 'Subscribe to the newsletter', xpath: '/html/body/footer/form[2]/button' },
]);

const names = (m: ReturnType<typeof observeWithoutModel>) =>
  m.kind === 'elements' ? m.picks.map((p) => p.element.name) : m.reason;

describe('observe without a model', () => {
  it('finds one element described the way act would find it', () => {
    expect(names(observeWithoutModel('the Sign in button', TWO_FORMS))).toEqual(['Sign in']);
    const typed = observeWithoutModel('type "a@b.c" into the Password field', TWO_FORMS);
    expect(typed.kind === 'elements' && typed.picks[0]).toMatchObject({ method: 'fill', args: ['a@b.c'] });
  });

  it('lists a kind of element, in the one form the words point to', () => {
    expect(names(observeWithoutModel('the sign-in form fields', TWO_FORMS))).toEqual(['Email', 'Password']);
    expect(names(observeWithoutModel('the newsletter fields', TWO_FORMS))).toEqual(['Your email', 'Weekly']);
    expect(names(observeWithoutModel('all buttons', TWO_FORMS))).toEqual([
      'Sign in',
      'Subscribe to the newsletter',
    ]);
    expect(names(observeWithoutModel('the links', TWO_FORMS))).toEqual(['Home']);
  });

  it('is unsure (never an empty list) when the words fit no form, tie, or nothing fits', () => {
    for (const text of ['the shipping form fields', 'the email fields', 'the cheapest product', 'the radios'])
      expect(observeWithoutModel(text, TWO_FORMS).kind, text).toBe('unsure');
  });

  it('knows the form of an element from its locator', () => {
    expect(formOf(TWO_FORMS.elements[1]!)).toBe('/html/body/main/form[1]');
    expect(formOf(TWO_FORMS.elements[0]!)).toBeUndefined();
  });
});

describe('unknown %variables%', () => {
  it('names every missing one and the known ones, and passes when all are there', () => {
    expect(() => assertKnownVariables('type %email% and %pin%', { email: 'x' })).toThrow(
      /%pin%.*variables\.pin.*known: email/,
    );
    expect(() => assertKnownVariables('type %email%', undefined)).toThrow(/%email%/);
    expect(() => assertKnownVariables('type %email% then 50% off', { email: 'x' })).not.toThrow();
  });
});

describe('unreachable pages, in words', () => {
  it('says what failed and keeps the browser code', () => {
    const url = 'http://a.invalid/';
    expect(unreachableMessage(url, 'net::ERR_NAME_NOT_RESOLVED')).toBe(
      `could not reach ${url}: the name does not resolve (DNS) (ERR_NAME_NOT_RESOLVED)`,
    );
    expect(unreachableMessage(url, 'net::ERR_SSL_PROTOCOL_ERROR')).toMatch(/TLS/);
    expect(unreachableMessage(url, 'net::ERR_CERT_AUTHORITY_INVALID')).toMatch(/TLS/);
    expect(unreachableMessage(url, 'net::ERR_CONNECTION_REFUSED')).toMatch(/nothing answered/);
    expect(unreachableMessage(url, 'net::ERR_TIMED_OUT')).toMatch(/timed out/);
  });
});

describe('the allow-list of exact pages', () => {
  const policy = { allowPrivate: false, allowHosts: [], allowUrls: ['http://127.0.0.1:8787/demo'] };
  it('opens that page (any query) and nothing else of its origin', async () => {
    expect(isAllowedPage(policy, new URL('http://127.0.0.1:8787/demo?x=1'))).toBe(true);
    for (const u of [
      'http://127.0.0.1:8787/demo/',
      'http://127.0.0.1:8787/demo/../v1/act',
      'http://127.0.0.1:8787/healthz',
      'http://127.0.0.1:8788/demo',
      'https://127.0.0.1:8787/demo',
      'http://localhost:8787/demo',
    ]) {
      const v = await checkUrl(u, policy, async () => ['127.0.0.1']);
      expect(v.ok, u).toBe(new URL(u).pathname === '/demo' && u.startsWith('http://127.0.0.1:8787'));
    }
  });
});

describe('CLI page argument', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bfn-page-arg-'));
    await writeFile(join(dir, 'p.html'), '<p>x</p>');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('takes web URLs, existing files by path or file:// URL, and nothing else', () => {
    expect(pageArg('https://shop.test/a')).toEqual({ url: 'https://shop.test/a' });
    const file = pathToFileURL(join(dir, 'p.html')).toString();
    expect(pageArg(join(dir, 'p.html'))).toEqual({ url: file, file });
    expect(pageArg(file)).toEqual({ url: file, file });
    expect(() => pageArg(join(dir, 'none.html'))).toThrow(/the file .*none\.html does not exist/);
    expect(() => pageArg(pathToFileURL(join(dir, 'none.html')).toString())).toThrow(/no such file/);
    expect(() => pageArg('ftp://shop.test/')).toThrow(/must be/);
    expect(() => pageArg(dir)).toThrow(/must be/);
    expect(() => pageArg(undefined)).toThrow(/missing <url>/);
  });
});

describe('wait notice', () => {
  it('shows nothing off a terminal, and on one says what it waits for after the delay', async () => {
    const written: string[] = [];
    const stopOff = startWaitNotice(
      { what: 'x' },
      { isTTY: false, write: (t) => written.push(t), afterMs: 1 },
    );
    await new Promise((r) => setTimeout(r, 20));
    stopOff();
    expect(written).toEqual([]);
    const waiting = { what: 'http://a.test/ to load' };
    const stop = startWaitNotice(waiting, {
      isTTY: true,
      write: (t) => written.push(t),
      afterMs: 5,
      everyMs: 5,
    });
    await new Promise((r) => setTimeout(r, 40));
    stop();
    expect(written[0]).toContain('waiting for http://a.test/ to load');
    expect(written.at(-1)).toBe('\r\x1b[K');
    expect(noticeLine('the model m to answer', 3400)).toBe(
      'browserfn: waiting for the model m to answer (3 s)…',
    );
    expect(NOTICE_AFTER_MS).toBe(2000);
    // Stopped before the delay: nothing at all.
    const quiet: string[] = [];
    startWaitNotice(waiting, { isTTY: true, write: (t) => quiet.push(t), afterMs: 1000 })();
    expect(quiet).toEqual([]);
  });
});
