/**
 * Issue 8's grounding patterns on the project's own small fixture pages (ground-*.html): role words
 * as hard constraints, the login form chosen over a newsletter form, unnamed fields read from their
 * type / autocomplete / name words / place, word variants in German, and a hidden twin form.
 * `pick` names the expected element by what the page says about it, not by id.
 */
export interface GroundCase {
  page: string;
  instruction: string;
  /** Expected element: role plus accessible name (may be ''), and the `name` attribute words when unnamed. */
  pick?: { role: string; name: string; attrs?: string; method: string };
  /** Or a deferral, with why. */
  defer?: string;
}

const fill = (role: string, name: string, attrs?: string) => ({
  role,
  name,
  method: 'fill',
  ...(attrs ? { attrs } : {}),
});

export const GROUND_CASES: GroundCase[] = [
  // 1. "the log in button" is the form's "Login" button, never the header link "Log In".
  {
    page: '/ground-login.html',
    instruction: 'click the log in button',
    pick: { role: 'button', name: 'Login', method: 'click' },
  },
  {
    page: '/ground-login.html',
    instruction: 'click the sign in button',
    pick: { role: 'button', name: 'Login', method: 'click' },
  },
  {
    page: '/ground-login.html',
    instruction: 'click the log in link',
    pick: { role: 'link', name: 'Log In', method: 'click' },
  },
  // 2 + 3. The login form's unnamed fields, not the newsletter's named Email field; the hidden twin is skipped.
  {
    page: '/ground-login.html',
    instruction: 'type "ada" into the username field',
    pick: fill('textbox', '', 'login_name'),
  },
  {
    page: '/ground-login.html',
    instruction: 'type %pw% into the password field',
    pick: fill('textbox', '', 'login_pass'),
  },
  {
    page: '/ground-login.html',
    instruction: 'type "ada@example.com" into the email field',
    defer: 'the login field says account/username, the newsletter field says Email',
  },
  // 4. Word variants, German page with a login and a registration form.
  {
    page: '/ground-signup.html',
    instruction: 'type "ada@example.com" into the e-mail address field',
    pick: fill('textbox', 'E-Mail-Adresse'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'type "ada" into the user name field',
    defer: 'only the registration form says user name; the login form’s identity field says e-mail',
  },
  // Issue 27: the registration form's first password also reads just "Passwort" (it is the new one
  // only by its place before "Passwort wiederholen"): two fields read as "the password" (the
  // corpus's sign-up pages with a login box beside them were filled wrongly this way).
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the password field',
    defer: 'the login and the registration form each have a field that reads just "Passwort"',
  },
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the confirm password field',
    pick: fill('textbox', 'Passwort wiederholen'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the repeat password box',
    pick: fill('textbox', 'Passwort wiederholen'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'click the continue button',
    pick: { role: 'button', name: 'Weiter', method: 'click' },
  },
  {
    page: '/ground-signup.html',
    instruction: 'click the sign in button',
    defer: 'the login form’s button says Weiter (continue)',
  },
  {
    page: '/ground-signup.html',
    instruction: 'click the register button',
    pick: { role: 'button', name: 'Registrieren', method: 'click' },
  },
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the old password field',
    pick: fill('textbox', 'Altes Passwort'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the new password field',
    defer: 'two forms hold a new password',
  },
  // Issue 27: a caller who names the form says which "Passwort" is meant.
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the login password field',
    pick: fill('textbox', 'Passwort', 'lp'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'type %pw% into the password field of the registration form',
    // "Registration" is read as any form that sets a new password, and the change form does too.
    defer: 'the registration form and the change form each set a new password',
  },
  {
    page: '/ground-signup.html',
    instruction: 'type "ada" into the sign-up username field',
    pick: fill('textbox', 'Benutzername'),
  },
  {
    page: '/ground-signup.html',
    instruction: 'type "ada" into the sign-in username field',
    defer: 'the login form asks for an e-mail; only the registration form says user name',
  },
];
