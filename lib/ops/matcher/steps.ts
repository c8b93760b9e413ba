/**
 * Compound instructions ("type "ada" into the name field and press Submit", "select A, B and C and
 * click Submit", "type x into y, then click z") split at the obvious joints into single
 * instructions, each of which the one-step parser must read plainly. When any part is not plain,
 * there is no split at all: the whole sentence goes to the model before anything is done, because
 * acting on the first half of a sentence we misread cannot be undone.
 */

import { type ParsedInstruction, parseInstruction } from './parse.ts';
import { HAS_MARKER, lift } from './quotes.ts';

export interface InstructionStep {
  /** The part as a sentence of its own, quotes restored: what `matchInstruction` reads. */
  text: string;
  parsed: ParsedInstruction;
}

const VERBS =
  'click|tap|press|hit|push|type|enter|input|fill|write|put|select|choose|pick|check|uncheck|tick|untick|scroll|go|hover|submit|focus|close|dismiss|open|clear|set|toggle|mark|double[- ]?click|navigate|reload|refresh|follow';
/** Joints that always end a step: ";", "then", "after that", a sentence end before a verb. */
const HARD_JOINT = new RegExp(
  `\\s*;\\s*(?:and\\s+)?(?:then\\s+)?|\\s*,?\\s+(?:and\\s+)?(?:then|after that|afterwards)\\s*,?\\s+|\\s*,\\s*then\\s+|[.!]\\s+(?=(?:then\\s+|and\\s+)?(?:${VERBS})\\b)`,
  'i',
);
/** ", and click", " and press", ", type": a new verb after a comma or "and". */
const SOFT_JOINT = new RegExp(`\\s*,\\s*(?:and\\s+)?(?=(?:${VERBS})\\b)|\\s+and\\s+(?=(?:${VERBS})\\b)`, 'i');
/** "select A, B and C": a list of things to tick, only when commas make it a list. */
const PICK_LIST = /^(select|check|tick|choose|pick|mark)\s+(.+,.+)$/i;
const LIST_SEP = /\s*,\s*(?:and\s+)?|\s+and\s+/i;
/** A list part that is a clause, not an item ("from the dropdown", "into …"). */
const NOT_AN_ITEM = /\s(?:from|into|in|on|to|with|as)\s/i;
const MAX_STEPS = 20;
/** "select nothing and click Submit": the first part asks for no action at all. */
const NOTHING = /^(?:select|check|tick|choose|pick|mark) (?:nothing|none)$/i;
const MARKER_G = /\uE000(\d+)\uE000/g;
/** "Click A, after clicking B": the part after "after" comes first; "before" keeps the order. */
const ORDER_WORD = /^(.+?),?\s+(after|before)\s+([a-z]+ing)\b\s*(.*)$/i;
/** Gerunds back to the imperative, only for the verbs a step may start with. */
const GERUNDS: Record<string, string> = {
  clicking: 'click',
  tapping: 'tap',
  pressing: 'press',
  hitting: 'hit',
  typing: 'type',
  entering: 'enter',
  filling: 'fill',
  selecting: 'select',
  choosing: 'choose',
  picking: 'pick',
  checking: 'check',
  unchecking: 'uncheck',
  ticking: 'tick',
  closing: 'close',
  focusing: 'focus',
};
/** "entering x and pressing y": the joints between the "-ing" steps of an after/before clause. */
const GERUND_JOINT = /\s*(?:,\s*(?:and\s+)?|\s+and\s+)(?:then\s+)?(?=[a-z]+ing\s)/i;

/**
 * "A, after doing B and doing C" → ["do B", "do C", "A"]; "A before doing B" → ["A", "do B"].
 * Every "-ing" step must be a verb we know, or the clause stays whole (and then fails to parse).
 */
function reorder(part: string): string[] {
  const m = ORDER_WORD.exec(part);
  if (!m || !m[4]) return [part];
  const clauses = `${m[3]} ${m[4]}`.split(GERUND_JOINT);
  const steps: string[] = [];
  for (const clause of clauses) {
    const g = /^([a-z]+ing)\s+(.+)$/i.exec(clause.trim());
    const verb = g ? GERUNDS[g[1]!.toLowerCase()] : undefined;
    if (!g || !verb) return [part];
    steps.push(`${verb} ${g[2]}`);
  }
  return m[2]!.toLowerCase() === 'after' ? [...steps, m[1]!] : [m[1]!, ...steps];
}
/** A part whose target still holds a joint ("the field and pressing Submit") was split wrong. */
const LEFTOVER_JOINT = /\s(?:and|then|after|before)\s+[a-z]+ing\b|\s(?:then|after that)\s/i;

function splitAll(text: string, joint: RegExp): string[] {
  const out: string[] = [];
  let rest = text;
  for (let m = joint.exec(rest); m; m = joint.exec(rest)) {
    if (m[0].length === 0) return [text];
    out.push(rest.slice(0, m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  out.push(rest);
  return out;
}

/** "select A, B and C" → "select A", "select B", "select C"; anything else unchanged. */
function expandList(part: string): string[] {
  const m = PICK_LIST.exec(part);
  if (!m || NOT_AN_ITEM.test(` ${m[2]!} `)) return [part];
  const items = m[2]!.split(LIST_SEP).map((i) => i.trim());
  if (items.some((i) => !i)) return [part];
  return items.map((i) => `${m[1]} ${i}`);
}

/** "enter the username "x" and the password "y" into the text fields": one field per value. */
const FIELD_LIST =
  /^(enter|type|input|fill in|put)\s+(.+?)(\s+(?:into|in)\s+(?:the\s+)?(?:(?:text|input)\s+)?(?:fields|boxes|textboxes|inputs))?$/i;
const FIELD_ITEM = /^(?:the\s+|your\s+|my\s+)?([a-z][a-z -]{0,30}?)\s+(\uE000\d+\uE000)$/i;

function expandFields(part: string): string[] {
  const m = FIELD_LIST.exec(part);
  if (!m) return [part];
  const items = m[2]!.split(LIST_SEP).map((i) => FIELD_ITEM.exec(i.trim()));
  if (items.some((i) => !i) || (items.length < 2 && !m[3])) return [part];
  return items.map((i) => `${m[1]} ${i![2]} into the ${i![1]} field`);
}

/** Puts the lifted quotes back, so each part reads as the user wrote it. */
function restore(part: string, values: string[]): string | undefined {
  let ok = true;
  const text = part.replace(MARKER_G, (_, n: string) => {
    const v = values[Number(n)] ?? '';
    if (/^%[A-Za-z_][\w.-]*%$/.test(v)) return v;
    if (!v.includes('"')) return `"${v}"`;
    if (!v.includes('“') && !v.includes('”')) return `“${v}”`;
    ok = false;
    return '';
  });
  return ok && !HAS_MARKER.test(text) ? text.trim() : undefined;
}

/**
 * The steps of a compound instruction, or undefined when it is one step (or not plainly one) or
 * when any part is not a sentence the one-step parser reads.
 */
export function splitInstruction(input: string): InstructionStep[] | undefined {
  const { text, values } = lift(
    input
      .replace(/\u00a0/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
  const body = text.replace(/[\s.!?]+$/, '');
  const all = splitAll(body, HARD_JOINT)
    .flatMap(reorder)
    .flatMap((p) => splitAll(p, SOFT_JOINT))
    .flatMap(expandList)
    .flatMap(expandFields)
    .map((p) => p.trim());
  const parts = all.filter((p) => !NOTHING.test(p));
  if (all.length < 2 || parts.length < 1 || parts.length > MAX_STEPS) return undefined;
  const steps: InstructionStep[] = [];
  for (const part of parts) {
    if (!part) return undefined;
    const restored = restore(part, values);
    if (!restored) return undefined;
    const parsed = parseInstruction(restored);
    if (!parsed || LEFTOVER_JOINT.test(` ${parsed.target?.phrase ?? ''} `)) return undefined;
    steps.push({ text: restored, parsed });
  }
  return steps;
}
