import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { GROUND_CASES } from '../cases/grounding-cases.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let browser: Browser;
let site: FixtureServer;
const snaps = new Map<string, Snapshot>();

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  for (const path of new Set(GROUND_CASES.map((c) => c.page))) {
    const { page, context } = await openPage(browser, site.url + path);
    snaps.set(path, await snapshot(page));
    await context.close();
  }
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

describe('grounding on sign-in and sign-up fixture pages', () => {
  it('exposes the control facts the matcher grounds on', () => {
    const snap = snaps.get('/ground-login.html')!;
    const fields = snap.elements.filter((e) => e.facts?.attrs?.includes('login_name'));
    expect(fields).toHaveLength(2);
    // The off-screen twin is concealed, the real one is not; both say what the page declares.
    expect(fields.map((f) => f.facts?.concealed ?? false)).toEqual([true, false]);
    expect(fields[1]!.facts).toMatchObject({ autocomplete: 'username', nearby: 'Your account' });
    const login = fields[1]!.facts!.form;
    const newsletter = snap.elements.find((e) => e.name === 'Email')!.facts!.form;
    expect(login).toBeGreaterThan(0);
    expect(newsletter).not.toBe(login);
    // Matching facts stay out of what the model reads.
    expect(snap.tree).not.toContain('login_name');
  });

  it.each(GROUND_CASES)('$page: $instruction', ({ page, instruction, pick, defer }) => {
    const snap = snaps.get(page)!;
    const d = matchInstruction(instruction, snap);
    if (defer) {
      expect(d.kind, JSON.stringify(d)).toBe('defer');
      return;
    }
    expect(d.kind, JSON.stringify(d.kind === 'defer' ? d : {})).toBe('action');
    if (d.kind !== 'action' || !pick) return;
    const el = snap.elements.find((e) => e.id === d.elementId)!;
    expect(d.action.method).toBe(pick.method);
    expect(el.role).toBe(pick.role);
    expect(el.name).toBe(pick.name);
    if (pick.attrs) expect(el.facts?.attrs).toContain(pick.attrs);
    expect(el.facts?.concealed).toBeUndefined();
    expect(d.reason.length).toBeGreaterThan(5);
  });
});
