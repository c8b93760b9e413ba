import { placeholders } from '../actions/helpers.ts';
import type { ActionMethod } from '../actions/types.ts';
import { noModelError } from '../llm/config.ts';
import type { Snapshot, SnapshotElement } from '../perception/types.ts';
import { elementById, wholePage } from '../perception/types.ts';
import { formatCandidates } from './matcher/summary.ts';
import { observeWithoutModel } from './observe-match.ts';
import { ask, emptyUsage, keywordsOf, readPage, userMessage, visionPart } from './page-state.ts';
import { observeSystem, observeUser, withGuidance } from './prompts.ts';
import { ObserveReply } from './replies.ts';
import { type ObservedElement, type ObserveResult, type OpContext, OpError } from './types.ts';

/** The method a person would use on an element of this role. */
export function defaultMethod(el: SnapshotElement): ActionMethod {
  if (el.role === 'textbox' || el.role === 'searchbox' || el.role === 'spinbutton') return 'fill';
  if (el.role === 'combobox' && el.options) return 'select';
  if (el.role === 'checkbox' || el.role === 'switch') return el.states.checked === true ? 'uncheck' : 'check';
  if (el.scrollable && !el.interactive) return 'scroll';
  return 'click';
}

function observed(
  el: SnapshotElement,
  method: ActionMethod,
  args: string[],
  description?: string,
): ObservedElement {
  return {
    id: el.id,
    description: description ?? `${el.role} "${el.name}"`,
    method,
    arguments: args,
    selector: el.locator.xpath,
    role: el.role,
    name: el.name,
    ...(typeof el.states.checked === 'boolean' ? { checked: el.states.checked } : {}),
  };
}

function everyInteractive(snap: Snapshot): ObservedElement[] {
  return snap.elements.filter((e) => e.interactive).map((e) => observed(e, defaultMethod(e), []));
}

/**
 * Lists elements matching the instruction, each ready to pass back to `act` (which then runs it
 * with no model call). Like act, it asks the model only when the matcher is not sure: "the Sign in
 * button" or "the sign-up form fields" cost no tokens; with no instruction it lists everything.
 */
export async function observe(ctx: OpContext, instruction?: string): Promise<ObserveResult> {
  const started = performance.now();
  const text = instruction?.trim();
  const snap = await readPage(ctx, { readOnly: true, ...(text ? { keywords: keywordsOf(text) } : {}) });
  const finish = (
    elements: ObservedElement[],
    resolvedBy: ObserveResult['resolvedBy'],
    usage = emptyUsage(),
  ) => ({
    elements,
    usage,
    resolvedBy,
    url: snap.url,
    ms: Math.round(performance.now() - started),
  });
  if (!text) return finish(everyInteractive(snap), 'matcher');
  const found = observeWithoutModel(text, wholePage(snap));
  if (found.kind === 'elements')
    return finish(
      found.picks.map((p) => observed(p.element, p.method ?? defaultMethod(p.element), p.args ?? [])),
      'matcher',
    );
  if (!ctx.llm) {
    // Not sure and no model: say a model is needed, never an empty list that looks like "nothing there".
    const closest = found.candidates.length ? ` ${formatCandidates(found.candidates)}.` : '';
    throw new OpError(
      'no_model',
      `could not answer "${text}" without a model (${found.reason}).${closest} ${noModelError().message}`,
      found.candidates,
    );
  }
  const usage = { total: emptyUsage(ctx.llm.model) };
  const withImage =
    ctx.options?.vision === 'always' || (ctx.options?.vision !== 'never' && snap.confidence < 0.6);
  const res = await ask(
    ctx.llm,
    {
      system: withGuidance(observeSystem({ placeholders: placeholders(text).length > 0 }), ctx.guidance),
      messages: [userMessage(observeUser(text, snap), withImage ? await visionPart(ctx, snap) : undefined)],
      schema: ObserveReply,
      schemaName: 'list_elements',
    },
    usage,
    ctx.signal,
  );
  const elements: ObservedElement[] = [];
  for (const item of res.value.elements) {
    const el = elementById(snap, item.elementId);
    // Ids not in the snapshot are dropped, never mapped to a neighbour.
    if (el) elements.push(observed(el, item.method, item.arguments, item.description));
  }
  return finish(elements, 'llm', usage.total);
}
