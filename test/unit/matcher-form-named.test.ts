import { describe, expect, it } from 'vitest';
import { wantOf } from '../../lib/ops/matcher/ground/decide.ts';
import { matchInstruction, parseInstruction } from '../../lib/ops/matcher/index.ts';
import type { ElementFacts, Snapshot } from '../../lib/perception/types.ts';
import { type ControlSpec, formPage } from '../support/snapshots.ts';

/**
 * Issue 27: a page with a login form and a sign-up form asks for an e-mail and a password in both,
 * so "the password field" defers there. A caller who names the form ("the login password", "the
 * sign-up email", "the password field of the sign-in form") says which one: the matcher answers in
 * that form, and never in a form of the other kind.
 */
type Spec = ControlSpec;

const page = (specs: Spec[]): Snapshot => formPage(specs, 'https://shop.test/account');

const field = (name: string, form: number, inputType = 'text', f: ElementFacts = {}): Spec => ({
  role: 'textbox',
  name,
  inputType,
  form,
  f,
});
const submit = (name: string, form: number): Spec => ({ role: 'button', name, form, f: { submit: true } });

const picked = (snap: Snapshot, instruction: string) => {
  const d = matchInstruction(instruction, snap);
  return d.kind === 'action' ? d.elementId : `defer: ${d.reason}`;
};

/** A shop's "My account" page: Login (1–3) beside Register (4–6), both an e-mail then "Password *". */
const MY_ACCOUNT = page([
  field('Username or email address *', 1, 'text', { attrs: 'username' }),
  field('Password *', 1, 'password', { attrs: 'password' }),
  submit('Log in', 1),
  field('Email address *', 2, 'email', { attrs: 'reg_email' }),
  field('Password *', 2, 'password', { attrs: 'reg_password', autocomplete: 'new-password' }),
  submit('Register', 2),
]);

describe('the caller names the form', () => {
  it('reads the form words apart from the field words', () => {
    const want = (s: string) => {
      const p = parseInstruction(s)!;
      return wantOf(p.target!, p.verb);
    };
    expect(want('type "x" into the login password field')).toEqual({
      want: 'password',
      scope: 'login',
      phrase: 'password',
    });
    expect(want('type "x" into the sign-in email field')).toMatchObject({ want: 'email', scope: 'login' });
    expect(want('type "x" into the password field of the sign-in form')).toMatchObject({
      want: 'password',
      scope: 'login',
      phrase: 'password',
    });
    // The password of a sign-up form is the new password it sets.
    expect(want('type "x" into the sign-up password field')).toMatchObject({ want: 'new', scope: 'signup' });
    expect(want('type "x" into the email field of the create account form')).toMatchObject({
      want: 'email',
      scope: 'signup',
    });
    // "The login field" is still a user name field, and a form of another kind is not ours.
    expect(want('type "x" into the login field')).toEqual({ want: 'user', phrase: 'login' });
    expect(want('type "x" into the password field of the billing form')).toBeUndefined();
  });

  it('a login form beside a sign-up form of the same shape: "the password" defers, "the login password" does not', () => {
    expect(picked(MY_ACCOUNT, 'type %pw% into the password field')).toMatch(/^defer/);
    expect(picked(MY_ACCOUNT, 'type %pw% into the login password field')).toBe(2);
    expect(picked(MY_ACCOUNT, 'type %pw% into the password field of the sign-in form')).toBe(2);
    expect(picked(MY_ACCOUNT, 'type "ada@example.com" into the sign-in email field')).toBe(1);
    expect(picked(MY_ACCOUNT, 'enter "ada@example.com" in the email field of the login form')).toBe(1);
  });

  it('the sign-up form named: its e-mail and its password, never the login form’s', () => {
    expect(picked(MY_ACCOUNT, 'type %pw% into the sign-up password field')).toBe(5);
    expect(picked(MY_ACCOUNT, 'type "ada@example.com" into the email field of the create account form')).toBe(
      4,
    );
    expect(picked(MY_ACCOUNT, 'type "ada@example.com" into the registration email field')).toBe(4);
  });

  it('a form of the other kind is never the one named: defer', () => {
    const signupOnly = page([
      field('Email', 1, 'email'),
      field('Password', 1, 'password'),
      field('Confirm password', 1, 'password'),
      submit('Create account', 1),
    ]);
    expect(picked(signupOnly, 'type %pw% into the login password field')).toMatch(/^defer.*sign-up form/);
    expect(picked(signupOnly, 'type "ada@example.com" into the sign-in email field')).toMatch(/^defer/);
    const loginOnly = page([
      field('Email', 1, 'email'),
      field('Password', 1, 'password'),
      submit('Log in', 1),
    ]);
    expect(picked(loginOnly, 'type %pw% into the sign-up password field')).toMatch(/^defer/);
    expect(picked(loginOnly, 'type "ada@example.com" into the sign-up email field')).toMatch(/^defer/);
    expect(picked(loginOnly, 'type "ada@example.com" into the login email field')).toBe(1);
  });

  it('naming the login form does not choose between two login forms', () => {
    const two = page([
      field('Email', 1, 'email'),
      field('Password', 1, 'password'),
      submit('Sign in', 1),
      field('Email', 2, 'email'),
      field('Password', 2, 'password'),
      submit('Sign in', 2),
    ]);
    expect(picked(two, 'type %pw% into the login password field')).toMatch(/^defer/);
    expect(picked(two, 'type "ada@example.com" into the sign-in email field')).toMatch(/^defer/);
  });
});

describe('what a form asks for says what it is', () => {
  // A shop's account page: Sign In (1–3) above "Create" (4–8), whose password only its place says is new.
  const SHOP = page([
    field('Email', 1, 'email', { attrs: 'customer[email] customer_email' }),
    field('Password', 1, 'password', { attrs: 'customer[password] customer_password' }),
    submit('Sign In', 1),
    field('', 2, 'text', { nearby: 'First Name', attrs: 'customer[first_name] first_name' }),
    field('', 2, 'text', { nearby: 'Last Name', attrs: 'customer[last_name] last_name' }),
    field('', 2, 'email', { nearby: 'Email', attrs: 'customer[email] email' }),
    field('', 2, 'password', { nearby: 'Password', attrs: 'customer[password] password' }),
    submit('Create', 2),
  ]);

  it('a form that asks for a person’s name beside one password makes an account: one login form is left', () => {
    expect(picked(SHOP, 'type "ada@example.com" into the email field')).toBe(1);
    expect(picked(SHOP, 'click the sign in button')).toBe(3);
    // Its password still reads just "Password", like the login one: naming the form decides.
    expect(picked(SHOP, 'type %pw% into the password field')).toMatch(/^defer/);
    expect(picked(SHOP, 'type %pw% into the login password field')).toBe(2);
    expect(picked(SHOP, 'type %pw% into the sign-up password field')).toBe(7);
  });

  it('a text box whose name says login and password stands in for the password: not a user name field', () => {
    const snap = page([
      field('', 1, 'text', { attrs: 'vb_login_username navbar_username' }),
      field('', 1, 'text', { attrs: 'vb_login_password_hint navbar_password_hint' }),
      submit('Log in', 1),
    ]);
    expect(picked(snap, 'type "ada" into the username field')).toBe(1);
    expect(picked(snap, 'click the log in button')).toBe(3);
  });

  it('a "Display Password" button after the password is not the form’s submit', () => {
    const snap = page([
      field('Email Address', 1, 'text'),
      field('Password', 2, 'password'),
      { role: 'button', name: 'Display Password', form: 2 },
      { role: 'button', name: 'SIGN IN', form: 3 },
    ]);
    expect(picked(snap, 'click the sign in button')).toBe(4);
  });
});
