import type { ActionMethod } from '../actions/types.ts';
import type { Snapshot, SnapshotElement } from '../perception/types.ts';
import { elementById } from '../perception/types.ts';
import { matchInstruction } from './matcher/index.ts';
import { ask, emptyUsage, keywordsOf, readPage, userMessage, visionPart } from './page-state.ts';
import { OBSERVE_SYSTEM, observeUser } from './prompts.ts';
import { ObserveReply } from './replies.ts';
import type { ObservedElement, ObserveResult, OpContext } from './types.ts';

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
  };
}

function everyInteractive(snap: Snapshot): ObservedElement[] {
  return snap.elements.filter((e) => e.interactive).map((e) => observed(e, defaultMethod(e), []));
}

/**
 * Lists elements matching the instruction, each ready to pass back to `act` (which then runs it
 * with no model call). With no instruction, or no model, it answers from the snapshot alone.
 */
export async function observe(ctx: OpContext, instruction?: string): Promise<ObserveResult> {
  const started = performance.now();
  const text = instruction?.trim();
  const snap = await readPage(ctx, text ? { keywords: keywordsOf(text) } : {});
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
  if (!ctx.llm) {
    // Zero-token answer: the matcher's ranking, best first.
    const decision = matchInstruction(text, snap);
    if (decision.kind === 'action' && decision.elementId !== undefined) {
      const el = elementById(snap, decision.elementId);
      if (el) return finish([observed(el, decision.action.method, decision.action.args ?? [])], 'matcher');
    }
    const ranked = decision.kind === 'defer' ? decision.candidates : [];
    const out: ObservedElement[] = [];
    for (const c of ranked) {
      const el = elementById(snap, c.id);
      if (el) out.push(observed(el, defaultMethod(el), []));
    }
    return finish(out, 'matcher');
  }
  const usage = { total: emptyUsage(ctx.llm.model) };
  const withImage =
    ctx.options?.vision === 'always' || (ctx.options?.vision !== 'never' && snap.confidence < 0.6);
  const res = await ask(
    ctx.llm,
    {
      system: OBSERVE_SYSTEM,
      messages: [userMessage(observeUser(text, snap), withImage ? await visionPart(ctx, snap) : undefined)],
      schema: ObserveReply,
      schemaName: 'list_elements',
    },
    usage,
  );
  const elements: ObservedElement[] = [];
  for (const item of res.value.elements) {
    const el = elementById(snap, item.elementId);
    // Ids not in the snapshot are dropped, never mapped to a neighbour.
    if (el) elements.push(observed(el, item.method, item.arguments, item.description));
  }
  return finish(elements, 'llm', usage.total);
}
