/**
 * Set-of-marks mode for scenarios (`vision: "som"`): the decision model sees the viewport with a
 * numbered box on every element (the same ids as the outline, drawn by perception/som.ts) and an
 * element map (id → role, name, value) to tell look-alike boxes apart; the outline itself is cut
 * down to the page's text. Two look commands let the model ask for a picture within an iteration:
 * `refresh_som_markers` (the page again, freshly marked: after an animation or a late load) and
 * `view_previous_screenshot` (the picture the previous iteration started from). Pictures asked for
 * cost tokens and invite dithering, so a step gets at most 3 of them, and asking for a picture it
 * already has (nothing changed) stops the asking for the rest of the step — the model is told so.
 */
import { createHash } from 'node:crypto';
import type { CDPSession, Page } from 'playwright-core';
import { z } from 'zod';
import type { LlmClient, MessagePart, Usage } from '../llm/types.ts';
import { addUsage, LlmError } from '../llm/types.ts';
import { setOfMarks } from '../perception/som.ts';
import type { Snapshot } from '../perception/types.ts';
import { type CoordinateCommand, CoordinateCommandSchema } from './coordinate-fallback.ts';
import {
  ActionCommandSchema,
  type Command,
  type Decision,
  DecisionSchema,
  VerificationCommandSchema,
} from './decision.ts';

/**
 * `text` (the default): the outline only — no image tokens (a picture costs about as much as a
 * 1,000-token outline on every iteration), and any model can run it. `som`: for pages whose meaning
 * is visual (icons, canvas, dense dashboards), the picture with markers and the element map.
 */
export const VISION_MODES = ['text', 'som'] as const;
export type VisionMode = (typeof VISION_MODES)[number];

export const SCREENSHOT_BUDGET_PER_STEP = 3;

export const LOOK_TOOLS = ['refresh_som_markers', 'view_previous_screenshot'] as const;
export type LookTool = (typeof LOOK_TOOLS)[number];

export const LookCommandSchema = z.object({
  kind: z.literal('look'),
  tool: z
    .enum(LOOK_TOOLS)
    .describe(
      'refresh_som_markers: the page again, freshly marked (new ids); view_previous_screenshot: the picture the previous iteration started from',
    ),
});
export type LookCommand = z.infer<typeof LookCommandSchema>;

export type ModeCommand = Command | CoordinateCommand | LookCommand;
export type ModeDecision = Omit<Decision, 'commands'> & { commands: ModeCommand[] };

/**
 * The decision schema for what is offered this call: the plain one when neither looks nor
 * coordinates are (so text mode sends exactly what it always did). Pure.
 */
export function decisionSchemaFor(o: { looks: boolean; coordinates: boolean }): z.ZodType<ModeDecision> {
  if (!o.looks && !o.coordinates) return DecisionSchema as unknown as z.ZodType<ModeDecision>;
  const kinds = [
    ActionCommandSchema,
    VerificationCommandSchema,
    ...(o.coordinates ? [CoordinateCommandSchema] : []),
    ...(o.looks ? [LookCommandSchema] : []),
  ] as unknown as [typeof ActionCommandSchema, typeof VerificationCommandSchema];
  return DecisionSchema.extend({
    commands: z
      .array(z.discriminatedUnion('kind', kinds))
      .max(12)
      .describe(
        `run in order; actions and verifications mixed${o.coordinates ? '; coordinate commands point at the picture' : ''}${o.looks ? '; a look command asks for a picture first (the rest waits for your next answer)' : ''}`,
      ),
  }) as unknown as z.ZodType<ModeDecision>;
}

const q = (s: string) => `"${s.replace(/\s+/g, ' ').trim().slice(0, 80)}"`;

/** id → role: name (value, states) for every marked element, one line each, as the outline writes it. Pure. */
export function elementMap(snap: Snapshot): string {
  const lines: string[] = [];
  for (const e of snap.elements) {
    if (!e.inViewport || !e.box) continue;
    let line = `[${e.id}] ${e.role}${e.name ? `: ${e.name.replace(/\s+/g, ' ').trim().slice(0, 80)}` : ''}`;
    if (e.value !== undefined && e.value !== e.name) line += ` value=${q(e.value)}`;
    if (e.placeholder && e.placeholder !== e.name) line += ` placeholder=${q(e.placeholder)}`;
    if (e.states.checked !== undefined) line += e.states.checked === true ? ' checked' : ' unchecked';
    if (e.states.disabled) line += ' disabled';
    if (e.states.expanded !== undefined) line += e.states.expanded ? ' expanded' : ' collapsed';
    lines.push(line);
  }
  return lines.length ? lines.join('\n') : '(no marked element in the viewport)';
}

/**
 * The outline cut down for set-of-marks mode: its element lines are replaced by the element map
 * (the picture carries layout and ids), its text lines are kept up to `maxChars` so verifications
 * can still quote what the page says. Pure.
 */
export function somPageText(snap: Snapshot, maxChars = 1500): string {
  const text: string[] = [];
  let used = 0;
  for (const raw of snap.tree.split('\n')) {
    const line = raw.trim();
    if (!line || /^\[\d+\]/.test(line)) continue;
    if (used + line.length > maxChars) {
      text.push('… (more text below; scroll or use CSS selectors)');
      break;
    }
    text.push(line);
    used += line.length + 1;
  }
  return `Marked elements (the numbers on the picture → role: name):\n${elementMap(snap)}\n\nText on the page (trimmed):\n${text.join('\n') || '(none)'}`;
}

/** Added to the system prompt in set-of-marks mode (constant for the whole scenario: it caches). */
export const SOM_SYSTEM = `

Set-of-marks mode: each call also carries a screenshot of the viewport. Every element with an id has a coloured box and its id in a small label of the same colour at the box's top-left corner (above it when there is room). The ids are the outline's ids; the element map under "Marked elements" gives each id's role and name — use it when two boxes look alike. Only the viewport is pictured: scroll to reach the rest, and act only on what you can see.
Look commands ask for a picture before acting: {"kind":"look","tool":"refresh_som_markers"} (the page now, marked again with new ids — after an animation or a late load) or {"kind":"look","tool":"view_previous_screenshot"} (the picture the previous iteration started from, to compare). The other commands of an answer that asks for a look are not run; you answer again with the picture. At most ${SCREENSHOT_BUDGET_PER_STEP} pictures per step; a picture you already have is not sent twice.`;

export const hashPicture = (image: Buffer): string => createHash('sha256').update(image).digest('hex');

/** Verdict on a look, before taking it (budget) and after (repeat). Pure. */
export function lookVerdict(
  state: { asked: number; closed?: string },
  hash: string | undefined,
  inConversation: ReadonlySet<string>,
): 'send' | 'budget' | 'repeat' | 'closed' {
  if (state.closed) return 'closed';
  if (state.asked >= SCREENSHOT_BUDGET_PER_STEP) return 'budget';
  if (hash !== undefined && inConversation.has(hash)) return 'repeat';
  return 'send';
}

/** A picture for the model: its bytes, their media type, and a hash to notice the same picture again. */
export interface Picture {
  image: Buffer;
  mediaType: 'image/png' | 'image/jpeg';
  hash: string;
}

/**
 * How the model's picture is encoded: PNG with the encoder's fastest setting (still lossless, so
 * marker colours and secret covers are exact). Measured against JPEG quality 80 on the corpus
 * (bench:scenarios-som, the formats taken in turn): the capture of an unchanged page p50 40–41 ms
 * as fast PNG, 49–50 ms as JPEG (Chrome's JPEG encode is the slower one here), PNG 97 kB vs 65 kB.
 */
export const PICTURE_CAPTURE = { format: 'png', optimizeForSpeed: true } as const;
export const PICTURE_MEDIA_TYPE = 'image/png' as const;

const sessions = new WeakMap<Page, Promise<CDPSession | undefined>>();

/** A CDP session of our own for the page (made once, kept); undefined when it has none (not Chromium). */
function sessionOf(page: Page): Promise<CDPSession | undefined> {
  let session = sessions.get(page);
  if (!session) {
    session = page
      .context()
      .newCDPSession(page)
      .catch(() => undefined);
    sessions.set(page, session);
  }
  return session;
}

type EvalReply = { exceptionDetails?: { text: string; exception?: { description?: string } } };

/**
 * The viewport with markers (and a ring where the last coordinate click landed, when given), drawn,
 * pictured and removed in one pass; secrets masked as perception does. Over a CDP session of our
 * own: the overlay drawn by a bare `Runtime.evaluate` (Playwright's evaluate costs a few ms more a
 * call: bench:scenarios-som), the viewport captured as fast PNG in one round trip (Playwright's
 * screenshot adds round trips for fonts, caret and scale), and the overlay's removal sent but not
 * waited for: the runner reads the page again only after the model answers. Playwright's evaluate
 * and PNG screenshot when the page has no CDP (not Chromium).
 */
export async function capturePicture(
  page: Page,
  snap: Snapshot,
  opts: { secrets?: Record<string, string>; marker?: { x: number; y: number } } = {},
): Promise<Picture> {
  const cdp = await sessionOf(page);
  const run = async (expression: string): Promise<unknown> => {
    const reply = (await cdp!.send('Runtime.evaluate', { expression, returnByValue: true })) as EvalReply;
    const ex = reply.exceptionDetails;
    if (ex) throw new Error(`set-of-marks overlay: ${(ex.exception?.description ?? ex.text).split('\n')[0]}`);
    return undefined;
  };
  const capture = async (): Promise<Uint8Array> => {
    if (!cdp) return page.screenshot({ type: 'png' });
    const { data } = await cdp.send('Page.captureScreenshot', PICTURE_CAPTURE);
    return Buffer.from(data, 'base64');
  };
  const image = await setOfMarks(page, snap, {
    ...(opts.secrets ? { secrets: opts.secrets } : {}),
    ...(opts.marker ? { click: opts.marker } : {}),
    ...(cdp ? { run } : {}),
    capture,
    removeLater: true,
  });
  return { image, mediaType: PICTURE_MEDIA_TYPE, hash: hashPicture(image) };
}

export const imagePart = (picture: Pick<Picture, 'image' | 'mediaType'>): MessagePart => ({
  type: 'image',
  mediaType: picture.mediaType,
  data: picture.image.toString('base64'),
});

export interface LookState {
  /** Pictures sent on request in this step. */
  asked: number;
  /** Why looks are no longer offered in this step. */
  closed?: string;
}

/** What a look produced: a picture (with its text), or only words when none is sent. */
export type LookAnswer = (Picture & { text: string }) | { text: string };

export interface DecideInput {
  llm: LlmClient;
  system: string;
  /** The iteration's user message (text, picture). */
  content: string | MessagePart[];
  /** Hashes of the pictures already in this conversation. */
  pictures: Set<string>;
  coordinates: boolean;
  looksOffered: boolean;
  looks: LookState;
  take: (tool: LookTool) => Promise<LookAnswer>;
  signal?: AbortSignal;
}

/**
 * Asks for the iteration's decision; a decision that asks for a look gets its picture and is asked
 * again, within the step's budget. Returns the final decision (no look commands left in it), the
 * usage of every call, and one line per look for the record.
 */
export async function decideWithLooks(
  input: DecideInput,
): Promise<{ value: ModeDecision; usage: Usage | undefined; looks: string[] }> {
  const messages: { role: 'user' | 'assistant'; content: string | MessagePart[] }[] = [
    { role: 'user', content: input.content },
  ];
  const notes: string[] = [];
  let usage: Usage | undefined;
  for (;;) {
    const open = input.looksOffered && !input.looks.closed;
    let reply: Awaited<ReturnType<typeof input.llm.generate<ModeDecision>>>;
    try {
      reply = await input.llm.generate<ModeDecision>({
        system: input.system,
        messages,
        schema: decisionSchemaFor({ looks: open, coordinates: input.coordinates }),
        schemaName: 'scenario_decision',
        ...(input.signal ? { signal: input.signal } : {}),
      });
    } catch (err) {
      // The calls of this iteration that did answer were billed: the caller adds the error's usage.
      if (err instanceof LlmError && usage) err.usage = err.usage ? addUsage(usage, err.usage) : usage;
      throw err;
    }
    usage = usage ? addUsage(usage, reply.usage) : reply.usage;
    const ask = reply.value.commands.find((c): c is LookCommand => c.kind === 'look');
    const commands = reply.value.commands.filter((c) => c.kind !== 'look');
    if (!ask || !open) return { value: { ...reply.value, commands }, usage, looks: notes };
    let verdict = lookVerdict(input.looks, undefined, input.pictures);
    let answer: LookAnswer | undefined;
    if (verdict === 'send') {
      input.looks.asked++;
      answer = await input.take(ask.tool);
      if ('hash' in answer) verdict = lookVerdict({ asked: 0 }, answer.hash, input.pictures);
    }
    const parts: MessagePart[] = [];
    let said: string;
    if (verdict === 'budget') {
      input.looks.closed = 'budget';
      said = `No picture: the budget of ${SCREENSHOT_BUDGET_PER_STEP} pictures for this step is spent. Look commands are no longer offered in this step: act on what you have.`;
    } else if (verdict === 'repeat') {
      input.looks.closed = 'loop';
      said = `No picture: ${ask.tool} gives the same picture you already have (nothing changed on the page). Asking again will not change it, so look commands are no longer offered in this step: act on what you see.`;
    } else if (answer && 'hash' in answer) {
      input.pictures.add(answer.hash);
      parts.push(imagePart(answer));
      const left = SCREENSHOT_BUDGET_PER_STEP - input.looks.asked;
      if (left <= 0) input.looks.closed = 'budget';
      said = `${answer.text}\n(${left > 0 ? `${left} more picture${left === 1 ? '' : 's'} allowed in this step` : 'that was the last picture allowed in this step'}.)`;
    } else said = answer?.text ?? 'No picture.';
    notes.push(
      `${ask.tool}: ${verdict === 'budget' ? 'not sent, budget spent' : verdict === 'repeat' ? 'not sent, same picture again (loop): looks stopped' : answer && 'hash' in answer ? 'sent' : 'no picture'}`,
    );
    const pending = commands.length
      ? ' The other commands of that answer were not run: give them again.'
      : '';
    messages.push(
      { role: 'assistant', content: JSON.stringify(reply.value) },
      { role: 'user', content: [{ type: 'text', text: `${said}${pending}` }, ...parts] },
    );
  }
}
