import { describe, expect, it } from 'vitest';
import { pageForms } from '../../lib/ops/matcher/ground/fields.ts';
import { attrWords, autocompleteWords, canon } from '../../lib/ops/matcher/ground/lexicon.ts';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { normalize } from '../../lib/ops/matcher/text.ts';
import type { ElementFacts, Snapshot } from '../../lib/perception/types.ts';
import { type ControlSpec, formPage } from '../support/snapshots.ts';

// Synthetic snapshots: ids 1..n in reading order, each control visible with a box unless concealed.
type Spec = ControlSpec;

const page = (specs: Spec[]): Snapshot => formPage(specs);

const text = (name: string, form: number, f: ElementFacts = {}): Spec => ({
  role: 'textbox',
  name,
  inputType: 'text',
  form,
  f,
});
const pw = (name: string, form: number, f: ElementFacts = {}): Spec => ({
  role: 'textbox',
  name,
  inputType: 'password',
  form,
  f,
});
const button = (name: string, form?: number): Spec => ({ role: 'button', name, ...(form ? { form } : {}) });
const link = (name: string): Spec => ({ role: 'link', name });

const picked = (snap: Snapshot, instruction: string) => {
  const d = matchInstruction(instruction, snap);
  return d.kind === 'action' ? d.elementId : `defer: ${d.reason}`;
};

describe('lexicon: one token per concept, in many languages', () => {
  const same = (a: string, b: string) => expect(canon(normalize(a))).toBe(canon(normalize(b)));
  it('reads log-in words as one concept', () => {
    for (const w of [
      'Log in',
      'Login',
      'Log-In',
      'Sign in',
      'sign on',
      'Anmelden',
      'Se connecter',
      'Iniciar sesión',
      'Accedi',
      'Inloggen',
      'Entrar',
      'Zaloguj się',
      'Logga in',
    ])
      same(w, 'log in');
  });
  it('reads e-mail, user name, password, new, confirm words', () => {
    same('E-Mail-Adresse', 'email address');
    same('Courriel', 'email');
    same('User name', 'username');
    same('Benutzername', 'username');
    same("Nom d'utilisateur", 'username');
    same('Mot de passe', 'password');
    same('Contraseña', 'password');
    same('Wachtwoord', 'password');
    same('Hasło', 'password');
    same('Lösenord', 'password');
    same('Neues Passwort', 'new password');
    same('Create a password', 'new password');
    same('Passwort wiederholen', 'password confirm');
    same('Re-enter password', 'confirm password');
    same('Répéter le mot de passe', 'confirm le password');
    same('Weiter', 'continue');
    same('Suivant', 'next');
  });
  it('keeps sign up apart from sign in', () => {
    expect(canon(normalize('Sign up'))).not.toBe(canon(normalize('Sign in')));
    expect(canon(normalize('Forgot password?'))).toContain('xforgot');
  });
  it('splits attribute words and reads autocomplete tokens', () => {
    expect(attrWords('txtUserName loginEmail user[pass]')).toBe('txt user name login email user pass');
    expect(autocompleteWords('section-login current-password')).toBe('current password');
  });
});

describe('fields and forms', () => {
  it('the text field just before the password is the user name; one password makes a login form', () => {
    const snap = page([text('', 1), pw('', 1), button('Go', 1)]);
    const { fields, forms } = pageForms(snap.elements);
    expect(fields.get(1)).toMatchObject({ kind: 'identity', beforePassword: true });
    expect(fields.get(2)).toMatchObject({ kind: 'password', password: 'plain' });
    expect(forms.get(1)?.kind).toBe('login');
  });
  it('two passwords after an identity field are new + confirm; three are current, new, confirm', () => {
    const two = pageForms(page([text('Email', 1), pw('', 1), pw('', 1)]).elements);
    expect([two.fields.get(2)?.password, two.fields.get(3)?.password]).toEqual(['new', 'confirm']);
    expect(two.forms.get(1)?.kind).toBe('signup');
    const three = pageForms(page([pw('', 1), pw('', 1), pw('', 1)]).elements);
    expect([1, 2, 3].map((i) => three.fields.get(i)?.password)).toEqual(['current', 'new', 'confirm']);
  });
});

describe('grounding decisions (issue 8 patterns)', () => {
  it('1: role words are hard: the log in button is never the header link', () => {
    const snap = page([link('Log In'), text('Email', 1), pw('Password', 1), button('Login', 1)]);
    expect(picked(snap, 'click the log in button')).toBe(4);
    expect(picked(snap, 'click the sign in button')).toBe(4);
    // The form's button says Continue, a header link says Sign in: the words point elsewhere.
    const cont = page([link('Sign in'), text('Email', 1), pw('Password', 1), button('Continue', 1)]);
    expect(picked(cont, 'click the sign in button')).toMatch(/^defer/);
    expect(picked(cont, 'click the continue button')).toBe(4);
    // …and a header *button* with the words is not the login form's button either.
    const header = page([button('Sign in'), text('Email', 1), pw('Password', 1), button('Continue', 1)]);
    expect(picked(header, 'click the sign in button')).toMatch(/^defer/);
  });

  it('2: the login form, not the newsletter form', () => {
    const snap = page([
      text('Email', 2),
      button('Subscribe', 2),
      text('', 1, { attrs: 'login_email', autocomplete: 'email' }),
      pw('', 1),
      button('Log in', 1),
    ]);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(3);
    expect(picked(snap, 'type %pw% into the password field')).toBe(4);
  });

  it('3: unnamed fields by type, autocomplete, name words, nearby text and place', () => {
    const snap = page([text('', 1, { nearby: 'Benutzername:' }), pw('', 1), button('OK', 1)]);
    expect(picked(snap, 'type "ada" into the username field')).toBe(1);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(1);
    expect(picked(snap, 'type %pw% into the password field')).toBe(2);
    const bare = page([text('', 1), pw('', 1)]);
    expect(picked(bare, 'type "ada" into the username field')).toBe(1);
    const d = matchInstruction('type "ada" into the username field', bare);
    expect(d.kind === 'action' && d.reason).toMatch(/just before its password/);
  });

  it('4: word variants pick new and confirm; a phrasing that does not fit defers', () => {
    const snap = page([
      text('E-Mail', 1),
      pw('Passwort erstellen', 1, { autocomplete: 'new-password' }),
      pw('Passwort wiederholen', 1, { autocomplete: 'new-password' }),
      button('Konto erstellen', 1),
    ]);
    expect(picked(snap, 'type %pw% into the new password field')).toBe(2);
    expect(picked(snap, 'type %pw% into the confirm password field')).toBe(3);
    expect(picked(snap, 'type "ada@example.com" into the e-mail address field')).toBe(1);
    expect(picked(snap, 'click the log in button')).toMatch(/^defer/);
  });

  it('a change form of two unnamed passwords and nothing else: which is the confirmation is unknown', () => {
    const snap = page([pw('', 1), pw('', 1), button('Save', 1)]);
    expect(picked(snap, 'type %pw% into the confirm password field')).toMatch(/^defer/);
  });

  it('8: a hidden twin of the form is skipped; two visible login forms defer', () => {
    const twin = page([
      text('Username', 1, { concealed: true }),
      pw('Password', 1, { concealed: true }),
      button('Sign in', 1),
      text('Username', 2),
      pw('Password', 2),
      button('Sign in', 2),
    ]);
    twin.elements[2]!.facts = { form: 1, concealed: true };
    expect(picked(twin, 'type "ada" into the username field')).toBe(4);
    expect(picked(twin, 'type %pw% into the password field')).toBe(5);
    expect(picked(twin, 'click the sign in button')).toBe(6);
    const both = page([text('Username', 1), pw('Password', 1), text('Username', 2), pw('Password', 2)]);
    expect(picked(both, 'type %pw% into the password field')).toMatch(/^defer/);
  });
});

describe('role-only targets', () => {
  const tabs = page([
    { role: 'tab', name: 'One' },
    { role: 'tab', name: 'Two', f: { concealed: true } },
    { role: 'tab', name: 'Three' },
    { role: 'link', name: 'Tab four' },
  ]);
  it('an ordinal counts usable elements of that role in reading order', () => {
    expect(picked(tabs, 'click the second tab')).toBe(3);
    expect(picked(tabs, 'click the last tab')).toBe(3);
    expect(picked(tabs, 'click the third tab')).toMatch(/^defer: there are only 2 usable tabs/);
    const d = matchInstruction('click the first tab', tabs);
    expect(d.kind === 'action' && d.reason).toMatch(/first of 2 usable tabs/);
  });
  it('with no count: exactly one element of the role, else defer', () => {
    expect(picked(page([link('Home'), button('Send')]), 'click the button')).toBe(2);
    expect(picked(page([button('Send'), button('Cancel')]), 'click the button')).toMatch(
      /^defer: 2 elements/,
    );
    // A disabled twin still counts: the instruction may mean it, and acting on the other is wrong.
    const twin = page([
      link('Home'),
      { role: 'button', name: 'Go', states: { disabled: true } },
      button('Send'),
    ]);
    expect(picked(twin, 'click the button')).toMatch(/^defer/);
    expect(picked(page([text('', 0), pw('', 0)]), 'type "x" into the text field')).toMatch(/^defer/);
  });
});

describe('which login form, which button', () => {
  it('the page’s own login form over a drop-down copy in its header', () => {
    const snap = page([
      text('Email', 1, { region: 'chrome' }),
      pw('Password', 1, { region: 'chrome' }),
      button('Sign in', 1),
      text('Email', 2, { region: 'main' }),
      pw('Password', 2, { region: 'main' }),
      button('Sign in', 2),
    ]);
    snap.elements[2]!.facts = { form: 1, region: 'chrome', submit: true };
    expect(picked(snap, 'type %pw% into the password field')).toBe(5);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(4);
    expect(picked(snap, 'click the sign in button')).toBe(6);
    // Without a main landmark the one outside the header, navigation and footer is the page's own…
    for (const el of snap.elements) if (el.facts?.region === 'main') delete el.facts.region;
    expect(picked(snap, 'type %pw% into the password field')).toBe(5);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(4);
    // …unless one of them is a dialog (a sign-in pop-up is a layer of its own)…
    snap.elements[3]!.dialog = 1;
    snap.elements[4]!.dialog = 1;
    expect(picked(snap, 'type %pw% into the password field')).toMatch(/^defer/);
    // …and when both are in the chrome nothing says which one is meant.
    for (const el of snap.elements) {
      delete el.dialog;
      if (el.facts) el.facts.region = 'chrome';
    }
    expect(picked(snap, 'type %pw% into the password field')).toMatch(/^defer/);
  });

  it('a whole login form over a lone password box', () => {
    const snap = page([pw('Password', 1), text('Email', 2), pw('Password', 2), button('Log in', 2)]);
    expect(picked(snap, 'type %pw% into the password field')).toBe(3);
  });

  it('the form’s submit after the password, even disabled; a later "Continue" is not it', () => {
    const snap = page([
      text('Email', 1),
      pw('Password', 1),
      button('Show', 1),
      { role: 'button', name: 'Log in', form: 1, f: { submit: true }, states: { disabled: true } },
      button('Continue', 1),
    ]);
    snap.elements[3]!.facts = { form: 1, submit: true };
    expect(picked(snap, 'click the log in button')).toBe(4);
    expect(picked(snap, 'click the continue button')).toMatch(/^defer: the login form's button does not say/);
  });

  it('a submit holding the words among others is the login button, unless it names another thing', () => {
    const held = page([text('Email', 1), pw('Password', 1), button('Log in to my account', 1)]);
    expect(picked(held, 'click the log in button')).toBe(3);
    const other = page([text('Email', 1), pw('Password', 1), button('Sign in with Google', 1)]);
    expect(picked(other, 'click the sign in button')).toMatch(/^defer/);
  });

  it('a form with no submit button is sent by the link after its password that says the words', () => {
    const snap = page([
      text('Email', 1),
      pw('Password', 1),
      link('Forgot password?'),
      link('Sign In'),
      button('Country: United States'),
    ]);
    expect(picked(snap, 'click the sign in button')).toBe(4);
    expect(picked(snap, 'click log in')).toBe(4);
    // Only the task's words: a provider's link or other words are not the form's submit.
    const google = page([text('Email', 1), pw('Password', 1), link('Sign in with Google'), button('Help')]);
    expect(picked(google, 'click the sign in button')).toMatch(/^defer/);
    expect(picked(snap, 'click the continue button')).toMatch(/^defer/);
    // A real submit button decides: a link beside it is something else.
    const real = page([text('Email', 1), pw('Password', 1), link('Log in'), button('Go', 1)]);
    real.elements[3]!.facts = { form: 1, submit: true };
    expect(picked(real, 'click the log in button')).toMatch(/^defer/);
  });
});

describe('what a user reads decides', () => {
  it('a "Current password" declared new-password (autocomplete) is the current one', () => {
    const snap = page([
      pw('Current password', 1, { autocomplete: 'new-password' }),
      pw('New password', 1, { autocomplete: 'new-password' }),
      button('Save', 1),
    ]);
    expect(picked(snap, 'type %pw% into the new password field')).toBe(2);
  });

  it('the login form’s field whose words say email among others, beside a newsletter’s "Email"', () => {
    const snap = page([
      text('Member Login Email Address', 1),
      pw('Password', 1),
      button('Log in', 1),
      text('Email', 2),
      button('Subscribe', 2),
    ]);
    expect(picked(snap, 'type "ada@example.com" into the email field')).toBe(1);
    // Words that do not say it leave the choice to the newsletter's field: defer.
    const member = page([
      text('Member number', 1),
      pw('Password', 1),
      button('Log in', 1),
      text('Email', 2),
      button('Subscribe', 2),
    ]);
    expect(picked(member, 'type "ada@example.com" into the email field')).toMatch(/^defer/);
  });
});

describe('place across the page', () => {
  it('a password right before its confirmation is the new one when each sits in a group of its own', () => {
    const snap = page([
      text('Enter your email', 1),
      pw('Password (8-20 Characters)', 3),
      pw('Repeat password', 4),
    ]);
    expect(picked(snap, 'type %pw% into the new password field')).toBe(2);
    expect(picked(snap, 'type %pw% into the confirm password field')).toBe(3);
  });

  it('an unnamed field after the password does not end the login form’s buttons', () => {
    const snap = page([text('Email', 1), pw('Password', 1), text('', 1), button('Continue', 1)]);
    expect(picked(snap, 'click the continue button')).toBe(4);
    // A field that says what it is for starts what follows: its button is not the login one.
    const next = page([text('Email', 1), pw('Password', 1), text('Postcode', 2), button('Continue', 2)]);
    expect(picked(next, 'click the continue button')).toMatch(/^defer/);
  });

  it('past a one-time code field of the same form, the form’s own submit is its login button', () => {
    const snap = page([
      text('Username', 1),
      pw('Password', 1),
      text('Authenticator code', 1),
      { role: 'button', name: 'Log In', form: 1, f: { form: 1, submit: true } },
    ]);
    expect(picked(snap, 'click the log in button')).toBe(4);
    // Not a plain button after it, nor another form's submit.
    const plain = page([
      text('Username', 1),
      pw('Password', 1),
      text('Authenticator code', 1),
      button('Log In', 1),
    ]);
    expect(picked(plain, 'click the log in button')).toMatch(/^defer/);
  });
});

describe('"the submit button"', () => {
  it('is the login form’s button only when that button says so; another form’s Submit is not it', () => {
    const named = page([
      text('Email', 1),
      pw('Password', 1),
      { role: 'button', name: 'Submit', form: 1, f: { submit: true } },
    ]);
    expect(picked(named, 'click the submit button')).toBe(3);
    const newsletter = page([
      text('Email', 1),
      pw('Password', 1),
      { role: 'button', name: 'Go', form: 1, f: { submit: true } },
      text('Email', 2),
      button('Submit', 2),
    ]);
    expect(picked(newsletter, 'click the submit button')).toMatch(
      /^defer: the login form's button does not say/,
    );
  });
});

describe('a button row apart from the login form', () => {
  // A guest checkout's email beside the login form, and one row of buttons below both (unused-6).
  const split = page([
    text('you@domain.com', 1, { attrs: 'guestLoginValue' }),
    text('you@domain.com', 2, { attrs: 'loginValue' }),
    pw('Password', 2),
    button('Continue', 3),
    button('Sign In', 3),
  ]);
  it('answers only when the login words name one button of the row', () => {
    expect(picked(split, 'click the sign in button')).toBe(5);
    expect(picked(split, 'click the log in button')).toBe(5);
  });
  it('defers other words: the row may belong to either form', () => {
    expect(picked(split, 'click the continue button')).toMatch(/^defer: .*sit apart/);
    expect(picked(split, 'click the submit button')).toMatch(/^defer/);
  });
});
