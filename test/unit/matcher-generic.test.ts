import { describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import type { MatchElement } from '../../lib/ops/matcher/score.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { snapshotOf } from '../support/snapshots.ts';

type Spec = Partial<MatchElement> & { role: string; name: string };
const TAGS: Record<string, string> = {
  button: 'button',
  link: 'a',
  textbox: 'input',
  checkbox: 'input',
  radio: 'input',
  combobox: 'select',
  tab: 'li',
};

/** A snapshot shaped like the real ones: ids 1..n in reading order, every element laid out. */
function page(specs: Spec[], extra: Partial<Snapshot> = {}): Snapshot {
  const elements: MatchElement[] = specs.map((s, i) => ({
    id: i + 1,
    tag: TAGS[s.role] ?? 'div',
    frame: 0,
    locator: { xpath: `/html/body/*[${i + 1}]`, role: s.role, name: s.name },
    box: { x: 10, y: 20 * i, width: 80, height: 18 },
    inViewport: true,
    interactive: s.role !== 'heading',
    states: {},
    ...s,
  }));
  return snapshotOf(elements, 'https://tasks.test/', extra);
}

/** The id the decision acts on, or 'defer'. */
function target(instruction: string, snap: Snapshot): number | 'defer' | undefined {
  const d = matchInstruction(instruction, snap);
  return d.kind === 'defer' ? 'defer' : d.elementId;
}

const FORM = page([
  { role: 'heading', name: 'Enter text' }, // 1
  { role: 'textbox', name: '' }, // 2
  { role: 'button', name: 'Submit' }, // 3
  { role: 'link', name: 'Help' }, // 4
]);

describe('role-only targets: counted, not scored', () => {
  it('acts on the one element of the kind', () => {
    expect(target('click the button', FORM)).toBe(3);
    expect(target('click on the link', FORM)).toBe(4);
    expect(target('Focus into the textbox.', FORM)).toBe(2);
    const d = matchInstruction('type "Kasie" into the text field', FORM);
    expect(d.kind === 'action' && d.action).toMatchObject({
      method: 'fill',
      target: { id: 2 },
      args: ['Kasie'],
    });
  });

  it('a link is not "the button", a button not "the link"', () => {
    const onlyLinks = page([{ role: 'link', name: 'Home' }]);
    expect(target('click the button', onlyLinks)).toBe('defer');
  });

  it('defers with several of the kind, disabled ones included', () => {
    const two = page([
      { role: 'button', name: 'Yes' },
      { role: 'button', name: 'No', states: { disabled: true } },
    ]);
    expect(target('click the button', two)).toBe('defer');
    const d = matchInstruction('click the button', two);
    expect(d.kind === 'defer' && d.reason).toMatch(/2 elements/);
  });

  it('defers when the only one is disabled, or there is none', () => {
    expect(
      target('click the button', page([{ role: 'button', name: 'Go', states: { disabled: true } }])),
    ).toBe('defer');
    expect(target('check the checkbox', FORM)).toBe('defer');
  });

  it('picks the nth of the kind in reading order with an ordinal', () => {
    const tabs = page([
      { role: 'link', name: 'Top' },
      { role: 'tab', name: '1' },
      { role: 'tab', name: '2' },
      { role: 'tab', name: '3' },
    ]);
    expect(target('click tab #2', tabs)).toBe(3);
    expect(target('click the second tab', tabs)).toBe(3);
    expect(target('click the last tab', tabs)).toBe(4);
    expect(target('click tab #5', tabs)).toBe('defer');
  });

  it('does not count on a page it only partly saw', () => {
    const partial = page([{ role: 'button', name: 'Go' }], {
      stats: { ...FORM.stats, omittedInteractive: 3 },
    });
    expect(target('click the button', partial)).toBe('defer');
    expect(
      target('click the button', page([{ role: 'button', name: 'Go' }], { chunk: { index: 0, count: 2 } })),
    ).toBe('defer');
  });

  it('"select A from the dropdown": the dropdowns that offer A', () => {
    const selects = page([
      { role: 'combobox', name: 'Size', options: ['Small', 'Large'] },
      { role: 'combobox', name: 'Colour', options: ['Red', 'Blue'] },
    ]);
    const d = matchInstruction('select Blue from the dropdown', selects);
    expect(d.kind === 'action' && d.action).toMatchObject({
      method: 'select',
      target: { id: 2 },
      args: ['Blue'],
    });
    expect(target('select Green from the dropdown', selects)).toBe('defer');
  });

  it('a textarea widget is not any field', () => {
    const widgets = page([
      { role: 'textbox', name: '' },
      { role: 'textbox', name: '', tag: 'textarea' },
    ]);
    expect(target('Click on a "textarea" widget.', widgets)).toBe(2);
    expect(target('Click on a "text" widget.', widgets)).toBe(1);
    expect(target('click the text field', widgets)).toBe('defer');
    // "a" widget: any of that kind; "the" widget: only when there is one.
    const twoBoxes = page([
      { role: 'checkbox', name: 'ab' },
      { role: 'checkbox', name: 'cd' },
    ]);
    expect(target('Click on a "checkbox" widget.', twoBoxes)).toBe(1);
    expect(target('click the "checkbox" widget', twoBoxes)).toBe('defer');
  });
});

describe('dialog close', () => {
  const DIALOG = page([
    { role: 'button', name: 'OK' }, // 1, behind the dialog
    { role: 'button', name: 'Close', dialog: 1 }, // 2
    { role: 'button', name: 'Cancel', dialog: 1 }, // 3
    { role: 'button', name: 'Cancel' }, // 4, behind the dialog
  ]);

  it('finds the close control of the open dialog, whatever it is called', () => {
    expect(target('close the dialog', DIALOG)).toBe(2);
    expect(target('Close the dialog box by clicking the "x".', DIALOG)).toBe(2);
    expect(target('click the x', DIALOG)).toBe(2);
    const glyph = page([{ role: 'button', name: '×', dialog: 4 }]);
    expect(target('dismiss the modal', glyph)).toBe(1);
  });

  it('defers with close controls in two dialogs, and with no dialog open', () => {
    const two = page([
      { role: 'button', name: 'Close', dialog: 1 },
      { role: 'button', name: 'Close', dialog: 2 },
    ]);
    expect(target('close the dialog', two)).toBe('defer');
    expect(target('close the dialog', page([{ role: 'button', name: 'Save' }]))).toBe('defer');
  });

  it('"in the dialog" counts only what the dialog holds', () => {
    expect(target('Click the button in the dialog box labeled "Cancel".', DIALOG)).toBe(3);
    expect(target('click "Cancel"', DIALOG)).toBe('defer');
  });
});

describe('names made of symbols', () => {
  const ARROWS = page([
    { role: 'button', name: '⇒' },
    { role: 'button', name: '⇐' },
  ]);
  it('a quoted symbol equals one name exactly', () => {
    expect(target('Click on the "⇐" button.', ARROWS)).toBe(2);
    expect(target('click "⇔"', ARROWS)).toBe('defer');
  });
});

describe('names and counts, case in quotes', () => {
  it('"Tab #2" as a name must agree with the count', () => {
    const agree = page([
      { role: 'tab', name: 'Tab #1' },
      { role: 'tab', name: 'Tab #2' },
    ]);
    expect(target('Click on Tab #2.', agree)).toBe(2);
    const disagree = page([
      { role: 'tab', name: 'Tab #2' },
      { role: 'tab', name: 'Tab #1' },
    ]);
    expect(target('Click on Tab #2.', disagree)).toBe('defer');
  });

  it('quotes pick the exact case among names equal but for case', () => {
    const cased = page([
      { role: 'button', name: 'Ok' },
      { role: 'button', name: 'ok' },
      { role: 'button', name: 'Cancel' },
    ]);
    expect(target('Click on the "ok" button.', cased)).toBe(2);
    expect(target('click the ok button', cased)).toBe('defer');
    const same = page([
      { role: 'button', name: 'ok' },
      { role: 'button', name: 'ok' },
    ]);
    expect(target('Click on the "ok" button.', same)).toBe('defer');
  });
});
