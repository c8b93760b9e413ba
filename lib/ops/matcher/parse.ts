/**
 * Reads the plain instructions people type (`click the Sign in button`, `type "ada@x.io" into
 * email`, `select Large from the size dropdown`, `press ctrl+a`) into a verb, a target phrase and a
 * value. It knows a fixed set of sentence shapes and nothing else: anything outside them returns
 * undefined and goes to the model. Guessing a reading here would turn into a wrong click later.
 *
 * Every regular expression lives at module level: parsing runs on each `act`, and compiling
 * patterns per call would cost more than the matching itself.
 */

import { normalizeKey } from './keys.ts';
import { lift, MARKER } from './quotes.ts';
import {
  CLOSE_GLYPH,
  closeWord,
  named,
  type RoleHint,
  type TargetPhrase,
  targetOf,
  valueArg,
} from './targets.ts';

export type { RoleHint, TargetPhrase };
export { normalizeKey };

export type MatchVerb =
  | 'click'
  | 'dblclick'
  | 'fill'
  | 'type'
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

export interface ParsedInstruction {
  verb: MatchVerb;
  target?: TargetPhrase;
  /** Text to enter or option to choose; `%name%` variables stay verbatim. */
  value?: string;
  /** Playwright key name (`Enter`, `Control+Shift+K`). */
  key?: string;
  /** `to`: a percentage is a position in the page; `px`: a relative amount for up/down. */
  scroll?: { to: 'top' | 'bottom' | 'up' | 'down' | number; px?: number };
  /** The verb as written ("tap", "choose"): some readings depend on it. */
  word?: string;
  /**
   * The key was one bare word that could also be an element's name ("press Home"): the decision
   * must check no element is called that before pressing the key.
   */
  keyWord?: string;
  /** "set X to "v"": a field to fill, or a native select to choose "v" in. */
  alsoSelect?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Sentences

const WHITESPACE = /\s+/g;
const TRAILING_PUNCT = /[\s.!?;,]+$/;
const LEADING_FILLER =
  /^(?:(?:please|kindly|now|then|just|also|next|finally|first|ok|okay|so)\s*,?\s+|(?:can|could|would|will) you\s+|(?:go ahead and|i want to|i'd like to|i would like to|i need to|let's|lets|you should|try to)\s+)+/;
const TRAILING_FILLER_SENTENCE = /\s+(?:please|for me|thanks|thank you|right away)$/;
/** Two steps in one sentence: the agent splits those, not the matcher. */
const MULTI_STEP =
  /(?:^|\s)(?:and then|then|after that|afterwards|followed by)\s|;|(?:,|\sand)\s+(?:then\s+)?(?:click|tap|press|hit|type|enter|fill|select|choose|pick|check|uncheck|tick|scroll|go|hover|submit|open|wait|reload|refresh)\b/;
const VAL = '(\\uE000\\d+\\uE000)';
const STRAY_QUOTE = /["“”„«»‹›`]/;

const RE = {
  back: /^(?:(?:go|navigate|head|move) back(?: (?:to the )?(?:one page|a page|previous page|last page))?|back|go to the previous page|return to the previous page)$/,
  forward:
    /^(?:(?:go|navigate|move) forward(?: (?:one page|a page))?|forward|go to the next page in history)$/,
  reload: /^(?:reload|refresh)(?: (?:the|this) page| page)?$|^(?:reload|refresh) the browser$/,
  scrollStep:
    /^scroll(?: the page| the window)? (up|down)(?: (?:a bit|a little bit|a little|some|slightly|once|one page|a page|by one page|by a page|one screen|a screen))?(?: the page| on the page)?$/,
  scrollPx: /^scroll(?: the page| the window)? (up|down)(?: by)? (\d{1,5}) ?(?:px|pixels?)$/,
  scrollEdge:
    /^scroll(?: the page| the window)?(?: all the way)?(?: back)?(?: (?:up|down))? (?:to )?(?:the )?(?:very )?(top|bottom|end|start|beginning)(?: of the (?:page|window|document))?$/,
  scrollAllTheWay: /^scroll all the way (up|down)$/,
  scrollHalf:
    /^scroll(?: the page)?(?: down)?(?: to)?(?: the)? (?:middle|halfway|half way|half-way)(?: down| point| through)?(?: (?:of )?the page)?$/,
  scrollPct:
    /^scroll(?: the page)?(?: down| up)?(?: to)? (\d{1,3}) ?(?:%|percent)(?: of the (?:page|way))?(?: down)?$/,
  scrollTo:
    /^scroll(?: down| up)? (?:to|until you see|until|till|down to|up to) (.+?)(?: is visible| is in view| appears| comes into view| shows up)?$/,
  scrollIntoView: /^scroll (.+?) into view$/,
  press:
    /^(?:press|hit|tap|strike|push)(?: the)? (.+?)( keys?)?(?: on (?:the|your) keyboard)?(?: (?:in|on|inside|into|within|while in) (.+))?$/,
  ensure:
    /^(?:make sure|ensure|be sure) (?:that )?(.+?) is (checked|ticked|selected|on|enabled|unchecked|not checked|unticked|not ticked|off|deselected|not selected)$/,
  fillInto: new RegExp(
    `^(?:type|enter|input|put|write|paste|insert|key in|fill in|fill) ${VAL} (?:into|in to|in|on|inside|within|to|for|as|under) (.+)$`,
  ),
  fillIntoBare:
    /^(?:type|enter|input|put|write|paste|insert|key in|fill in|fill) .+ (?:into|in to|inside|within) .+$/,
  intoType: new RegExp(
    `^(?:in|into|inside|within) (.+?),? (?:type|enter|write|put|input|fill in|paste) ${VAL}$`,
  ),
  fillWith: new RegExp(`^(?:fill in|fill out|fill|populate|complete) (.+?) (?:with|using) ${VAL}$`),
  setTo: /^(?:set|change|update|switch) (.+?) (?:to|as) (.+)$/,
  clear: /^(?:clear|empty|erase|blank)(?: out)? (.+)$/,
  typeOnly: new RegExp(`^(?:type|enter|input|write) ${VAL}$`),
  selectFrom: /^(?:select|choose|pick)(?: the option)? (.+?) (?:from|in|on|for|under|within|of|inside) (.+)$/,
  selectColon: /^(?:select|choose|pick|set) (.+?): (.+)$/,
  uncheck:
    /^(?:uncheck|untick|un-check|un-tick|deselect|unselect|unmark|switch off|turn off|disable)(?: the box (?:for|next to|labelled|labeled|beside))? (.+)$/,
  checkNot: /^check (?:that|if|whether|for|out|to see|again)\b|^mark .+ as (?!checked$)/,
  check:
    /^(?:check|tick|mark|switch on|turn on|enable)(?: the box (?:for|next to|labelled|labeled|beside))? (.+?)(?: as checked)?$/,
  toggle: /^(?:toggle|flip)(?: (on|off))? (.+)$/,
  hover:
    /^(?:hover|mouse over|mouseover|mouse-over|move (?:the )?(?:mouse|cursor|pointer) (?:over|onto|to)|point at|point to)(?: over| on| onto| above)? (.+)$/,
  focus:
    /^(?:focus|put (?:the )?(?:focus|cursor)|place (?:the )?(?:focus|cursor)|set (?:the )?focus|move (?:the )?focus)(?: (?:on|onto|into|in|to|inside|at))? (.+)$/,
  closeDialog:
    /^(?:close|dismiss|exit|shut|hide|get rid of)(?: (?:the|this|that))? (?:dialog|modal|popup|pop-up|pop up|overlay|lightbox|modal dialog|dialog box|dialog window|modal window|popup window)(?: by (?:clicking|pressing|tapping|hitting|using)(?: on)?(?: the)? (.+))?$/,
  dblclick: /^(?:double[- ]?click|dbl[- ]?click|double[- ]?tap)(?: on| at)? (.+)$/,
  click:
    /^((?:left[- ]?|single[- ]?)?click|tap|press|hit|push|open|follow|select|choose|pick|activate|trigger)(?: on| at)? (.+)$/,
} as const;

const SELECT_WORDS = new Set(['select', 'choose', 'pick']);
/** Placeholder before the first shape matched; never read (every branch reads `m` after a hit). */
const NO_MATCH = [] as unknown as RegExpExecArray;
const CHECKABLE_HINTS = new Set<RoleHint>(['checkbox', 'radio', 'switch']);

/** Lower-cases everything but the markers' contents (kept in `values`, so nothing to do). */
function prepare(lifted: string): string {
  let s = lifted.replace(WHITESPACE, ' ').trim().toLowerCase();
  s = s.replace(TRAILING_PUNCT, '');
  s = s.replace(LEADING_FILLER, '');
  s = s.replace(TRAILING_FILLER_SENTENCE, '');
  return s.replace(TRAILING_PUNCT, '');
}

export function parseInstruction(input: string): ParsedInstruction | undefined {
  const { text, values } = lift(input.replace(/\u00a0/g, ' ').trim());
  const s = prepare(text);
  // A quote that never closed: where the value ends is a guess.
  if (!s || STRAY_QUOTE.test(s)) return undefined;
  if (MULTI_STEP.test(s) && !RE.intoType.test(s)) return undefined;
  let m = NO_MATCH;
  /** Tries a shape; its groups stay in `m` for the branch that follows. */
  const on = (re: RegExp): boolean => {
    const hit = re.exec(s);
    if (hit) m = hit;
    return hit !== null;
  };

  if (RE.back.test(s)) return { verb: 'back' };
  if (RE.forward.test(s)) return { verb: 'forward' };
  if (RE.reload.test(s)) return { verb: 'reload' };

  if (s.startsWith('scroll')) {
    if (on(RE.scrollStep)) return { verb: 'scroll', scroll: { to: m[1] as 'up' | 'down' } };
    if (on(RE.scrollPx)) return { verb: 'scroll', scroll: { to: m[1] as 'up' | 'down', px: Number(m[2]) } };
    if (on(RE.scrollAllTheWay)) return { verb: 'scroll', scroll: { to: m[1] === 'up' ? 'top' : 'bottom' } };
    if (on(RE.scrollEdge)) {
      const edge = m[1] === 'top' || m[1] === 'start' || m[1] === 'beginning' ? 'top' : 'bottom';
      return { verb: 'scroll', scroll: { to: edge } };
    }
    if (RE.scrollHalf.test(s)) return { verb: 'scroll', scroll: { to: 50 } };
    if (on(RE.scrollPct)) {
      const pct = Number(m[1]);
      return pct <= 100 ? { verb: 'scroll', scroll: { to: pct } } : undefined;
    }
    if (on(RE.scrollTo) || on(RE.scrollIntoView)) {
      const target = targetOf(m[1]!, values, 'other');
      return target?.phrase ? { verb: 'scroll', target } : undefined;
    }
    return undefined;
  }

  if (on(RE.press)) {
    const explicit = m[2] !== undefined;
    const key = normalizeKey(m[1]!, explicit);
    if (key) {
      const target = m[3] ? targetOf(m[3], values, 'other') : undefined;
      if (m[3] && !named(target)) return undefined;
      // A bare word such as "home" or "delete" may be a button's name as much as a key.
      const bare = !explicit && !target && !key.includes('+') && /^[a-z]+$/.test(m[1]!);
      return {
        verb: 'press',
        key,
        word: 'press',
        ...(target ? { target } : {}),
        ...(bare ? { keyWord: m[1]! } : {}),
      };
    }
  }

  if (on(RE.ensure)) {
    const off = /^(?:un|not|off|deselected)/.test(m[2]!);
    const target = targetOf(m[1]!, values, 'check');
    return named(target) ? { verb: off ? 'uncheck' : 'check', target, word: 'ensure' } : undefined;
  }

  // "focus into the textbox": a click that only focuses, so only a field may take it; a button
  // would be pressed.
  if (on(RE.focus)) {
    const target = targetOf(m[1]!, values, 'other');
    if (!named(target) || (target.roleHint && target.roleHint !== 'field')) return undefined;
    return { verb: 'click', target: { ...target, roleHint: 'field' }, word: 'focus' };
  }
  if (on(RE.closeDialog) && (!m[1] || closeWord(m[1], values)))
    return {
      verb: 'click',
      target: { phrase: 'close', roleHint: 'button', closes: 'dialog' },
      word: 'close',
    };

  // Text entry. The text must be quoted (or a variable): bare words' extent and case are guesses.
  if (on(RE.fillInto)) {
    const value = valueArg(m[1]!, values, false);
    const target = targetOf(m[2]!, values, 'other');
    return value !== undefined && named(target) ? { verb: 'fill', value, target, word: 'type' } : undefined;
  }
  if (RE.fillIntoBare.test(s)) return undefined;
  if (on(RE.intoType)) {
    const value = valueArg(m[2]!, values, false);
    const target = targetOf(m[1]!, values, 'other');
    return value !== undefined && named(target) ? { verb: 'fill', value, target, word: 'type' } : undefined;
  }
  if (on(RE.fillWith)) {
    const value = valueArg(m[2]!, values, false);
    const target = targetOf(m[1]!, values, 'other');
    return value !== undefined && named(target) ? { verb: 'fill', value, target, word: 'fill' } : undefined;
  }
  if (on(RE.setTo)) {
    const target = targetOf(m[1]!, values, 'other');
    if (!named(target)) return undefined;
    const quoted = MARKER.test(m[2]!.trim());
    const value = valueArg(m[2]!, values, true);
    if (value === undefined) return undefined;
    if (target.roleHint === 'dropdown' || !quoted) {
      // A bare word can only be an option: the select's option list proves or refutes it.
      if (target.roleHint && target.roleHint !== 'dropdown') return undefined;
      return { verb: 'select', value, target, word: 'set' };
    }
    return { verb: 'fill', value, target, word: 'set', alsoSelect: true };
  }
  if (on(RE.clear)) {
    const target = targetOf(m[1]!, values, 'other');
    // Only with a field word: "clear filters" is much more likely a button.
    return named(target) && target.roleHint === 'field'
      ? { verb: 'fill', value: '', target, word: 'clear' }
      : undefined;
  }
  if (on(RE.typeOnly)) {
    const value = valueArg(m[1]!, values, false);
    return value !== undefined ? { verb: 'type', value, word: 'type' } : undefined;
  }

  // "select "x" from the size dropdown" names the value first; "select size: Large" the control.
  if (on(RE.selectFrom)) {
    const value = valueArg(m[1]!, values, true);
    const target = targetOf(m[2]!, values, 'other');
    return value !== undefined && named(target)
      ? { verb: 'select', value, target, word: 'select' }
      : undefined;
  }
  if (on(RE.selectColon)) {
    const target = targetOf(m[1]!, values, 'other');
    const value = valueArg(m[2]!, values, true);
    return value !== undefined && named(target)
      ? { verb: 'select', value, target, word: 'select' }
      : undefined;
  }

  if (on(RE.uncheck)) {
    const target = targetOf(m[1]!, values, 'check');
    return named(target) ? { verb: 'uncheck', target, word: 'uncheck' } : undefined;
  }
  if (RE.checkNot.test(s)) return undefined;
  if (on(RE.check)) {
    const target = targetOf(m[1]!, values, 'check');
    return named(target) ? { verb: 'check', target, word: 'check' } : undefined;
  }
  if (on(RE.toggle)) {
    const target = targetOf(m[2]!, values, 'check');
    if (!named(target)) return undefined;
    const verb = m[1] === 'on' ? 'check' : m[1] === 'off' ? 'uncheck' : 'toggle';
    return { verb, target, word: 'toggle' };
  }
  if (on(RE.hover)) {
    const target = targetOf(m[1]!, values, 'other');
    return named(target) ? { verb: 'hover', target, word: 'hover' } : undefined;
  }
  if (on(RE.dblclick)) {
    const target = targetOf(m[1]!, values, 'other');
    return named(target) ? { verb: 'dblclick', target, word: 'double-click' } : undefined;
  }
  if (on(RE.click)) {
    const word = m[1]!.replace(/^(?:left|single)[- ]?/, '');
    const target = targetOf(m[2]!, values, SELECT_WORDS.has(word) ? 'check' : 'other');
    if (!named(target)) return undefined;
    // "click the x": the close control of the open dialog, which pages rarely call "x".
    if (CLOSE_GLYPH.test(target.phrase.toLowerCase()) && target.ordinal === undefined)
      return { verb: 'click', target: { ...target, closes: 'dialog' }, word };
    // "select the Terms checkbox" means tick it, which a click would undo if it were ticked.
    if (SELECT_WORDS.has(word) && target.roleHint && CHECKABLE_HINTS.has(target.roleHint))
      return { verb: 'check', target, word };
    return { verb: 'click', target, word };
  }
  return undefined;
}
