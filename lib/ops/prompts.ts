import type { Snapshot } from '../perception/types.ts';

/**
 * Prompts are ours, short, and split so the system part never changes between calls (providers
 * cache it); everything page- or call-specific goes in the user message.
 */

const OUTLINE = `The page is an outline, one node per line, indented under its parent: \
"[id] role: name" lines are elements, then value and state; lines without an id are text.`;

const PLACEHOLDERS = `A word like %name% stands for a value the user keeps private: copy it into arguments exactly as written, never guess the real value.`;

export const ACT_SYSTEM = `You operate a web browser for a user. Given an instruction and the current page, pick the single element that carries it out and how to use it.
${OUTLINE}
Methods and their arguments:
- click, dblclick, hover, check, uncheck: no arguments
- fill: [text] replaces the field's content; type: [text] adds keystrokes
- press: [key] such as "Enter", "Tab", "Escape", "Control+A"
- select: [option label] only for a native combobox that lists options=[…]
- scroll: ["top" | "bottom" | "50%" | "+600" | "-600"]
Rules:
- elementId must be an id shown in the outline. If nothing fits, return elementId null and explain in reason.
- ${PLACEHOLDERS}
- A dropdown without options=[…] is custom: click it and set twoStep to true; you will then see the options that appeared.
- When several elements fit, prefer the visible, enabled one whose name matches the instruction best.`;

export const TWO_STEP_SYSTEM = `You operate a web browser for a user. The previous click opened a menu or list. Given the instruction and ONLY the elements that just appeared, pick the one that completes the instruction.
${OUTLINE}
Use the methods click, check or select as needed. If none of them fits, return elementId null. ${PLACEHOLDERS}`;

const OBSERVE_BASE = `List the page's elements that match the user's instruction, best first: a short description of each, the method to use and its arguments (fill, type: [text]; press: [key]; select: [option]; scroll: [position]; others: []). Only ids from the outline; an empty list when nothing matches.
${OUTLINE}`;

/** Observe's system prompt; the rule about %placeholders% only when the instruction has one. */
export function observeSystem(opts: { placeholders: boolean }): string {
  return opts.placeholders ? `${OBSERVE_BASE}\n${PLACEHOLDERS}` : OBSERVE_BASE;
}

const EXTRACT_BASE = `You read a web page and return the data the user asks for, in the given JSON shape.
${OUTLINE}
Copy text exactly as it appears; never invent, translate or summarise unless asked. For a list or "all" of something, include every matching item.`;

const EXTRACT_LINKS = `Fields asking for a link or URL take the number N of the element [N] whose link is meant, never a written URL.`;

const EXTRACT_PARTS = `You see the page in parts, with what was extracted so far: return the complete, updated result. Set done to true once it satisfies the instruction, false only while later parts may still hold requested data.`;

/**
 * Extract's system prompt: the rule about links only when the schema asks for one, the rules about
 * parts only for a page read in parts (a one-part read ends after its reply whatever `done` says).
 * Each of the four variants stays the same from call to call, so providers still cache it.
 */
export function extractSystem(opts: { links: boolean; parts: boolean }): string {
  return [EXTRACT_BASE, opts.links ? EXTRACT_LINKS : '', opts.parts ? EXTRACT_PARTS : '']
    .filter(Boolean)
    .join('\n');
}

/**
 * A system prompt with the caller's standing instructions after ours. They stay the same from call
 * to call of a session, so the provider still caches the whole system part.
 */
export function withGuidance(system: string, guidance: string | undefined): string {
  const text = guidance?.trim();
  return text
    ? `${system}\nThe user's standing instructions (follow them where they apply):\n${text}`
    : system;
}

export const VISION_NOTE = `A screenshot of the visible part of the page is attached; each coloured box is labelled with the same id as the outline.`;

export function pageHeader(snapshot: Snapshot): string {
  return `Page: ${snapshot.title || '(untitled)'} — ${snapshot.url}`;
}

export function actUser(instruction: string, snapshot: Snapshot, note?: string): string {
  return `Instruction: ${instruction}\n${note ? `Note: ${note}\n` : ''}\n${pageHeader(snapshot)}\n${snapshot.tree}`;
}

export function twoStepUser(instruction: string, appeared: string): string {
  return `Instruction: ${instruction}\n\nElements that appeared after the click:\n${appeared}`;
}

export function observeUser(instruction: string, snapshot: Snapshot): string {
  return `Instruction: ${instruction}\n\n${pageHeader(snapshot)}\n${snapshot.tree}`;
}

export function extractUser(
  instruction: string,
  snapshot: Snapshot,
  part: { index: number; total: number },
  soFar: unknown,
): string {
  const progress =
    part.total > 1
      ? `Part ${part.index + 1} of ${part.total} of the page.\nExtracted so far: ${soFar === undefined ? 'nothing yet' : JSON.stringify(soFar)}\n`
      : '';
  return `Instruction: ${instruction}\n${progress}\n${pageHeader(snapshot)}\n${snapshot.tree}`;
}
