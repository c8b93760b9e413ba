import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { openPage, startBrowser } from '../support/browser.ts';

/**
 * Issue 27, zero-token grounding: the page signals added this round, read through the real
 * snapshot in Chromium (roles, element paths, the text before a field), on small pages shaped
 * like the corpus pages where they decided. `pick` is the element (by its `data-t` mark, read
 * back through the snapshot's locator) the words clearly mean; `defer` says why none does.
 */
interface Row {
  what: string;
  html: string;
  instruction: string;
  pick?: string;
  defer?: string;
}

/**
 * A shop header's account drop-down (an ARIA menu) holds a copy of the page's login form; no
 * landmark says which part is the header (the page is all `<div>`s).
 */
const MENU_COPY = `
  <div class="header"><ul role="menubar"><li role="menuitem">Hello, Sign In
    <ul role="menu"><li role="menuitem"><form action="/login">
      <input name="email" type="email" placeholder="Email Address" aria-label="Email address">
      <input name="password" type="password" placeholder="Password">
      <button type="submit">Sign In</button></form></li></ul></li></ul></div>
  <div class="content"><h1>Welcome back!</h1><form id="login_form" action="/login">
    <p>Email Address</p><input name="email" type="email" data-t="email">
    <p>Password</p><input name="password" type="password" data-t="password">
    <button type="submit" class="form-submit" data-t="submit">Sign In</button></form></div>`;

/** Two copies named by their fields' ids: a pop-up one and the page's own. */
const POPUP_COPY = `
  <div><form><label for="login_popup1">Email</label><input id="login_popup1" name="user_login">
    <label for="psw_popup1">Password</label><input id="psw_popup1" name="password" type="password">
    <button>Sign in</button></form></div>
  <div><form><label for="login_main_login">Email</label>
    <input id="login_main_login" name="user_login" data-t="email">
    <label for="psw_main_login">Password</label>
    <input id="psw_main_login" name="password" type="password" data-t="password">
    <button data-t="submit">Sign in</button></form></div>`;

/** A table layout: the labels sit in the cells before text boxes the page turns into password boxes by script. */
const TABLE_LOGIN = `
  <form><table>
    <tr><td>Login ID Or Email:</td><td><input type="text" name="Customer_Login" data-t="email"></td></tr>
    <tr><td>Password:</td><td><input type="text" name="Customer_Password" data-t="password"></td></tr>
    <tr><td></td><td><input type="submit" value="Login" data-t="submit"></td></tr></table></form>
  <form><table><tr><td>My Email ID:</td><td><input type="text" name="Customer_Email_Login"></td></tr>
    <tr><td></td><td><input type="submit" value="Email me my Login ID"></td></tr></table></form>`;

/** A Chinese change-password form: the confirmation is read from the text before it. */
const CHINESE_CHANGE = `
  <form><p>当前密码</p><input type="password" name="p">
    <p>新密码</p><input type="password" name="new_p" data-t="new">
    <p>再次输入新密码（请不要复制粘贴。）</p><input type="password" name="new_p2" data-t="confirm">
    <button>提交</button></form>`;

const ROWS: Row[] = [
  {
    what: 'a login form inside a drop-down menu is a copy: the page’s own email',
    html: MENU_COPY,
    instruction: 'type "ada@example.com" into the email field',
    pick: 'email',
  },
  {
    what: 'a login form inside a drop-down menu is a copy: the page’s own password',
    html: MENU_COPY,
    instruction: 'type "pw" into the password field',
    pick: 'password',
  },
  {
    what: 'a login form inside a drop-down menu is a copy: the page’s own button',
    html: MENU_COPY,
    instruction: 'click the sign in button',
    pick: 'submit',
  },
  {
    what: 'fields named for a pop-up mark that form as the copy',
    html: POPUP_COPY,
    instruction: 'type "pw" into the password field',
    pick: 'password',
  },
  {
    what: 'fields named for a pop-up mark that form as the copy (its button)',
    html: POPUP_COPY,
    instruction: 'click the sign in button',
    pick: 'submit',
  },
  {
    what: 'a text box after the cell "Password:" is the password',
    html: TABLE_LOGIN,
    instruction: 'type "pw" into the password field',
    pick: 'password',
  },
  {
    what: 'with the password known, the field before it is the login email',
    html: TABLE_LOGIN,
    instruction: 'type "ada@example.com" into the email field',
    pick: 'email',
  },
  {
    what: '再次输入新密码 (enter the new password again) is the confirmation',
    html: CHINESE_CHANGE,
    instruction: 'type "pw" into the confirm password field',
    pick: 'confirm',
  },
  {
    what: '新密码 is the new password',
    html: CHINESE_CHANGE,
    instruction: 'type "pw" into the new password field',
    pick: 'new',
  },
  {
    what: 'a change form: "the password" may be the current or the new one',
    html: CHINESE_CHANGE,
    instruction: 'type "pw" into the password field',
    defer: 'current and new passwords both read as a password',
  },
];

let browser: Browser;
/** Per page: its snapshot and which snapshot id carries each `data-t` mark. */
const pages = new Map<string, { snap: Snapshot; marks: Map<string, number> }>();

beforeAll(async () => {
  browser = await startBrowser();
  for (const html of new Set(ROWS.map((r) => r.html))) {
    const { page, context } = await openPage(browser);
    await page.setContent(`<!doctype html><html lang="en"><body>${html}</body></html>`);
    const snap = await snapshot(page);
    const marks = new Map<string, number>();
    for (const el of snap.elements) {
      if (!el.interactive) continue;
      const mark = await page
        .locator(`xpath=${el.locator.xpath}`)
        .getAttribute('data-t')
        .catch(() => null);
      if (mark) marks.set(mark, el.id);
    }
    pages.set(html, { snap, marks });
    await context.close();
  }
});
afterAll(async () => {
  await browser?.close();
});

describe('zero-token grounding on real markup: which look-alike form or field is meant', () => {
  it.each(ROWS)('$what: $instruction', ({ html, instruction, pick, defer }) => {
    const { snap, marks } = pages.get(html)!;
    const d = matchInstruction(instruction, snap);
    if (defer) {
      expect(d.kind, JSON.stringify(d)).toBe('defer');
      return;
    }
    expect(d.kind, JSON.stringify(d)).toBe('action');
    if (d.kind === 'action') expect(d.elementId).toBe(marks.get(pick!));
  });
});
