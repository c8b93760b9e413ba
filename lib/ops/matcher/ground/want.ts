/**
 * What a sign-in or sign-up target asks for: the concept ("the email field" → email, "the log in
 * button" → login) and, when the caller names it, the form ("the sign-in email", "the password of
 * the create-account form"). A page with a login form and a sign-up form asks for an email and a
 * password in both; only the caller's words can say which one a task means.
 */
import type { MatchVerb, TargetPhrase } from '../parse.ts';
import { normalize } from '../text.ts';
import { type Concept, canon, conceptsOf, without } from './lexicon.ts';
import type { Want } from './pick.ts';

/** The wants a login form answers. */
export const LOGIN_WANTS = new Set<Want>(['email', 'user', 'identity', 'password']);

const GLUE = new Set(['the', 'a', 'an', 'your', 'my', 'field', 'address', 'box', 'input', 'button']);

/** Which form the caller names: "the sign-in email", "the password of the create-account form". */
export type FormScope = 'login' | 'signup';

/** What the target asks for: the concept, the form it names (if any), the phrase without it. */
export interface Wanted {
  want: Want;
  scope?: FormScope;
  /** The phrase with the form's words taken out: what the field itself should read as. */
  phrase: string;
}

/** "password field of the login form", "email in the sign-up form": the field words, the form words. */
const OF_FORM = /^(.+?) (?:of|in|on|for) (?:the |your |my |this )?(.+?) form$/;

/** Which concept the target names, when it names one of ours and nothing more. */
export function wantOf(target: TargetPhrase, verb: MatchVerb): Wanted | undefined {
  if (target.quoted || target.ordinal !== undefined || !target.phrase) return undefined;
  let text = normalize(target.phrase);
  let scope: FormScope | undefined;
  const ofForm = OF_FORM.exec(text);
  if (ofForm) {
    // Only a form named by log-in or sign-up words and nothing else ("the billing form" is not ours).
    const formWords = canon(ofForm[2]!)
      .split(' ')
      .filter((t) => t && !GLUE.has(t));
    if (formWords.length !== 1) return undefined;
    if (formWords[0] === 'xlogin') scope = 'login';
    else if (formWords[0] === 'xsignup') scope = 'signup';
    else return undefined;
    // "email field" of "the email field of the login form": what the field reads is "email".
    text = ofForm[1]!.replace(/ (?:field|box|input|textbox)$/, '');
  }
  let canonical = canon(text);
  let concepts = conceptsOf(canonical);
  // A form word beside the field's own ("the login password", "the sign-up email"): the caller
  // says which form. "The login field" alone is a user name field, not a scope.
  if (!scope && concepts.size > 1 && (concepts.has('xlogin') || concepts.has('xsignup'))) {
    const named: Concept = concepts.has('xsignup') ? 'xsignup' : 'xlogin';
    if (!(concepts.has('xlogin') && concepts.has('xsignup'))) {
      scope = named === 'xlogin' ? 'login' : 'signup';
      text = without(text, named);
      canonical = canon(text);
      concepts = conceptsOf(canonical);
    }
  }
  const tokens = canonical.split(' ').filter((t) => t && !GLUE.has(t));
  if (tokens.some((t) => !concepts.has(t as Concept) && t !== 'or')) return undefined;
  const want = plainWant(concepts, target, verb);
  if (!want) return undefined;
  if (!scope) return { want, phrase: target.phrase };
  // A form named for a button or for a field of the other task ("the login new password") is not
  // one of our readings.
  if (scope === 'login' && !LOGIN_WANTS.has(want)) return undefined;
  // The password of a sign-up form is the new one it sets.
  if (scope === 'signup' && want === 'password') return { want: 'new', scope, phrase: text };
  if (
    scope === 'signup' &&
    (want === 'current' || want === 'login' || want === 'continue' || want === 'submit')
  )
    return undefined;
  return { want, scope, phrase: text };
}

function plainWant(concepts: Set<Concept>, target: TargetPhrase, verb: MatchVerb): Want | undefined {
  const has = (c: Concept) => concepts.has(c);
  const only = (...cs: Concept[]) => concepts.size === cs.length && cs.every(has);
  // "click the password field" / "focus the email box" means the same field as typing into it
  // does: the same facts decide, and two sign-in forms defer it the same way.
  const intoField = verb === 'fill' || verb === 'type' || (verb === 'click' && target.roleHint === 'field');
  if (intoField) {
    if (target.roleHint && target.roleHint !== 'field') return undefined;
    if (only('xemail')) return 'email';
    if (only('xusername') || only('xlogin')) return 'user';
    if (only('xemail', 'xusername')) return 'identity';
    if (only('xpassword')) return 'password';
    if (only('xnew', 'xpassword')) return 'new';
    if (only('xconfirm', 'xpassword') || only('xconfirm', 'xnew', 'xpassword') || only('xconfirm'))
      return 'confirm';
    if (only('xcurrent', 'xpassword')) return 'current';
    return undefined;
  }
  if (verb === 'click') {
    if (target.roleHint && target.roleHint !== 'button') return undefined;
    if (only('xlogin')) return 'login';
    if (only('xcontinue')) return 'continue';
    if (only('xsubmit')) return 'submit';
  }
  return undefined;
}
