import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { openPage, startBrowser } from '../support/browser.ts';

/**
 * Issue 27 item 3: every wrong action the zero-token matcher took on the real-page corpus (all
 * phrasings, `BENCH_VARIANTS=1 npm run bench:grounding`), as a small inline page of the same
 * shape, with what it must do instead. `pick` names the element the words clearly mean (role +
 * name, the nth of that pair when the page repeats it); `defer` says why no element clearly wins.
 */
interface Row {
  what: string;
  html: string;
  instruction: string;
  pick?: { role: string; name: string; nth?: number };
  defer?: string;
}

const LOGIN_AND_SIGNUP = (signupPassword: string) => `
  <h2>Sign in</h2>
  <form id="login"><label for="e">Email</label><input id="e" type="email">
    <label for="p">Password</label><input id="p" type="password"><button>Sign in</button></form>
  <h2>New here?</h2>
  <form id="join"><label for="ne">Email</label><input id="ne" type="email">
    <label for="np">${signupPassword}</label><input id="np" type="password">
    <label for="nc">Confirm password</label><input id="nc" type="password"><button>Create account</button></form>`;

/** A phone + PIN sign-in (no field reads as a password or e-mail) with a header link and a search form. */
const PHONE_PIN = `
  <header><a href="/sign-in">Sign In</a>
    <form id="search"><input type="text" name="q" placeholder="Search"><input type="submit"></form></header>
  <main><form id="signin">
    <label for="ph">Phone number</label><input id="ph" type="tel">
    <label for="pin">Account PIN</label><input id="pin" type="text" autocomplete="off" maxlength="4">
    <button type="submit" disabled>SIGN IN</button></form></main>`;

/** A shop's "New customers / Returning customers" page: a create-account box of the login form's shape. */
const NEW_OR_RETURNING = (signupIdentity: string) => `
  <h2>New Customers</h2>
  <form id="qac"><p>Create an account below to continue to checkout</p><ul>
    <li><label>${signupIdentity}</label> <input name="newid" type="text"></li>
    <li><label>Create Password</label> <input name="newpassword1" type="password"></li>
    <li><a href="#c">Continue</a></li></ul></form>
  <h2>Returning Customers</h2>
  <form id="login"><ul>
    <li><label>Email</label> <input name="email" type="text"></li>
    <li><label>Password</label> <input name="password" type="password"> <a href="#f">Forgot password?</a></li>
    <li><a href="#l">Login To Account</a></li></ul></form>`;

const ROWS: Row[] = [
  {
    what: 'a create-account box shaped like the login form (email, then one password): "the email" is either’s',
    html: NEW_OR_RETURNING('Enter Email Address'),
    instruction: 'type "ada@example.com" into the email field',
    defer: 'both forms ask for an email, then a password (corpus labels mark the create-account one)',
  },
  {
    what: 'the same page: "the password" is the create-account box’s only password as much as the login one',
    html: NEW_OR_RETURNING('Enter Email Address'),
    instruction: 'type %pw% into the password field',
    defer: 'a sign-up task says "the password field" of a box with one password too',
  },
  {
    what: 'the same page: "the username" — neither form says it, only their place does',
    html: NEW_OR_RETURNING('Enter Email Address'),
    instruction: 'type "ada" into the username field',
    defer: 'both identity fields sit just before their form’s password',
  },
  {
    what: 'when the create-account box asks for a phone number, "the email" is the login form’s',
    html: NEW_OR_RETURNING('Mobile number'),
    instruction: 'type "ada@example.com" into the email field',
    // Its labels are not tied to the inputs: all four are unnamed textboxes, the login Email the third.
    pick: { role: 'textbox', name: '', nth: 3 },
  },
  {
    what: 'sign-up page with a login box: both forms have a field that reads just "Password" (16 corpus pages)',
    html: LOGIN_AND_SIGNUP('Password'),
    instruction: 'type %pw% into the password field',
    defer: 'the sign-up password is new only by its place before "Confirm password"',
  },
  {
    what: 'the same page when the sign-up password says it is new: the login one is "the password"',
    html: LOGIN_AND_SIGNUP('Create password'),
    instruction: 'type %pw% into the password field',
    pick: { role: 'textbox', name: 'Password' },
  },
  {
    what: 'no login form decides: a header link and a disabled form button both say the words',
    html: PHONE_PIN,
    instruction: 'click log in',
    defer: 'link "Sign In" and button "SIGN IN" look alike; the disabled one is the form’s own',
  },
  {
    what: 'a search box’s unlabelled submit ("Submit") is not the submit of the form with the fields',
    html: PHONE_PIN,
    instruction: 'click the submit button',
    defer: 'the sign-in form has its own submit button',
  },
  {
    what: 'the Submit of the form with the fields, beside a search form, is still clicked',
    html: `<form id="search"><input type="text" name="q" placeholder="Search"><button>Go</button></form>
      <form><label for="m">Email</label><input id="m" type="email"><button type="submit">Submit</button></form>`,
    instruction: 'click the submit button',
    pick: { role: 'button', name: 'Submit' },
  },
];

let browser: Browser;
const snaps = new Map<string, Snapshot>();

beforeAll(async () => {
  browser = await startBrowser();
  for (const html of new Set(ROWS.map((r) => r.html))) {
    const { page, context } = await openPage(browser);
    await page.setContent(`<!doctype html><html lang="en"><body>${html}</body></html>`);
    snaps.set(html, await snapshot(page));
    await context.close();
  }
});
afterAll(async () => {
  await browser?.close();
});

describe('the corpus’s wrong actions, on small pages of the same shape', () => {
  it.each(ROWS)('$what: $instruction', ({ html, instruction, pick, defer }) => {
    const snap = snaps.get(html)!;
    const d = matchInstruction(instruction, snap);
    if (defer) {
      expect(d.kind, JSON.stringify(d)).toBe('defer');
      return;
    }
    expect(d.kind, JSON.stringify(d)).toBe('action');
    if (d.kind !== 'action' || !pick) return;
    const twins = snap.elements.filter((e) => e.role === pick.role && e.name === pick.name);
    expect(d.elementId).toBe(twins[(pick.nth ?? 1) - 1]?.id);
  });
});
