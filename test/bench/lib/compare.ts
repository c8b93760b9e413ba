import type { Snapshot } from '../../../lib/perception/types.ts';

export interface TreeItem {
  depth: number;
  id: string;
  role: string;
  name: string;
  parentRole: string;
}

/** Lines `[id] role: name` of Stagehand's formatted tree (two spaces of indent per level). */
export function parseStagehandTree(text: string): TreeItem[] {
  const out: TreeItem[] = [];
  const stack: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\s*)\[([^\]]+)\] (.*)$/.exec(line);
    if (!m) continue;
    const depth = Math.floor(m[1]!.length / 2);
    const rest = m[3]!;
    const colon = rest.indexOf(': ');
    let role = (colon >= 0 ? rest.slice(0, colon) : rest).trim();
    // "scrollable, html" → html
    if (role.includes(', ')) role = role.slice(role.lastIndexOf(', ') + 2);
    const name =
      colon >= 0
        ? rest
            .slice(colon + 2)
            .replace(/(\s\[[a-z-]+\])+$/i, '')
            .trim()
        : '';
    stack.length = depth;
    out.push({ depth, id: m[2]!, role, name, parentRole: depth > 0 ? (stack[depth - 1] ?? '') : '' });
    stack[depth] = role;
  }
  return out;
}

/**
 * Roles a user can act on, as Chromium's AX tree (and so Stagehand) names them. Options of a native
 * <select> (under MenuListPopup) are not counted: they belong to their select, and our snapshot folds
 * them into its `options=[…]`.
 */
const INTERACTIVE_ROLES = new Set(
  [
    'button',
    'link',
    'textbox',
    'searchbox',
    'combobox',
    'select',
    'listbox',
    'checkbox',
    'radio',
    'switch',
    'slider',
    'spinbutton',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'tab',
    'treeitem',
    'option',
    'textarea',
    'disclosuretriangle',
    'colorwell',
    'date',
    'datetime',
    'inputtime',
  ].map((r) => r.toLowerCase()),
);

export function stagehandInteractive(items: TreeItem[]): TreeItem[] {
  return items.filter(
    (i) => INTERACTIVE_ROLES.has(i.role.toLowerCase()) && i.parentRole.toLowerCase() !== 'menulistpopup',
  );
}

export interface OurCompleteness {
  interactive: number;
  /** Interactive ids whose durable locator has an XPath (should equal `interactive`). */
  withLocator: number;
  /** All ids (interactive or not) whose locator has an XPath / the total. */
  allWithLocator: number;
  all: number;
}

export function ourCompleteness(snap: Snapshot): OurCompleteness {
  const interactive = snap.elements.filter((e) => e.interactive);
  const has = (e: Snapshot['elements'][number]) => !!e.locator && e.locator.xpath.length > 0;
  return {
    interactive: interactive.length,
    withLocator: interactive.filter(has).length,
    allWithLocator: snap.elements.filter(has).length,
    all: snap.elements.length,
  };
}

export interface Target {
  role: string;
  name: string;
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

/** Targets whose name appears (case-insensitive) on some line of the text. */
export function targetsFound(text: string, targets: readonly Target[]): Target[] {
  const lines = text.split('\n').map(norm);
  return targets.filter((t) => {
    const n = norm(t.name);
    return n.length > 0 && lines.some((l) => l.includes(n));
  });
}

export interface Misses {
  /** Stagehand interactive items whose name is nowhere in our tree text. */
  absent: string[];
  /** … present in our text, but not as one of our interactive elements. */
  notInteractive: string[];
  /** Stagehand interactive items with no name at all (cannot be matched). */
  unnamed: number;
}

/** Which of Stagehand's interactive elements our snapshot does not have (matched by name). */
export function missingFromOurs(peer: TreeItem[], snap: Snapshot): Misses {
  const ourText = norm(snap.tree);
  const ourInteractive = snap.elements
    .filter((e) => e.interactive)
    .map((e) =>
      norm([e.name, e.label ?? '', e.placeholder ?? '', e.value ?? '', ...(e.options ?? [])].join(' | ')),
    );
  const absent: string[] = [];
  const notInteractive: string[] = [];
  let unnamed = 0;
  for (const item of peer) {
    const n = norm(item.name);
    if (!n) {
      unnamed++;
      continue;
    }
    const label = `${item.role} "${item.name.slice(0, 60)}"`;
    if (ourInteractive.some((o) => o.includes(n))) continue;
    if (ourText.includes(n)) notInteractive.push(label);
    else absent.push(label);
  }
  return { absent, notInteractive, unnamed };
}

/** Our interactive elements whose name Stagehand's text does not contain. */
export function missingFromPeer(snap: Snapshot, peerText: string): string[] {
  const text = norm(peerText);
  return snap.elements
    .filter((e) => e.interactive && norm(e.name).length > 0 && !text.includes(norm(e.name)))
    .map((e) => `${e.role} "${e.name.slice(0, 60)}"`);
}
