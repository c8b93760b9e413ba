import { describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import type { ElementFacts, Snapshot } from '../../lib/perception/types.ts';
import { type ControlSpec, formPage } from '../support/snapshots.ts';

/**
 * Issue 27, zero-token grounding: the signals that say which of a page's look-alike forms or
 * fields a sign-in task means (a drop-down copy of the login form, a password box saved as text,
 * `autocomplete="new-password"` on every field, a help icon beside the password), each as a
 * minimised synthetic snapshot of the corpus pages where it decided (see README bench:grounding).
 */
type Spec = ControlSpec;

const page = (specs: Spec[]): Snapshot => formPage(specs);

const field =
  (inputType: string) =>
  (name: string, form: number, f: ElementFacts = {}, more: Partial<Spec> = {}): Spec => ({
    role: 'textbox',
    name,
    inputType,
    form,
    f,
    ...more,
  });
const text = field('text');
const pw = field('password');
const button = (name: string, form?: number, f: ElementFacts = {}): Spec => ({
  role: 'button',
  name,
  ...(form ? { form, f } : {}),
});
const at = (xpath: string): Partial<Spec> => ({ locator: { xpath, role: 'textbox', name: '' } });

const picked = (snap: Snapshot, instruction: string) => {
  const d = matchInstruction(instruction, snap);
  return d.kind === 'action' ? d.elementId : `defer: ${d.reason}`;
};

describe('a login form copied into a drop-down, a pop-up or the header', () => {
  /** The header's account menu holds a copy of the login form; the page's own is in its body. */
  const inMenu = () =>
    page([
      {
        role: 'menuitem',
        name: 'Hello, Sign In',
        interactive: false,
        locator: { xpath: '/html/body/div[1]/ul/li', role: 'menuitem', name: '' },
      },
      text('Email address', 1, { attrs: 'email' }, at('/html/body/div[1]/ul/li/div/form/input[1]')),
      pw('Password', 1, { attrs: 'password' }, at('/html/body/div[1]/ul/li/div/form/input[2]')),
      button('Sign In', 1, { form: 1, submit: true }),
      text('', 2, { attrs: 'email', nearby: 'Email Address' }, at('/html/body/div[2]/form/input[1]')),
      pw('', 2, { attrs: 'password', nearby: 'Password' }, at('/html/body/div[2]/form/input[2]')),
      button('Sign In', 2, { form: 2, submit: true }),
    ]);
  it('a form inside a menu item is the drop-down’s; the page’s own form is the one meant', () => {
    const snap = inMenu();
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(5);
    expect(picked(snap, 'type "pw" into the password field')).toBe(6);
    expect(picked(snap, 'click the sign in button')).toBe(7);
  });

  const byAttrs = (first: string, second: string, dialog = false) =>
    page([
      text('Email or User ID', 1, { attrs: `userid login${first}Field` }),
      pw('Password', 1, { attrs: `password password${first}Field` }, dialog ? { dialog: 1 } : {}),
      button('Sign In to My Account', 1, { form: 1 }),
      text('Email or User ID', 2, { attrs: `userid login${second}Field` }),
      pw('Password', 2, { attrs: `password password${second}Field` }),
      button('Sign In', 2, { form: 2 }),
    ]);
  it('fields named for a drop-down or a pop-up ("passwordDropdownField") mark the copy', () => {
    const snap = byAttrs('Dropdown', '');
    expect(picked(snap, 'type "ada" into the username field')).toBe(4);
    expect(picked(snap, 'type "pw" into the password field')).toBe(5);
    expect(picked(snap, 'click the sign in button')).toBe(6);
    expect(picked(byAttrs('', 'Popup'), 'type "pw" into the password field')).toBe(2);
  });
  it('both marked, or one shown in an open dialog: which one is meant is not said', () => {
    expect(picked(byAttrs('Popup', 'Header'), 'type "pw" into the password field')).toMatch(
      /^defer: 2 login/,
    );
    expect(picked(byAttrs('Header', '', true), 'type "pw" into the password field')).toMatch(
      /^defer: 2 login/,
    );
  });
});

describe('a password box the page saved as a text box', () => {
  /** "Login ID Or Email:" / "Password:" in table cells before two text boxes; forgotten-ID forms below. */
  const tableForm = (before: string) =>
    page([
      text('', 1, { attrs: 'Search' }),
      text('', 2, { nearby: 'Login ID Or Email:', attrs: 'Customer_Login' }),
      text('', 2, { nearby: before, attrs: 'Customer_Secret' }),
      button('Login', 2, { form: 2, submit: true }),
      text('', 3, { nearby: 'My Email ID:', attrs: 'Customer_Email_Login' }),
      button('Email me my Login ID', 3, { form: 3, submit: true }),
    ]);
  it('a nameless text box read by "Password:" before it is the password', () => {
    const snap = tableForm('Password:');
    expect(picked(snap, 'type "pw" into the password field')).toBe(3);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(2);
    expect(picked(snap, 'click the log in button')).toBe(4);
  });
  it('"Password hint:" before it is no password', () => {
    expect(picked(tableForm('Password hint:'), 'type "pw" into the password field')).toMatch(/^defer/);
  });
});

describe('a change-password page with autocomplete="new-password" on every field', () => {
  const change = () =>
    page([
      text('Enter your first name', 1, { autocomplete: 'new-password' }),
      text('Choose an account name', 1, { autocomplete: 'new-password' }),
      pw('', 2, { nearby: 'Current password', autocomplete: 'new-password' }, { dialog: 1 }),
      pw('', 3, { nearby: 'New password', autocomplete: 'new-password' }, { dialog: 1 }),
      pw('', 3, { nearby: 'Confirm the new password', autocomplete: 'new-password' }, { dialog: 1 }),
    ]);
  it('a text field whose words name something else is no password: the new password is found', () => {
    expect(picked(change(), 'type "pw" into the new password field')).toBe(4);
    expect(picked(change(), 'type "pw" into the confirm password field')).toBe(5);
  });
  it('a current password right before a new one is a change form’s, not a login: "the password" defers', () => {
    // Each field in a group of its own: the current one alone would read as a login form.
    const groups = page([
      pw('', 1, { nearby: 'Current password' }),
      pw('', 2, { nearby: 'New password' }),
      pw('', 3, { nearby: 'Confirm the new password' }),
    ]);
    expect(picked(groups, 'type "pw" into the password field')).toMatch(/^defer/);
    expect(picked(change(), 'type "pw" into the password field')).toMatch(/^defer/);
  });
});

describe('look-alikes are judged by all a user reads', () => {
  it('two passwords with one description as their name differ by their placeholders', () => {
    const hint = 'The password must be between 8 and 64 characters.';
    const snap = page([
      text('Email Address', 1, { attrs: 'email' }),
      pw(hint, 2, { attrs: 'newPassword' }, { placeholder: 'New Password' }),
      pw(hint, 2, { attrs: 'reenterPassword' }, { placeholder: 'Confirm New Password' }),
      text('First Name', 2, { attrs: 'givenName' }),
      button('Create', 2, { form: 2, submit: true }),
    ]);
    expect(picked(snap, 'type "pw" into the new password field')).toBe(2);
    expect(picked(snap, 'type "pw" into the confirm password field')).toBe(3);
  });
});

describe('a help icon beside the password', () => {
  it('is not the login form’s button: its Sign In after it is', () => {
    const snap = page([
      text('Email or User ID', 1, { attrs: 'userid' }),
      pw('Password', 1, { attrs: 'password' }),
      button('Help', 1, { form: 1 }),
      button('Sign In', 1, { form: 1 }),
    ]);
    expect(picked(snap, 'click the sign in button')).toBe(4);
  });
});

describe('Chinese and Japanese words, written without spaces', () => {
  it('"再次输入新密码" (enter the new password again) is the confirmation; the one before it the new one', () => {
    const snap = page([
      pw('', 1, { attrs: 'p', nearby: '当前密码' }),
      pw('', 1, { attrs: 'new_p' }),
      pw('', 1, { attrs: 'new_p2', nearby: '再次输入新密码（请不要复制粘贴。）' }),
      text('', 1, { attrs: 'distorted_no' }),
    ]);
    expect(picked(snap, 'type "pw" into the confirm password field')).toBe(3);
    expect(picked(snap, 'type "pw" into the new password field')).toBe(2);
  });
  it('a text box after "设置密码：" (set a password) is the new password', () => {
    const snap = page([
      text('', 1, { attrs: 'phoneNum', nearby: '注册邮箱：' }),
      text('', 2, { nearby: '设置密码：' }),
      text('', 1, { attrs: 'validatecode', nearby: '验证码：' }),
    ]);
    expect(picked(snap, 'type "pw" into the new password field')).toBe(2);
    expect(picked(snap, 'type "pw" into the password field')).toBe(2);
  });
  it('"パスワード" is a password', () => {
    const snap = page([
      text('メールアドレス', 1),
      text('', 1, { nearby: 'パスワード' }),
      button('ログイン', 1),
    ]);
    expect(picked(snap, 'type "pw" into the password field')).toBe(2);
  });
});

describe('two passwords, the confirmation first in the markup', () => {
  it('"re-type pass" before "pass": the other one is the new password', () => {
    const snap = page([
      text('username', 1, { attrs: 'username' }),
      pw('re-type pass', 1, { attrs: 'pass2' }),
      pw('pass', 1, { attrs: 'pass' }),
      text('email', 1, { attrs: 'email' }),
      button('Sign up now', 1, { form: 1, submit: true }),
    ]);
    expect(picked(snap, 'type "pw" into the new password field')).toBe(3);
    expect(picked(snap, 'type "pw" into the confirm password field')).toBe(2);
  });
});

describe('a "show password" text copy beside each password box', () => {
  it('is one field with its password box: the new account form’s password is the new one', () => {
    const snap = page([
      text('Email', 1, { attrs: 'email emailForSignIn' }),
      text('Password', 1, { attrs: 'passwordPlain passwordPlainForSignIn' }),
      pw('Password', 1, { attrs: 'password passwordForSignIn' }),
      button('Sign In', 1, { form: 1, submit: true }),
      text('Name', 2, { attrs: 'username' }),
      { role: 'textbox', name: 'Email for New Account', inputType: 'email', form: 2, f: { attrs: 'email' } },
      text('Password', 2, { attrs: 'passwordPlain passwordPlainForNewAccount' }),
      pw('Password', 2, { attrs: 'password passwordForNewAccount' }),
      button('Sign Up', 2, { form: 2, submit: true }),
    ]);
    expect(picked(snap, 'type "pw" into the new password field')).toBe(8);
    // Both forms' passwords read just "Password": which one a task means is not said.
    expect(picked(snap, 'type "pw" into the password field')).toMatch(/^defer/);
  });
});
