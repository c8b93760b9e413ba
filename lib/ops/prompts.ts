import type { Snapshot } from '../perception/types.ts';

/**
 * Prompts are ours, short, and split so the system part never changes between calls (providers
 * cache it); everything page- or call-specific goes in the user message.
 */

const OUTLINE = `The page is given as an outline: one element per line, indented under its container. \
"[id] role: name" lines are elements you can use, followed by their value and state; lines without an id are text for context.`;

const PLACEHOLDERS = `Words like %name% stand for values the user keeps private. Copy them exactly as written into arguments; never guess a real value.`;

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

export const OBSERVE_SYSTEM = `You help a user find things on a web page. Given an instruction and the page, list the elements that match it, best first, each with the method a user would apply and its arguments (same methods as a browser: click, fill [text], type [text], press [key], select [option], check, uncheck, hover, scroll).
${OUTLINE}
Only list ids shown in the outline. Describe each element in a few words a person would recognise. Return an empty list when nothing matches. ${PLACEHOLDERS}`;

export const EXTRACT_SYSTEM = `You read web pages and return the data a user asks for, in the given JSON shape.
${OUTLINE}
Rules:
- Copy text exactly as it appears on the page; do not invent, translate or summarise values unless asked.
- When asked for a list or for "all" of something, include every matching item you see.
- Fields that ask for a link or URL take the number of the element id [N] whose link is meant, never a written URL.
- You may see the page in parts. You get what was extracted so far: return the complete, updated result. Set done to true as soon as the result satisfies the instruction; set it to false only when later parts of the page may still hold requested data.`;

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
