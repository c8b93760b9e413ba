/**
 * Look-alike forms: a page that offers a login form and, beside it, a sign-up form asking for
 * the same things (one identity field, then one password: a quick "create an account" box). A
 * login task and a sign-up task then both say "the email field" and "the password field", and
 * the phrase does not say which form it means, so the matcher must not pick the login one.
 */

import type { Field, PageForms } from './fields.ts';
import { STRENGTH } from './fields.ts';
import type { Concept } from './lexicon.ts';
import type { Grounded, Limits, Scored, Want } from './pick.ts';

/** The usable text fields of a form when they are exactly an identity field and then a password. */
function identityThenPassword(fields: Field[]): { identity: Field; password: Field } | undefined {
  const live = fields.filter((f) => f.usable);
  if (live.length !== 2) return undefined;
  const [identity, password] = live as [Field, Field];
  if (identity.kind !== 'identity' || password.kind !== 'password') return undefined;
  return { identity, password };
}

/** The concepts whose words on a field say it is what the task wants. */
export const WANTED: Partial<Record<Want, Concept[]>> = {
  email: ['xemail'],
  user: ['xusername', 'xlogin'],
  identity: ['xemail', 'xusername', 'xlogin'],
};

/**
 * Defers when the login form (an identity field, then its password) has a sign-up twin of the
 * same shape and what is wanted fits both: both fields say it (in words, type, autocomplete or
 * name), or neither does and only their place in their form says so. A password is a password in
 * either form ("Create password" is still the only password of the sign-up box).
 */
export function lookAlikeForm(
  page: PageForms,
  anchor: Field,
  want: Want,
  score: (f: Field) => Scored,
  limits: Limits,
): Grounded | undefined {
  const login = identityThenPassword(page.forms.get(anchor.form)?.fields ?? []);
  if (!login) return undefined;
  for (const form of page.forms.values()) {
    // Another login form is for the login-form rules (which one is the page's own) to settle.
    if (form.id === anchor.form || form.id === 0 || form.kind !== 'signup') continue;
    const twin = identityThenPassword(form.fields);
    if (!twin?.identity.beforePassword) continue;
    const [mine, other] =
      want === 'password' ? [login.password, twin.password] : [login.identity, twin.identity];
    const own = score(mine);
    const its = score(other);
    const concepts = WANTED[want];
    const says = (f: Field) => !concepts || concepts.some((c) => f.says.has(c));
    const both = own.score >= limits.threshold && says(other);
    const neither = own.score < STRENGTH.attrs && !says(other);
    if (both || neither)
      return {
        ok: false,
        reason: `a login form and a sign-up form each ask for an identity and then a password ([${mine.el.id}], [${other.el.id}]): which one '${want}' means is not said`,
        ranked: [own, its],
      };
  }
  return undefined;
}
