/** The `Action` for a decided element, or for a page-level verb. */
import type { Action } from '../../actions/types.ts';
import type { Snapshot } from '../../perception/types.ts';
import type { ParsedInstruction } from './parse.ts';
import { isNativeSelect } from './roles.ts';
import type { MatchElement } from './score.ts';
import { shown } from './summary.ts';
import { normalize } from './text.ts';

export const HAS_VARIABLE = /%[A-Za-z_][\w.-]*%/;
export const SELECT_WORDS = new Set(['select', 'choose', 'pick']);
const CHECK_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

/** The option of a native select that a value names (same normalised text), if any. */
export function optionFor(el: MatchElement, value: string): string | undefined {
  const want = normalize(value);
  if (!want || !el.options) return undefined;
  return el.options.find((o) => o === value) ?? el.options.find((o) => normalize(o) === want);
}

/** Native selects holding exactly the option `value` names. */
export function selectsOffering(snapshot: Snapshot, value: string): MatchElement[] {
  return snapshot.elements.filter(
    (e) => isNativeSelect(e) && e.interactive && !e.states.disabled && optionFor(e, value) !== undefined,
  );
}

function scrollArg(parsed: ParsedInstruction): string {
  const to = parsed.scroll?.to ?? 'down';
  if (typeof to === 'number') return `${to}%`;
  if ((to === 'up' || to === 'down') && parsed.scroll?.px)
    return `${to === 'up' ? '-' : '+'}${parsed.scroll.px}`;
  return to;
}

/** The action for a decided element (or none, for page-level verbs); a string is a reason to defer. */
export function actionFor(
  parsed: ParsedInstruction,
  el: MatchElement | undefined,
  method?: 'select-option',
): Action | string {
  const target = el ? { id: el.id } : undefined;
  const on = el ? ` ${shown(el)}` : '';
  if (method === 'select-option' && el) {
    const option = optionFor(el, parsed.target?.phrase ?? parsed.value ?? '');
    if (!option) return 'no such option';
    return {
      method: 'select',
      target: { id: el.id },
      args: [option],
      description: `select '${option}' in${on}`,
    };
  }
  switch (parsed.verb) {
    case 'click':
      if (!target || !el) return 'needs a target';
      // "select the Terms checkbox" / "choose Pro": ticking is idempotent, a click would toggle.
      if (parsed.word && SELECT_WORDS.has(parsed.word) && CHECK_ROLES.has(el.role))
        return { method: 'check', target, description: `check${on}` };
      return { method: 'click', target, description: `click${on}` };
    case 'dblclick':
      return target ? { method: 'dblclick', target, description: `double-click${on}` } : 'needs a target';
    case 'hover':
      return target ? { method: 'hover', target, description: `hover over${on}` } : 'needs a target';
    case 'fill':
    case 'type': {
      const value = parsed.value ?? '';
      if (!target) return { method: 'type', args: [value], description: `type '${value}'` };
      return {
        method: parsed.verb,
        target,
        args: [value],
        description: value ? `${parsed.verb} '${value}' into${on}` : `clear${on}`,
      };
    }
    case 'select': {
      if (!el || !target) return 'needs a target';
      const value = parsed.value ?? '';
      // A variable's value is unknown until the browser needs it: the executor checks the option.
      if (HAS_VARIABLE.test(value))
        return { method: 'select', target, args: [value], description: `select '${value}' in${on}` };
      const option = optionFor(el, value);
      if (!option) return `no option '${value}' in${on}`;
      return { method: 'select', target, args: [option], description: `select '${option}' in${on}` };
    }
    case 'check':
    case 'uncheck':
      return target ? { method: parsed.verb, target, description: `${parsed.verb}${on}` } : 'needs a target';
    case 'toggle': {
      if (!el || !target) return 'needs a target';
      const now = el.states.checked;
      if (now !== true && now !== false) return `cannot tell whether${on} is checked`;
      const method = now ? 'uncheck' : 'check';
      return { method, target, description: `${method}${on}` };
    }
    case 'press': {
      const key = parsed.key ?? '';
      return {
        method: 'press',
        ...(target ? { target } : {}),
        args: [key],
        description: `press ${key}${el ? ` in${on}` : ''}`,
      };
    }
    case 'scroll': {
      if (target) return { method: 'scroll', target, args: [], description: `scroll to${on}` };
      const arg = scrollArg(parsed);
      const how = arg.endsWith('%') ? `to ${arg}` : arg === 'top' || arg === 'bottom' ? `to the ${arg}` : arg;
      return { method: 'scroll', args: [arg], description: `scroll ${how}` };
    }
    case 'back':
      return { method: 'back', description: 'go back' };
    case 'forward':
      return { method: 'forward', description: 'go forward' };
    case 'reload':
      return { method: 'reload', description: 'reload the page' };
  }
}
