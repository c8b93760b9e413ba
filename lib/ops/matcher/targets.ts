/**
 * The target half of an instruction: the words after the verb read as the element they name — a
 * name with role words around it ("the Sign in button"), a kind alone ("the button", "tab #2"),
 * the open dialog's close control ("the x"), or a kind named as a widget ("a "checkbox" widget").
 */
import { HAS_MARKER, MARKER } from './quotes.ts';

/** The kind of element the words around the phrase name ("the Email field", "the Terms checkbox"). */
export type RoleHint =
  | 'button'
  | 'link'
  | 'field'
  | 'checkbox'
  | 'radio'
  | 'dropdown'
  | 'tab'
  | 'menuitem'
  | 'option'
  | 'switch'
  | 'icon'
  | 'heading';

export interface TargetPhrase {
  /** What names the element, lower-cased unless quoted (quoted text keeps its case). */
  phrase: string;
  roleHint?: RoleHint;
  /** 1-based; -1 = last. */
  ordinal?: number;
  /** The phrase was quoted: the element's text must equal it, not merely contain it. */
  quoted?: boolean;
  /**
   * The phrase with its role words left in ("deep button"): names sometimes include them, and
   * then the role word is part of the name, not a hint.
   */
  full?: string;
  /**
   * The phrase with a leading ordinal word left in ("first aid kit", "last name"): set when that
   * word might be part of the name rather than a count.
   */
  literal?: string;
  /**
   * The words name a kind of element and nothing else ("the button", "the text field", "tab #2"):
   * `phrase` is empty, `roleHint` says which kind and `full` keeps the role word (an element may be
   * called "Button"). Resolved by role alone: the one usable element of that role, or with
   * `ordinal` the nth of them in reading order.
   */
  roleOnly?: boolean;
  /**
   * "close the dialog", "click the x": the control that closes the open dialog (a button named
   * close / × / x / dismiss inside it), whatever the page calls it.
   */
  closes?: 'dialog';
  /** "the OK button in the dialog": only elements inside the open dialog count. */
  within?: 'dialog';
}

// ---------------------------------------------------------------------------------------------
// Targets

const ORDINAL_WORDS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  last: -1,
};

/** Role words, longest first so "radio button" wins over "button". `box` depends on the verb. */
const ROLE_WORDS: [string, RoleHint | 'box'][] = (
  [
    ['radio button', 'radio'],
    ['option button', 'radio'],
    ['radio', 'radio'],
    ['check box', 'checkbox'],
    ['checkbox', 'checkbox'],
    ['tick box', 'checkbox'],
    ['tickbox', 'checkbox'],
    ['toggle', 'switch'],
    ['switch', 'switch'],
    ['button', 'button'],
    ['btn', 'button'],
    ['icon', 'icon'],
    ['hyperlink', 'link'],
    ['link', 'link'],
    ['input textbox', 'field'],
    ['input text box', 'field'],
    ['input text field', 'field'],
    ['text input field', 'field'],
    ['text field', 'field'],
    ['text box', 'field'],
    ['textbox', 'field'],
    ['text input', 'field'],
    ['input field', 'field'],
    ['input box', 'field'],
    ['input', 'field'],
    ['field', 'field'],
    ['textarea', 'field'],
    ['text area', 'field'],
    ['box', 'box'],
    ['drop down menu', 'dropdown'],
    ['drop-down menu', 'dropdown'],
    ['dropdown menu', 'dropdown'],
    ['drop-down', 'dropdown'],
    ['drop down', 'dropdown'],
    ['dropdown', 'dropdown'],
    ['select box', 'dropdown'],
    ['select menu', 'dropdown'],
    ['select', 'dropdown'],
    ['selector', 'dropdown'],
    ['picker', 'dropdown'],
    ['combo box', 'dropdown'],
    ['combobox', 'dropdown'],
    ['list box', 'dropdown'],
    ['listbox', 'dropdown'],
    ['list', 'dropdown'],
    ['menu item', 'menuitem'],
    ['menu', 'dropdown'],
    ['tab', 'tab'],
    ['option', 'option'],
    ['heading', 'heading'],
    ['section', 'heading'],
  ] as [string, RoleHint | 'box'][]
).sort((a, b) => b[0].length - a[0].length);

/**
 * Role words that, alone, mean "the element of that kind" rather than a name. "menu", "icon",
 * "option", "section", "select" stay names: pages call elements that ("Menu", "Select").
 */
const GENERIC_ROLE_WORDS = new Set([
  'radio button',
  'option button',
  'radio',
  'check box',
  'checkbox',
  'tick box',
  'tickbox',
  'toggle',
  'switch',
  'button',
  'btn',
  'hyperlink',
  'link',
  'input textbox',
  'input text box',
  'input text field',
  'text input field',
  'text field',
  'text box',
  'textbox',
  'text input',
  'input field',
  'input box',
  'input',
  'field',
  'textarea',
  'text area',
  'box',
  'drop down menu',
  'drop-down menu',
  'dropdown menu',
  'drop-down',
  'drop down',
  'dropdown',
  'select box',
  'select menu',
  'combo box',
  'combobox',
  'list box',
  'listbox',
  'list',
  'tab',
]);

const LEADING_PREPOSITION = /^(?:on|onto|at|upon|over)\s+/;
const ARTICLE = /^(?:the|a|an)\s+/;
const ORDINAL_PREFIX =
  /^(?:(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)|(\d{1,3})(?:st|nd|rd|th))\s+(?:one of the\s+|of the\s+)?/;
/** "first name" / "last name" are fields, never counts. */
const NAME_COMPOUND = /^(?:first|last)\s+name\b/;
const ORDINAL_SUFFIX = /\s+(?:#\s?|number\s+)(\d{1,3})$/;
const TRAILING_FILLER = /\s+(?:on the page|on this page|on the screen|on screen|please)$/;
/** "the field labelled Email", "the box next to Remember me", "the button that says Go". */
const ROLE_CONNECTOR =
  /^(?:labelled|labeled|called|named|titled|marked|that says|saying|which says|with the text|with text|with the label|with label|for|next to|beside)\s+/;

/**
 * "the button that signs you in", "the link to reset a password", "the button for signing up":
 * a clause saying what the element does, turned into the words its name would use ("sign in").
 */
const WHAT_IT_DOES = /^(?:(that|which)\s+(\S+)|to\s+(\S+)|for\s+(\S+ing))(?:\s+(?:you|me|us|them))?(\s+.*)?$/;

/** "signs" → "sign", "searches" → "search", "signing" → "sign", "logging" → "log". */
export function baseVerb(word: string, form: 's' | 'ing'): string {
  if (form === 'ing') {
    const stem = word.slice(0, -3);
    return /([b-df-hj-np-tv-z])\1$/.test(stem) ? stem.slice(0, -1) : stem;
  }
  if (/(?:ch|sh|ss|x|zz)es$/.test(word)) return word.slice(0, -2);
  if (/[^s]s$/.test(word)) return word.slice(0, -1);
  return word;
}

export function whatItDoes(t: string): string {
  const m = WHAT_IT_DOES.exec(t);
  if (!m) return t;
  const verb = m[2] ? baseVerb(m[2], 's') : m[3] ? m[3] : baseVerb(m[4]!, 'ing');
  return `${verb}${m[5] ?? ''}`.trim();
}

export type Family = 'check' | 'other';

/** "the Cancel button in the dialog", "the button in the dialog box labeled "OK"". */
const IN_DIALOG =
  /^(.*?)\s+(?:in|inside|within|on|of) (?:the|this) (?:dialog|modal|popup|pop-up)(?: box| window)?(?:\s+(labelled|labeled|named|called|titled|that says|saying|with the text)\s+(.+))?$/;
/** "a "checkbox" widget": the quoted word is a kind of element. */
const INDEFINITE = /^(?:a|an|any)\s/;
const WIDGET = /^(\uE000\d+\uE000) widget$/;
const WIDGET_KINDS: Record<string, RoleHint> = {
  button: 'button',
  checkbox: 'checkbox',
  radio: 'radio',
  'radio button': 'radio',
  text: 'field',
  textbox: 'field',
  textarea: 'field',
  link: 'link',
  dropdown: 'dropdown',
  select: 'dropdown',
  tab: 'tab',
};

/** Targets scoped to the open dialog and kinds named as widgets, then the plain reading. */
export function targetOf(raw: string, values: string[], family: Family): TargetPhrase | undefined {
  const t = raw
    .trim()
    .replace(LEADING_PREPOSITION, '')
    .replace(ARTICLE, '')
    .replace(/^any\s+/, '');
  const dialog = IN_DIALOG.exec(t);
  if (dialog?.[1]) {
    const inner = targetOf(dialog[3] ? `${dialog[1]} ${dialog[2]} ${dialog[3]}` : dialog[1], values, family);
    if (!inner || inner.closes) return inner;
    if (CLOSE_GLYPH.test(inner.phrase) && !inner.ordinal) return { ...inner, closes: 'dialog' };
    return { ...inner, within: 'dialog' };
  }
  const widget = WIDGET.exec(t);
  if (widget) {
    const word = (values[Number(widget[1]!.slice(1, -1))] ?? '').toLowerCase();
    const kind = WIDGET_KINDS[word];
    if (!kind) return undefined;
    // "a "checkbox" widget": any one of that kind will do, so the first in reading order.
    const any = INDEFINITE.test(raw.trim().replace(LEADING_PREPOSITION, ''));
    return { phrase: '', roleHint: kind, roleOnly: true, full: word, ...(any ? { ordinal: 1 } : {}) };
  }
  return plainTarget(raw, values, family);
}

/** Turns the words after the verb into a target; undefined when they do not name one element. */
function plainTarget(raw: string, values: string[], family: Family): TargetPhrase | undefined {
  let t = raw.trim().replace(LEADING_PREPOSITION, '').replace(ARTICLE, '').replace(TRAILING_FILLER, '');
  let ordinal: number | undefined;
  let literal: string | undefined;
  const ord = NAME_COMPOUND.test(t) ? null : ORDINAL_PREFIX.exec(t);
  if (ord) {
    ordinal = ord[2] ? Number(ord[2]) : ORDINAL_WORDS[ord[1]!];
    // The count might be the name's own first word ("First Aid Kit", "1st class").
    literal = t;
    t = t.slice(ord[0].length).replace(ARTICLE, '');
  } else {
    const suffix = ORDINAL_SUFFIX.exec(t);
    if (suffix) {
      ordinal = Number(suffix[1]);
      t = t.slice(0, suffix.index);
    }
  }
  if (ordinal === 0) return undefined;

  let hint: RoleHint | 'box' | undefined;
  let full: string | undefined;
  let roleOnly = false;
  if (ROLE_WORDS.some(([word]) => word === t)) {
    // "click the menu": the role word is all there is, so it is the name to look for, unless it
    // is a generic kind ("the button", "the text field") or a count says which one ("the third link").
    if (ordinal !== undefined || GENERIC_ROLE_WORDS.has(t)) {
      hint = ROLE_WORDS.find(([word]) => word === t)![1];
      roleOnly = true;
      full = t;
      t = '';
    }
  } else {
    // Trailing role words first ("the Sign in button"), then leading ones ("the button Sign in").
    const trailing = ROLE_WORDS.find(([word]) => t.endsWith(` ${word}`));
    const leading = trailing ? undefined : ROLE_WORDS.find(([word]) => t.startsWith(`${word} `));
    if (trailing) {
      hint = trailing[1];
      full = t;
      t = t.slice(0, -trailing[0].length - 1).trim();
    } else if (leading) {
      hint = leading[1];
      full = t;
      const rest = t.slice(leading[0].length + 1);
      const does = whatItDoes(rest);
      t = (does !== rest ? does : rest.replace(ROLE_CONNECTOR, '')).replace(ARTICLE, '');
    }
  }
  const roleHint: RoleHint | undefined = hint === 'box' ? (family === 'check' ? 'checkbox' : 'field') : hint;
  const extras = {
    ...(roleHint ? { roleHint } : {}),
    ...(ordinal !== undefined ? { ordinal } : {}),
  };
  if (roleOnly && roleHint) return { phrase: '', ...extras, roleOnly: true, ...(full ? { full } : {}) };

  const quoted = MARKER.exec(t);
  if (quoted) {
    const phrase = values[Number(quoted[1])]!;
    // A quoted variable names a value, never an element.
    if (!phrase || phrase.startsWith('%')) return undefined;
    return { phrase, quoted: true, ...extras };
  }
  // Quoted words mixed with unquoted ones ("the "Add" button for shoes") are beyond this parser.
  if (HAS_MARKER.test(t)) return undefined;
  if (!t) return ordinal !== undefined && roleHint ? { phrase: '', ...extras, roleOnly: true } : undefined;
  return {
    phrase: t,
    ...extras,
    ...(full && full !== t ? { full } : {}),
    ...(literal ? { literal } : {}),
  };
}

/** The target names an element: by words, or by its kind alone ("the button"). */
export const named = (t: TargetPhrase | undefined): t is TargetPhrase =>
  !!t && (!!t.phrase || t.roleOnly === true);

/** A value argument: a quoted string or variable, or (when allowed) bare words such as an option. */
export function valueArg(raw: string, values: string[], allowBare: boolean): string | undefined {
  const t = raw.trim();
  const m = MARKER.exec(t);
  if (m) return values[Number(m[1])];
  if (!allowBare || !t || HAS_MARKER.test(t)) return undefined;
  return t.replace(ARTICLE, '').replace(OPTION_SUFFIX, '').trim() || undefined;
}
const OPTION_SUFFIX = /\s+option$/;

/** "the x", "the ×": what people call a dialog's close control. */
export const CLOSE_GLYPH = /^(?:x|×|✕|✖|╳|⨯|x mark|cross)$/;
/** "by clicking the "x"" / "the close button": the words that name a close control. */
export function closeWord(raw: string, values: string[]): boolean {
  const q = MARKER.exec(raw.trim());
  const word = (q ? (values[Number(q[1])] ?? '') : raw).trim().toLowerCase();
  return (
    CLOSE_GLYPH.test(word) ||
    /^(?:close|dismiss)(?: button| icon| link)?$|^(?:x|×) (?:button|icon)$/.test(word)
  );
}
