/**
 * Reads the plain instructions people type (`click the Sign in button`, `type "ada@x.io" into
 * email`, `select Large from the size dropdown`) into a verb, a target phrase and a value.
 * Anything it does not recognise returns undefined: the model gets it instead.
 */

export type MatchVerb =
  | 'click'
  | 'dblclick'
  | 'fill'
  | 'select'
  | 'check'
  | 'uncheck'
  | 'toggle'
  | 'press'
  | 'scroll'
  | 'back'
  | 'forward'
  | 'reload'
  | 'hover';

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
  | 'switch';

export interface TargetPhrase {
  phrase: string;
  /** The phrase was quoted: the name must match it exactly. */
  exact: boolean;
  roleHint?: RoleHint;
  /** The role words as written ("button"), since names sometimes include them ("Deep button"). */
  roleWords?: string;
  /** 1-based; -1 = last. */
  ordinal?: number;
}

export interface ParsedInstruction {
  verb: MatchVerb;
  target?: TargetPhrase;
  value?: string;
  key?: string;
  scroll?: { to: 'top' | 'bottom' | 'up' | 'down' | number };
}

const QUOTE_PAIRS: [string, string][] = [
  ['"', '"'],
  ['“', '”'],
  ['‘', '’'],
  ['«', '»'],
  ['`', '`'],
  ["'", "'"],
];

const ORDINALS: Record<string, number> = {
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

const ROLE_WORDS: [RegExp, RoleHint][] = [
  [/\b(?:radio button|radio|option button)$/, 'radio'],
  [/\b(?:check ?box|tick ?box)$/, 'checkbox'],
  [/\b(?:toggle|switch)$/, 'switch'],
  [/\b(?:button|btn)$/, 'button'],
  [/\b(?:link|hyperlink)$/, 'link'],
  [/\b(?:text field|text box|textbox|input field|input box|field|input|box|textarea|text area)$/, 'field'],
  [/\b(?:drop-?down|drop down menu|select box|select|picker|combo ?box|list ?box|menu)$/, 'dropdown'],
  [/\b(?:tab)$/, 'tab'],
  [/\b(?:menu item)$/, 'menuitem'],
  [/\b(?:option)$/, 'option'],
];

const KEY_NAMES: Record<string, string> = {
  enter: 'Enter',
  return: 'Enter',
  tab: 'Tab',
  escape: 'Escape',
  esc: 'Escape',
  space: 'Space',
  spacebar: 'Space',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
};
const MODIFIERS: Record<string, string> = {
  ctrl: 'Control',
  control: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  meta: 'Meta',
  alt: 'Alt',
  option: 'Alt',
  shift: 'Shift',
};

/** `ctrl+shift+k` → `Control+Shift+K`; `enter` → `Enter`; undefined when it is not a key. */
export function normalizeKey(text: string): string | undefined {
  const parts = text
    .toLowerCase()
    .replace(/\s*\+\s*/g, '+')
    .replace(/\s+key$/, '')
    .split('+');
  const out: string[] = [];
  for (const [i, raw] of parts.entries()) {
    const p = raw.replace(/\s+/g, '');
    const last = i === parts.length - 1;
    if (!last) {
      const mod = MODIFIERS[p];
      if (!mod) return undefined;
      out.push(mod);
      continue;
    }
    if (KEY_NAMES[p]) out.push(KEY_NAMES[p]!);
    else if (/^f([1-9]|1[0-2])$/.test(p)) out.push(p.toUpperCase());
    else if (/^[a-z0-9]$/.test(p) && parts.length > 1) out.push(p.toUpperCase());
    else return undefined;
  }
  return out.join('+');
}

/** Pulls out quoted values and `%variables%`, leaving `\uE000N\uE000` markers in the text. */
function lift(text: string): { text: string; values: string[] } {
  const values: string[] = [];
  let out = text.replace(/%[A-Za-z_][\w.-]*%/g, (m) => {
    values.push(m);
    return `\uE000${values.length - 1}\uE000`;
  });
  for (const [open, close] of QUOTE_PAIRS) {
    const o = open.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const c = close.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // A straight apostrophe only quotes when it sits at a word edge ("don't" stays a word).
    const re = open === "'" ? /(^|\s)'([^']+)'(?=$|[\s.,!?])/g : new RegExp(`${o}([^${c}]*)${c}`, 'g');
    out = out.replace(re, (...m: string[]) => {
      const inner = open === "'" ? m[2]! : m[1]!;
      values.push(inner);
      return `${open === "'" ? m[1] : ''}\uE000${values.length - 1}\uE000`;
    });
  }
  return { text: out, values };
}

const FILLER = /^(?:please\s+|kindly\s+|now\s+|then\s+|just\s+|can you\s+|could you\s+)+/;

function targetOf(raw: string, values: string[]): TargetPhrase | undefined {
  let t = raw.trim().replace(/^(?:on|at|onto|in|into|inside|over)\s+/, '');
  t = t.replace(/^(?:the|a|an)\s+/, '');
  let ordinal: number | undefined;
  const ord =
    /^(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|(\d+)(?:st|nd|rd|th))\s+/.exec(
      t,
    );
  if (ord) {
    ordinal = ord[2] ? Number(ord[2]) : ORDINALS[ord[1]!];
    t = t.slice(ord[0].length);
  }
  let roleHint: RoleHint | undefined;
  let roleWords: string | undefined;
  for (const [re, hint] of ROLE_WORDS) {
    const found = re.exec(t);
    if (found) {
      roleHint = hint;
      roleWords = found[0];
      t = t.slice(0, found.index).trim();
      break;
    }
  }
  t = t.replace(/\s+(?:on the page|on this page|here)$/, '').trim();
  const quoted = /^\uE000(\d+)\uE000$/.exec(t);
  const hint = {
    ...(roleHint ? { roleHint } : {}),
    ...(roleWords ? { roleWords } : {}),
    ...(ordinal ? { ordinal } : {}),
  };
  if (quoted) return { phrase: values[Number(quoted[1])]!, exact: true, ...hint };
  if (t.includes('\uE000')) return undefined;
  if (!t) return undefined;
  return { phrase: t, exact: false, ...hint };
}

function valueArg(raw: string, values: string[], allowBare: boolean): string | undefined {
  const t = raw.trim();
  const m = /^\uE000(\d+)\uE000$/.exec(t);
  if (m) return values[Number(m[1])];
  if (!allowBare || !t || t.includes('\uE000')) return undefined;
  return t.replace(/^(?:the|a|an)\s+/, '').replace(/\s+option$/, '');
}

export function parseInstruction(input: string): ParsedInstruction | undefined {
  const { text: lifted, values } = lift(input.trim());
  const s = lifted
    .replace(/\s+/g, ' ')
    .replace(/[.!?]+$/, '')
    .trim()
    .replace(/[A-Z]/g, (c) => c.toLowerCase())
    .replace(FILLER, '');
  let m = [] as unknown as RegExpExecArray;
  /** Tries a pattern; the match stays in `m` for the branch that follows. */
  const on = (re: RegExp): boolean => {
    const hit = re.exec(s);
    if (hit) m = hit;
    return hit !== null;
  };

  if (/^(?:go|navigate|head) back(?: to the previous page)?$|^back$/.test(s)) return { verb: 'back' };
  if (/^(?:go|navigate) forward$|^forward$/.test(s)) return { verb: 'forward' };
  if (/^(?:reload|refresh)(?: the)?(?: page)?$/.test(s)) return { verb: 'reload' };

  if (on(/^scroll (up|down)(?: a bit| the page| one page)?$/))
    return { verb: 'scroll', scroll: { to: m[1] as 'up' } };
  if (on(/^scroll(?: all the way)?(?: to)?(?: the)? (top|bottom)(?: of the page)?$/))
    return { verb: 'scroll', scroll: { to: m[1] as 'top' } };
  if (
    /^scroll(?: down)?(?: to)?(?: the)? (?:middle|halfway|half way)(?: down)?(?: the page)?$|^scroll halfway down$/.test(
      s,
    )
  )
    return { verb: 'scroll', scroll: { to: 50 } };
  if (on(/^scroll(?: down)?(?: to)? (\d{1,3}) ?%(?: of the page)?$/))
    return { verb: 'scroll', scroll: { to: Number(m[1]) } };
  if (on(/^scroll(?: down| up)? (?:to|until you see) (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'scroll', target } : undefined;
  }

  if (on(/^(?:press|hit|tap|type) (?:the )?(.+?)(?: key)?(?: (?:in|on|inside) (.+))?$/)) {
    const key = normalizeKey(m[1]!);
    if (key) {
      const target = m[2] ? targetOf(m[2], values) : undefined;
      if (m[2] && !target) return undefined;
      return { verb: 'press', key, ...(target ? { target } : {}) };
    }
  }

  if (on(/^(?:type|enter|fill in|fill|input|put|write|paste) (.+?) (?:into|in|on|inside|to) (.+)$/)) {
    const value = valueArg(m[1]!, values, false);
    const target = targetOf(m[2]!, values);
    return value !== undefined && target ? { verb: 'fill', value, target } : undefined;
  }
  if (on(/^(?:fill in|fill out|fill|set|complete|enter) (.+?) (?:with|to|as) (.+)$/)) {
    const target = targetOf(m[1]!, values);
    const value = valueArg(m[2]!, values, true);
    if (!target || value === undefined) return undefined;
    // "set the size dropdown to Large" selects; "set email to 'x'" fills: the target decides.
    if (target.roleHint === 'dropdown') return { verb: 'select', value, target };
    // Text to type must be quoted: a bare word's case and extent are guesses.
    return /^\uE000\d+\uE000$/.test(m[2]!.trim()) ? { verb: 'fill', value, target } : undefined;
  }
  if (on(/^(?:select|choose|pick) (.+?) (?:from|in|on|for|under) (.+)$/)) {
    const value = valueArg(m[1]!, values, true);
    const target = targetOf(m[2]!, values);
    return value !== undefined && target ? { verb: 'select', value, target } : undefined;
  }
  if (on(/^(?:uncheck|untick|un-check|deselect|unselect|clear the checkbox) (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'uncheck', target } : undefined;
  }
  if (on(/^(?:check|tick|mark) (.+?)(?: as checked)?$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'check', target } : undefined;
  }
  if (on(/^toggle (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'toggle', target } : undefined;
  }
  if (on(/^(?:hover|mouse over|mouseover|move the mouse over|point at)(?: over| on)? (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'hover', target } : undefined;
  }
  if (on(/^double[- ]?click(?: on)? (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'dblclick', target } : undefined;
  }
  if (on(/^(?:click|tap|press|hit|push|open|follow|select|choose|activate)(?: on)? (.+)$/)) {
    const target = targetOf(m[1]!, values);
    return target ? { verb: 'click', target } : undefined;
  }
  return undefined;
}
