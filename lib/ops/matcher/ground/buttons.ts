/**
 * "Click the log in / sign in / continue button": the login form decides. Its own submit button
 * (the form's first submit after the password, else the first button there) must say the words;
 * a header link or button saying them is not what a login task presses, and a form button that
 * says something else ("Continue" for "sign in") means the words point elsewhere, so defer.
 */
import type { SnapshotElement } from '../../../perception/types.ts';
import type { TargetPhrase } from '../parse.ts';
import { normalize, textScore, toNorm } from '../text.ts';
import { pageForms } from './fields.ts';
import { canon } from './lexicon.ts';
import {
  type Grounded,
  type Limits,
  loginPasswords,
  pick,
  type Scored,
  usableFirst,
  type Want,
} from './pick.ts';

const BUTTONISH = new Set(['button']);

/**
 * The buttons that submit a login form: usable buttons after its password (or, on a first step
 * with no password, after its one identity field) in reading order, up to the next text field.
 */
/** A submit button that holds the words among others reads as them at this score. */
const CONTAINS = 0.85;
/** …unless it also names another concept or a provider ("Sign in with Google", "Sign up"). */
const OTHER_THING =
  /\bx(?:signup|forgot|logout|email|username|password|search)\b|\b(?:with|google|facebook|apple|microsoft|twitter|linkedin|amazon|github|sso|mit|avec|con|met|com|med|z)\b/;

/** Buttons beside a password that show or hide it, help icons and nameless ones: never the submit. */
const TOGGLE =
  /^$|^(?:help|hilfe|aide|ayuda|aiuto|go back|back|return|zuruck|retour|volver|indietro|terug|voltar|wstecz|tillbaka|show|hide|toggle|view|display|unmask|reveal|eye|anzeigen|verbergen|afficher|masquer|mostrar|ocultar|mostra|nascondi|tonen|verbergen|pokaz|ukryj|visa|dolj)\b/;

function submitRun(page: ReturnType<typeof pageForms>, elements: readonly SnapshotElement[]) {
  const fields = [...page.fields.values()];
  const anchors = loginPasswords(page);
  let anchor = anchors[0];
  if (anchors.length > 1) return { anchors: anchors.length, run: [] as SnapshotElement[], links: [] };
  if (!anchor) {
    const ids = fields.filter(
      (f) => f.usable && f.kind === 'identity' && (f.says.has('xemail') || f.says.has('xusername')),
    );
    if (ids.length !== 1)
      return { anchors: ids.length > 1 ? ids.length : 0, run: [], detached: false, links: [] };
    if (fields.some((f) => f.usable && f.kind === 'password'))
      return { anchors: 0, run: [], detached: false, links: [] };
    anchor = ids[0];
  }
  const run: SnapshotElement[] = [];
  /** Links between the password and the first button: where a form's submit is an `<a>`. */
  const links: SnapshotElement[] = [];
  const at = elements.indexOf(anchor!.el);
  const own = anchor!.el.facts?.form;
  /** Past a further field of the password's own form (a one-time code, a captcha). */
  let past = false;
  for (let i = at + 1; i < elements.length && run.length < 8; i++) {
    const el = elements[i]!;
    const field = page.fields.get(el.id);
    // The next field a user fills ends the form's buttons; a field nothing names or describes
    // (a trap for robots the page shows by mistake) does not. A further field of the same
    // `<form>` does not either, but after it only that form's own submit button counts.
    if (field?.usable && field.kind !== 'password' && field.kind !== 'unknown') {
      if (run.length > 0 || links.length > 0 || !own || el.facts?.form !== own) break;
      past = true;
      continue;
    }
    if (past && !(el.facts?.submit && el.facts.form === own)) continue;
    // A disabled submit is still the form's button: it waits for the fields to be filled.
    if (el.role === 'button' && el.facts?.concealed !== true && !TOGGLE.test(normalize(el.name)))
      run.push(el);
    else if (el.role === 'link' && el.interactive && run.length === 0 && links.length < 4) links.push(el);
  }
  // The form's submit is its first submit button after the password, else the first button;
  // later ones belong to what follows ("Continue" of a guest checkout, "Register").
  const submit = run.find((el) => el.facts?.submit);
  // Buttons in a row of their own, apart from the password's form, while another form's fields sit
  // beside it (a guest checkout's email): the row may serve either form, so order proves nothing.
  const form = anchor!.el.facts?.form;
  const detached =
    !submit &&
    run.length > 1 &&
    form !== undefined &&
    run.every((el) => el.facts?.form !== form) &&
    fields.some((f) => f.usable && f.kind === 'identity' && f.el.facts?.form !== form);
  return {
    anchors: 1,
    run: submit ? [submit] : detached ? run : run.slice(0, 1),
    detached,
    links: submit || detached ? [] : links,
  };
}

export function groundButton(
  want: Want,
  target: TargetPhrase,
  elements: readonly SnapshotElement[],
  limits: Limits,
): Grounded {
  const { threshold } = limits;
  const page = pageForms(elements);
  const phrase = toNorm(target.phrase);
  const concept = want === 'login' ? 'xlogin' : want === 'continue' ? 'xcontinue' : 'xsubmit';
  const roles = target.roleHint === 'button' ? BUTTONISH : new Set(['button', 'link']);
  /** How well a button's words name the phrase; a disabled one counts half, unless it is the
   * login form's own submit (which waits for the fields to be filled). */
  const scoreOf = (el: SnapshotElement, submitOfForm = false): Scored => {
    const s = Math.max(
      textScore(phrase, toNorm(el.name)),
      el.role === 'button' ? textScore(phrase, toNorm(el.value)) * 0.95 : 0,
    );
    const why = `it says '${el.name}'${el.states.disabled ? ' (disabled until the form is filled)' : ''}`;
    return { el, score: el.states.disabled && !submitOfForm ? s * 0.5 : s, why };
  };

  let ranked: Scored[] = [];
  for (const el of elements) {
    if (!el.interactive || !roles.has(el.role)) continue;
    const s = scoreOf(el);
    if (s.score > 0) ranked.push(s);
  }
  ranked = usableFirst(ranked, threshold);
  // A login form decides: its own submit button must say the words. A header link or button
  // with them is not what the task presses, and a form button saying something else
  // ("Continue" for "sign in") means the words point elsewhere, so defer.
  const { anchors, run, detached, links } = submitRun(page, elements);
  // A detached button row: only the login words themselves can say which button logs in.
  if (anchors === 1 && detached && concept !== 'xlogin')
    return {
      ok: false,
      reason: `the buttons after the login form (${run.map((el) => `'${el.name}'`).join(', ')}) sit apart from it, beside another form: '${target.phrase}' does not say which one logs in`,
      ranked,
    };
  if (anchors > 1 && ranked.some((s) => s.score >= threshold))
    return { ok: false, reason: `${anchors} login forms: which one's button is meant is not said`, ranked };
  if (anchors === 1) {
    // The login form's own submit button needs only to hold the words ("Log in to my account",
    // "Secure sign in"), not to be nothing else, unless it names another thing too.
    const inside = run
      .map((el) => {
        const s = scoreOf(el, true);
        const words = canon(normalize(el.name));
        const holds = concept !== undefined && words.split(' ').includes(concept) && !OTHER_THING.test(words);
        return holds && s.score < CONTAINS ? { ...s, score: CONTAINS } : s;
      })
      .filter((s) => s.score > 0);
    // A form without a submit button is sent by a link styled as one, right after its password
    // ("Sign In", "log in >>"): such a link counts when its words are the task's, and nothing
    // else ("Forgot password?", "Sign in with Google" are not).
    for (const el of links) {
      const words = canon(normalize(el.name));
      const s = scoreOf(el);
      if (s.score >= threshold && words.split(' ').includes(concept) && !OTHER_THING.test(words))
        inside.push(s);
    }
    if (inside.some((s) => s.score >= threshold)) {
      const out = pick(inside, `the ${want} button`, limits);
      return out.ok ? { ...out, why: `the login form’s button: ${out.why}` } : out;
    }
    // "The submit button" too must be what the login form's button says: a newsletter's Submit
    // elsewhere is not what a login task presses, and a login button called "Sign in" is only
    // maybe what "submit" meant.
    return {
      ok: false,
      reason: `the login form's button does not say '${target.phrase}'${run[0] ? ` (it says '${run[0].name}')` : ''}`,
      ranked,
    };
  }
  // No login form decides. A link and a button that say the same words are look-alikes, even when
  // the button is disabled (often the form's own, waiting for its fields); same-role twins are
  // pick's to refuse.
  const best = [...ranked].sort((a, b) => b.score - a.score)[0];
  if (best && best.score >= threshold && best.el.name) {
    const words = normalize(best.el.name);
    const same = ranked.filter(
      (s) => s.el.role !== best.el.role && s.el.facts?.concealed !== true && normalize(s.el.name) === words,
    );
    if (same.length > 0)
      return {
        ok: false,
        reason: `${same.length + 1} elements say '${best.el.name}' (${[best, ...same].map((s) => `${s.el.role}${s.el.states.disabled ? ', disabled' : ''}`).join('; ')}): which one is meant is not said`,
        ranked,
      };
  }
  // "The submit button" names a kind of button as much as its words: when a form the user fills
  // (an identity or password field) has a submit button of its own saying something else, that
  // one may be what is meant, not another form's button that happens to say "Submit".
  if (best && concept === 'xsubmit') {
    const filled = new Set(
      [...page.fields.values()]
        .filter((f) => f.usable && (f.kind === 'identity' || f.kind === 'password') && f.form)
        .map((f) => f.form),
    );
    const other = elements.find(
      (el) =>
        el !== best.el &&
        el.facts?.submit &&
        el.facts.concealed !== true &&
        filled.has(el.facts.form ?? 0) &&
        el.facts.form !== best.el.facts?.form,
    );
    if (other)
      return {
        ok: false,
        reason: `'${best.el.name}' is not the submit button of the form with the fields ([${other.id}] '${other.name}'): which one is meant is not said`,
        ranked,
      };
  }
  return pick(ranked, `the ${want} button`, limits);
}
