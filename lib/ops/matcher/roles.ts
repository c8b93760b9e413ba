/** Roles and verbs: which elements a verb can act on, and which roles a role word names. */
import type { SnapshotElement } from '../../perception/types.ts';
import type { MatchVerb, RoleHint } from './parse.ts';

const EDITABLE = new Set(['textbox', 'searchbox', 'spinbutton']);
const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
const UNCHECKABLE = new Set(['checkbox', 'switch', 'menuitemcheckbox']);
/** Roles a click is meant for; other interactive ones (fields, sliders) are clicked less often. */
const CLICKABLE = new Set([
  'button',
  'link',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'option',
  'radio',
  'checkbox',
  'switch',
  'treeitem',
  'clickable',
  'combobox',
  'gridcell',
  'row',
  'cell',
]);

export const isEditable = (el: SnapshotElement): boolean =>
  EDITABLE.has(el.role) || (el.role === 'combobox' && el.tag !== 'select' && !el.options);
export const isNativeSelect = (el: SnapshotElement): boolean =>
  (el.role === 'combobox' || el.role === 'listbox') && Array.isArray(el.options);
/** A button that opens something (menu button): it exposes an expanded state. */
const isMenuButton = (el: SnapshotElement): boolean =>
  el.role === 'button' && el.states.expanded !== undefined;

/** Whether `verb` can act on the element at all. */
export function verbAllows(verb: MatchVerb, el: SnapshotElement): boolean {
  switch (verb) {
    case 'fill':
    case 'type':
      return isEditable(el);
    case 'select':
      // Native selects only: a custom dropdown takes two steps (open, pick), which is the model's job.
      return isNativeSelect(el);
    case 'check':
      return CHECKABLE.has(el.role);
    case 'uncheck':
    case 'toggle':
      return UNCHECKABLE.has(el.role);
    case 'press':
      return el.interactive;
    default:
      return true;
  }
}

/** How much the verb wants this kind of element, when no role word was given. */
export function verbFactor(verb: MatchVerb, el: SnapshotElement, hinted: boolean): number {
  if (!el.interactive) {
    if (verb === 'scroll') return 1;
    if (verb === 'hover') return 0.8;
    // Text, images, headings: rarely what a click means when a control says the same.
    return 0.6;
  }
  if ((verb === 'click' || verb === 'dblclick') && !hinted && !CLICKABLE.has(el.role)) return 0.9;
  return 1;
}

/** Roles a role word names exactly, and roles it often loosely means (a link styled as a button). */
const HINT_ROLES: Record<RoleHint, { exact: string[]; near: string[] }> = {
  // Role words are hard constraints: "the log in button" never clicks a link that says "Log in".
  button: { exact: ['button'], near: [] },
  link: { exact: ['link'], near: [] },
  icon: { exact: ['button', 'link'], near: ['img', 'clickable'] },
  field: { exact: ['textbox', 'searchbox', 'spinbutton', 'combobox'], near: [] },
  checkbox: { exact: ['checkbox', 'switch', 'menuitemcheckbox'], near: [] },
  switch: { exact: ['switch', 'checkbox'], near: [] },
  radio: { exact: ['radio', 'menuitemradio'], near: [] },
  option: { exact: ['radio', 'option', 'menuitemradio'], near: [] },
  dropdown: { exact: ['combobox', 'listbox'], near: ['menuitem', 'button'] },
  tab: { exact: ['tab'], near: [] },
  menuitem: { exact: ['menuitem', 'menuitemcheckbox', 'menuitemradio'], near: [] },
  heading: { exact: ['heading'], near: ['region', 'group', 'article', 'banner', 'contentinfo'] },
};
const NEAR_FACTOR = 0.8;
const NATIVE_CONTROL_TAGS = new Set(['button', 'input', 'a', 'area', 'summary', 'select', 'option']);

/** 1 for a role the hint names, 0.8 for one it loosely means, 0 for anything else. */
export function hintFactor(hint: RoleHint, el: SnapshotElement): number {
  if (hint === 'field' && el.role === 'combobox') return isEditable(el) ? 1 : 0;
  // A <span>/<div> that only has a click handler was given "button" by us, not by its author: pages
  // style such things as links, so "the … link" may mean it (never a native <button> or <input>).
  if (hint === 'link' && el.role === 'button' && !NATIVE_CONTROL_TAGS.has(el.tag)) return NEAR_FACTOR;
  if (hint === 'dropdown' && isMenuButton(el)) return 1;
  const roles = HINT_ROLES[hint];
  if (roles.exact.includes(el.role)) return 1;
  return roles.near.includes(el.role) ? NEAR_FACTOR : 0;
}
