import { describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { type MatchElement, scoreCandidates } from '../../lib/ops/matcher/score.ts';
import { formatCandidates } from '../../lib/ops/matcher/summary.ts';
import { textScore, toNorm } from '../../lib/ops/matcher/text.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { snapshotOf } from '../support/snapshots.ts';

// ---------------------------------------------------------------------------------------------
// Synthetic snapshots shaped like the real ones (ids 1..n in document order).

type Spec = Partial<MatchElement> & { role: string; name: string };

const TAGS: Record<string, string> = {
  button: 'button',
  link: 'a',
  textbox: 'input',
  searchbox: 'input',
  spinbutton: 'input',
  checkbox: 'input',
  radio: 'input',
  switch: 'button',
  combobox: 'select',
  heading: 'h2',
  img: 'img',
  tab: 'button',
  menuitem: 'a',
  text: 'p',
};
const NOT_INTERACTIVE = new Set(['heading', 'img', 'text', 'paragraph', 'region']);

function page(specs: Spec[], extra: Partial<Snapshot> = {}): Snapshot {
  const elements: MatchElement[] = specs.map((s, i) => {
    const id = i + 1;
    return {
      id,
      tag: TAGS[s.role] ?? 'div',
      frame: 0,
      locator: { xpath: `/html/body/*[${id}]`, role: s.role, name: s.name },
      inViewport: true,
      interactive: !NOT_INTERACTIVE.has(s.role),
      states: {},
      ...s,
    };
  });
  return snapshotOf(elements, 'https://shop.test/', extra);
}

const LOGIN = page([
  { role: 'link', name: 'Acme' }, // 1
  { role: 'heading', name: 'Sign in to Acme' }, // 2
  { role: 'textbox', name: 'Email', label: 'Email', placeholder: 'you@example.com', inputType: 'email' }, // 3
  { role: 'textbox', name: 'Password', label: 'Password', inputType: 'password' }, // 4
  { role: 'checkbox', name: 'Remember me', label: 'Remember me', states: { checked: false } }, // 5
  { role: 'button', name: 'Sign in' }, // 6
  { role: 'link', name: 'Forgot password?' }, // 7
  { role: 'link', name: 'Create an account' }, // 8
]);

const PRODUCT_NAMES = [
  'Trail Runner Shoes',
  'Canvas Backpack',
  'Steel Water Bottle',
  'Merino Wool Socks',
  'Rain Jacket',
  'Camping Lantern',
  'Hiking Poles',
  'Sun Hat',
  'Trail Map Set',
  'Compact Stove',
  'Sleeping Pad',
  'First Aid Kit',
];
const PRODUCTS = page([
  { role: 'link', name: 'Acme Shop' }, // 1
  { role: 'searchbox', name: 'Search products', placeholder: 'Search', inputType: 'search' }, // 2
  {
    role: 'combobox',
    name: 'Sort by',
    label: 'Sort by',
    value: 'Featured',
    options: ['Featured', 'Price: low to high', 'Price: high to low'],
  }, // 3
  // Each product: image 4+3k, link 5+3k, "Add to cart" 6+3k; the second half is below the fold.
  ...PRODUCT_NAMES.flatMap((name, k): Spec[] => [
    { role: 'img', name, inViewport: k < 6 },
    { role: 'link', name, inViewport: k < 6, context: name },
    { role: 'button', name: 'Add to cart', inViewport: k < 6, context: name },
  ]),
]);
const cartButton = (n: number) => 6 + 3 * (n - 1);
const productLink = (name: string) => 5 + 3 * PRODUCT_NAMES.indexOf(name);

const SIGNUP = page([
  { role: 'textbox', name: 'Full name', label: 'Full name' }, // 1
  { role: 'textbox', name: 'Work email', label: 'Work email', inputType: 'email' }, // 2
  { role: 'textbox', name: 'Company name', placeholder: 'Company name' }, // 3: placeholder only
  { role: 'textbox', name: '', placeholder: 'Phone number', inputType: 'tel' }, // 4: no name at all
  { role: 'textbox', name: '', context: 'Referral code' }, // 5: only nearby text
  { role: 'textbox', name: 'Password', label: 'Password', inputType: 'password' }, // 6
  { role: 'textbox', name: 'Confirm password', label: 'Confirm password', inputType: 'password' }, // 7
  { role: 'radio', name: 'Free', label: 'Free', states: { checked: true } }, // 8
  { role: 'radio', name: 'Pro', label: 'Pro', states: { checked: false } }, // 9
  {
    role: 'combobox',
    name: 'Country',
    label: 'Country',
    value: 'Choose…',
    options: ['Choose…', 'Norway', 'Sweden', 'France', 'Japan'],
  }, // 10
  { role: 'checkbox', name: 'I accept the terms and conditions', states: { checked: false } }, // 11
  { role: 'checkbox', name: 'Send me product updates', states: { checked: true } }, // 12
  { role: 'switch', name: 'Dark mode', states: { checked: false } }, // 13
  { role: 'button', name: 'Create account' }, // 14
  { role: 'link', name: 'Terms and conditions' }, // 15
]);

const MIXED = page([
  { role: 'link', name: 'Home' }, // 1
  { role: 'link', name: 'Pricing' }, // 2
  { role: 'link', name: 'Sign in' }, // 3
  { role: 'heading', name: 'Welcome back' }, // 4
  { role: 'button', name: 'Sign in' }, // 5
  { role: 'button', name: 'Sign in with Google' }, // 6
  { role: 'button', name: 'Sign up' }, // 7
  { role: 'button', name: 'Accept all' }, // 8
  { role: 'button', name: 'Cancel subscription' }, // 9
  { role: 'button', name: 'Delete', states: { disabled: true } }, // 10
  { role: 'button', name: 'Save draft' }, // 11
  { role: 'button', name: 'Save and publish' }, // 12
  { role: 'button', name: 'Save as template' }, // 13
  { role: 'tab', name: 'Settings', states: { selected: true } }, // 14
  { role: 'tab', name: 'Billing', states: { selected: false } }, // 15
  { role: 'menuitem', name: 'Products' }, // 16
  { role: 'textbox', name: 'Notes', tag: 'textarea' }, // 17
  { role: 'button', name: '' }, // 18: icon without a name
  { role: 'button', name: '' }, // 19
  { role: 'button', name: 'Back to top', inViewport: false }, // 20
]);

const DROPDOWN = page([
  { role: 'combobox', name: 'Size', label: 'Size', value: 'Medium', options: ['Small', 'Medium', 'Large'] }, // 1
  { role: 'button', name: 'Choose a colour', states: { expanded: false } }, // 2: custom dropdown
  { role: 'textbox', name: 'Gift message', label: 'Gift message' }, // 3
  { role: 'combobox', name: 'Quantity', label: 'Quantity', value: '1', options: ['1', '2', '3', '4'] }, // 4
  { role: 'combobox', name: 'Delivery city', tag: 'input', placeholder: 'Start typing…' }, // 5: editable
  { role: 'textbox', name: 'Shortcut', label: 'Shortcut' }, // 6
]);

const PAGES = { LOGIN, PRODUCTS, SIGNUP, MIXED, DROPDOWN } as const;
type PageName = keyof typeof PAGES;

// ---------------------------------------------------------------------------------------------
// Cases

interface Positive {
  page: PageName;
  instruction: string;
  /** undefined: a page-level action with no target. */
  id: number | undefined;
  method: string;
  args?: string[];
}
const P = (page: PageName, instruction: string, id: number | undefined, method: string, args?: string[]) => ({
  page,
  instruction,
  id,
  method,
  ...(args ? { args } : {}),
});

const POSITIVE: Positive[] = [
  // login: paraphrases, case, quote styles, labels vs placeholders, variables
  P('LOGIN', 'click the Sign in button', 6, 'click'),
  P('LOGIN', 'Click "Sign in"', 6, 'click'),
  P('LOGIN', 'press the sign in button.', 6, 'click'),
  P('LOGIN', 'tap Sign In', 6, 'click'),
  P('LOGIN', 'please click on the “Sign in” button', 6, 'click'),
  P('LOGIN', 'CLICK SIGN IN!', 6, 'click'),
  // Word variants of one concept: "log in" is what "Sign in" does.
  P('LOGIN', 'click the log in button', 6, 'click'),
  P('LOGIN', 'type "ada@example.com" into the email field', 3, 'fill', ['ada@example.com']),
  P('LOGIN', "enter 'ada@example.com' in Email", 3, 'fill', ['ada@example.com']),
  P('LOGIN', 'fill the email box with «ada@example.com»', 3, 'fill', ['ada@example.com']),
  P('LOGIN', 'type %email% into email', 3, 'fill', ['%email%']),
  P('LOGIN', 'Type %password% into the password field', 4, 'fill', ['%password%']),
  P('LOGIN', 'set the password to ‘hunter2’', 4, 'fill', ['hunter2']),
  P('LOGIN', 'type `ada@x.io` into the field labelled Email', 3, 'fill', ['ada@x.io']),
  P('LOGIN', 'type "ada@x.io" into you@example.com', 3, 'fill', ['ada@x.io']),
  P('LOGIN', 'type "ada@x.io" into the email address field', 3, 'fill', ['ada@x.io']),
  P('LOGIN', 'check Remember me', 5, 'check'),
  P('LOGIN', 'tick the remember me box', 5, 'check'),
  P('LOGIN', 'toggle remember me', 5, 'check'),
  P('LOGIN', 'click the Forgot password? link', 7, 'click'),
  P('LOGIN', 'open the create an account link', 8, 'click'),
  P('LOGIN', 'press Enter in the password field', 4, 'press', ['Enter']),
  // products: ordinals among twelve identical buttons, links vs images, search, sort
  P('PRODUCTS', 'click the second Add to cart button', cartButton(2), 'click'),
  P('PRODUCTS', 'click the first "Add to cart"', cartButton(1), 'click'),
  P('PRODUCTS', 'click the last add to cart button', cartButton(12), 'click'),
  P('PRODUCTS', 'click the 3rd add to cart button', cartButton(3), 'click'),
  P('PRODUCTS', 'click Add to cart #5', cartButton(5), 'click'),
  P('PRODUCTS', 'click the tenth add to cart', cartButton(10), 'click'),
  P('PRODUCTS', 'open the Trail Runner Shoes link', productLink('Trail Runner Shoes'), 'click'),
  P('PRODUCTS', 'click First Aid Kit', productLink('First Aid Kit'), 'click'),
  P('PRODUCTS', 'hover over Canvas Backpack', productLink('Canvas Backpack'), 'hover'),
  P('PRODUCTS', 'type "lantern" into search products', 2, 'fill', ['lantern']),
  P('PRODUCTS', 'type "lantern" into the search box', 2, 'fill', ['lantern']),
  P('PRODUCTS', 'select "Price: low to high" from Sort by', 3, 'select', ['Price: low to high']),
  P('PRODUCTS', 'choose price high to low in the sort by dropdown', 3, 'select', ['Price: high to low']),
  P('PRODUCTS', 'click add to cart for the Rain Jacket', cartButton(5), 'click'),
  P('PRODUCTS', 'click the Sun Hat add to cart button', cartButton(8), 'click'),
  P('PRODUCTS', 'scroll to the Sleeping Pad link', productLink('Sleeping Pad'), 'scroll', []),
  // sign-up: label-only, placeholder-only, radios, selects, checkboxes, switches
  P('SIGNUP', 'type "Ada Lovelace" into Full name', 1, 'fill', ['Ada Lovelace']),
  P('SIGNUP', 'in the full name field, type "Ada"', 1, 'fill', ['Ada']),
  P('SIGNUP', 'enter "ada@work.io" into the work email field', 2, 'fill', ['ada@work.io']),
  // The page's only email-typed field is its email field, whatever words precede "email".
  P('SIGNUP', 'type "x" into email', 2, 'fill', ['x']),
  P('SIGNUP', 'type "Acme" into company name', 3, 'fill', ['Acme']),
  P('SIGNUP', 'fill in the phone number with "555-0100"', 4, 'fill', ['555-0100']),
  P('SIGNUP', 'type "s3cret" into password', 6, 'fill', ['s3cret']),
  P('SIGNUP', 'type %password% into the confirm password field', 7, 'fill', ['%password%']),
  P('SIGNUP', 'select "Norway" from the Country dropdown', 10, 'select', ['Norway']),
  P('SIGNUP', 'choose Sweden from country', 10, 'select', ['Sweden']),
  P('SIGNUP', 'pick japan in the country select', 10, 'select', ['Japan']),
  P('SIGNUP', 'select %country% from country', 10, 'select', ['%country%']),
  P('SIGNUP', 'check the Pro radio button', 9, 'check'),
  P('SIGNUP', 'choose Pro', 9, 'check'),
  P('SIGNUP', 'click Pro', 9, 'click'),
  P('SIGNUP', 'tick accept the terms and conditions', 11, 'check'),
  P('SIGNUP', 'uncheck send me product updates', 12, 'uncheck'),
  P('SIGNUP', 'toggle send me product updates', 12, 'uncheck'),
  P('SIGNUP', 'turn on dark mode', 13, 'check'),
  P('SIGNUP', 'click the Create account button', 14, 'click'),
  P('SIGNUP', 'CLICK CREATE ACCOUNT', 14, 'click'),
  P('SIGNUP', 'click the terms and conditions link', 15, 'click'),
  // links vs buttons with the same text, similar names, tabs, menus
  // A count over a role with no name: the nth usable element of that role in reading order.
  P('MIXED', 'click the third link', 3, 'click'),
  P('MIXED', 'click the Sign in link', 3, 'click'),
  P('MIXED', 'click the Sign in button', 5, 'click'),
  P('MIXED', 'click "Sign in with Google"', 6, 'click'),
  P('MIXED', 'click save draft', 11, 'click'),
  P('MIXED', 'double-click Save draft', 11, 'dblclick'),
  P('MIXED', 'click the Billing tab', 15, 'click'),
  P('MIXED', 'hover over Products', 16, 'hover'),
  P('MIXED', 'type "remember the milk" into notes', 17, 'fill', ['remember the milk']),
  P('MIXED', 'scroll to the Back to top button', 20, 'scroll', []),
  P('MIXED', 'press the Home key', undefined, 'press', ['Home']),
  // dropdowns: native vs custom, "set … to", option without "from"
  P('DROPDOWN', 'select "Large" from the size dropdown', 1, 'select', ['Large']),
  P('DROPDOWN', 'set the size dropdown to small', 1, 'select', ['Small']),
  P('DROPDOWN', 'set size to "Large"', 1, 'select', ['Large']),
  P('DROPDOWN', 'set gift message to "Happy birthday"', 3, 'fill', ['Happy birthday']),
  P('DROPDOWN', 'select "3" from quantity', 4, 'select', ['3']),
  P('DROPDOWN', 'select Small', 1, 'select', ['Small']),
  P('DROPDOWN', 'click "Choose a colour"', 2, 'click'),
  P('DROPDOWN', 'open the "Choose a colour" dropdown', 2, 'click'),
  P('DROPDOWN', 'type "Oslo" into delivery city', 5, 'fill', ['Oslo']),
  P('DROPDOWN', 'press ctrl+k in the shortcut field', 6, 'press', ['Control+K']),
  P('DROPDOWN', 'clear the gift message field', 3, 'fill', ['']),
  // page-level actions
  P('LOGIN', 'press Enter', undefined, 'press', ['Enter']),
  P('LOGIN', 'press ctrl+a', undefined, 'press', ['Control+A']),
  P('LOGIN', 'hit the Escape key', undefined, 'press', ['Escape']),
  P('LOGIN', 'press Ctrl+Shift+K', undefined, 'press', ['Control+Shift+K']),
  P('LOGIN', 'type "hello"', undefined, 'type', ['hello']),
  P('LOGIN', 'scroll down', undefined, 'scroll', ['down']),
  P('LOGIN', 'scroll up 300px', undefined, 'scroll', ['-300']),
  P('LOGIN', 'scroll to the bottom', undefined, 'scroll', ['bottom']),
  P('LOGIN', 'scroll to top of the page', undefined, 'scroll', ['top']),
  P('LOGIN', 'scroll halfway down the page', undefined, 'scroll', ['50%']),
  P('LOGIN', 'scroll to 75%', undefined, 'scroll', ['75%']),
  P('LOGIN', 'go back', undefined, 'back'),
  P('LOGIN', 'Go forward.', undefined, 'forward'),
  P('LOGIN', 'reload the page', undefined, 'reload'),
];

interface Defer {
  page: PageName;
  instruction: string;
  why: string;
}
const D = (page: PageName, instruction: string, why: string): Defer => ({ page, instruction, why });

const MUST_DEFER: Defer[] = [
  D('PRODUCTS', 'click Add to cart', 'twelve identical buttons, no ordinal'),
  D('PRODUCTS', 'click the add to cart button', 'twelve identical buttons, no ordinal'),
  D('PRODUCTS', 'click the 13th add to cart button', 'ordinal past the end'),
  D('PRODUCTS', 'buy the cheapest item', 'needs reasoning'),
  D('PRODUCTS', 'click the trail link', 'two links share "Trail"'),
  D('PRODUCTS', 'click add to cart for the Red Jacket', 'no product called that'),
  D('PRODUCTS', 'click add to cart for the trail', 'two products mention trail'),
  D('LOGIN', 'log in', 'not a form the matcher knows'),
  D('LOGIN', 'click the thing', 'vague'),
  D('LOGIN', 'do the usual', 'not an instruction'),
  D('LOGIN', 'check the Sign in button', 'role mismatch: a button cannot be checked'),
  D('LOGIN', 'type ada@example.com into email', 'unquoted text to type'),
  D('LOGIN', 'select "Large" from the email field', 'email is not a dropdown'),
  D('LOGIN', 'click the submit button', 'no button called submit'),
  D('LOGIN', 'click Sign in with Facebook', 'the name is only part of the phrase'),
  D('SIGNUP', 'enter "123" into referral code', 'label-less field: only nearby text'),
  D('SIGNUP', 'uncheck Pro', 'a radio cannot be unchecked'),
  D('SIGNUP', 'select "Denmark" from country', 'no such option'),
  D('SIGNUP', 'click the terms', 'checkbox and link both mention terms'),
  D('SIGNUP', 'type "x" into the field', 'no target words'),
  D('MIXED', 'click Sign in', 'a link and a button with the same name'),
  D('MIXED', 'click save', 'three buttons start with Save'),
  D('MIXED', 'click accept', '"Accept all" is twice the phrase'),
  D('MIXED', 'click cancel', '"Cancel subscription" is not "Cancel"'),
  D('MIXED', 'click Delete', 'disabled'),
  D('MIXED', 'press home', 'the key or the Home link?'),
  D('MIXED', 'click sign', 'Sign in / Sign up'),
  D('MIXED', 'click Sign in and wait for the dashboard', 'two steps'),
  D('MIXED', 'click the square button', 'unnamed icons'),
  D('MIXED', 'click the second Welcome back heading', 'no such second element'),
  D('DROPDOWN', 'select "Green" from the colour picker', 'custom dropdown: two steps, model job'),
  D('DROPDOWN', 'select "Purple" from the size dropdown', 'no such option'),
  D('DROPDOWN', 'select "Large" from gift message', 'a text field is not a dropdown'),
  D('DROPDOWN', 'open the colour picker', 'a paraphrase of "Choose a colour"'),
];

describe('matchInstruction: answers', () => {
  it('has the case table the brief asks for', () => {
    expect(POSITIVE.length).toBeGreaterThanOrEqual(40);
    expect(MUST_DEFER.length).toBeGreaterThanOrEqual(20);
  });

  it.each(POSITIVE)('$page: $instruction', ({ page: name, instruction, id, method, args }) => {
    const d = matchInstruction(instruction, PAGES[name]);
    if (d.kind !== 'action') throw new Error(`deferred: ${d.reason}; ${formatCandidates(d.candidates)}`);
    expect(d.action.method).toBe(method);
    expect(d.elementId).toBe(id);
    if (id === undefined) expect(d.action.target).toBeUndefined();
    else expect(d.action.target).toEqual({ id });
    if (args) expect(d.action.args).toEqual(args);
    expect(d.action.description).toBeTruthy();
    expect(d.score).toBeGreaterThanOrEqual(0.75);
  });
});

describe('matchInstruction: defers', () => {
  it.each(MUST_DEFER)('$page: $instruction ($why)', ({ page: name, instruction }) => {
    const d = matchInstruction(instruction, PAGES[name]);
    expect(d.kind, JSON.stringify(d)).toBe('defer');
  });

  it('"select 3" picks the one dropdown offering 3', () => {
    const d = matchInstruction('select 3', DROPDOWN);
    expect(d.kind === 'action' && d.action).toMatchObject({
      method: 'select',
      target: { id: 4 },
      args: ['3'],
    });
  });

  it('an option name that is also a button defers', () => {
    const snap = page([
      { role: 'combobox', name: 'Size', options: ['Small', 'Large'] },
      { role: 'button', name: 'Large' },
    ]);
    expect(matchInstruction('select Large', snap).kind).toBe('defer');
  });

  it('a budgeted snapshot cannot count', () => {
    const budgeted = { ...PRODUCTS, stats: { ...PRODUCTS.stats, omittedInteractive: 30 } };
    expect(matchInstruction('click the second add to cart button', budgeted).kind).toBe('defer');
    const chunk = { ...PRODUCTS, chunk: { index: 1, count: 3 } };
    expect(matchInstruction('click the last add to cart button', chunk).kind).toBe('defer');
  });

  it('two identical twins defer even when one is disabled or off screen', () => {
    const snap = page([
      { role: 'button', name: 'Continue' },
      { role: 'button', name: 'Continue', inViewport: false, states: { disabled: true } },
    ]);
    const d = matchInstruction('click Continue', snap);
    expect(d.kind).toBe('defer');
    if (d.kind === 'defer') expect(d.reason).toMatch(/look the same/);
  });

  it('an ordinal never picks a disabled element', () => {
    const snap = page([
      { role: 'button', name: 'Remove' },
      { role: 'button', name: 'Remove', states: { disabled: true } },
    ]);
    expect(matchInstruction('click the second Remove button', snap).kind).toBe('defer');
    expect(matchInstruction('click the first Remove button', snap)).toMatchObject({ elementId: 1 });
  });

  it('toggle defers when the state is unknown or mixed', () => {
    const snap = page([
      { role: 'checkbox', name: 'Select all', states: { checked: 'mixed' } },
      { role: 'switch', name: 'Wifi' },
    ]);
    expect(matchInstruction('toggle select all', snap).kind).toBe('defer');
    expect(matchInstruction('toggle wifi', snap).kind).toBe('defer');
  });

  it('"set X to v" defers when both a field and a dropdown fit', () => {
    const snap = page([
      { role: 'textbox', name: 'Size' },
      { role: 'combobox', name: 'Size', options: ['Small', 'Large'] },
    ]);
    expect(matchInstruction('set size to "Large"', snap).kind).toBe('defer');
  });

  it('the literal reading wins over a count when it names an element exactly', () => {
    const snap = page([
      { role: 'link', name: 'Last page' },
      { role: 'link', name: 'Page' },
      { role: 'link', name: 'Page' },
    ]);
    // "last page" is both the link "Last page" and the last of two "Page" links.
    expect(matchInstruction('click last page', snap).kind).toBe('defer');
    const only = page([
      { role: 'link', name: 'Last page' },
      { role: 'link', name: 'Next' },
    ]);
    expect(matchInstruction('click last page', only)).toMatchObject({ kind: 'action', elementId: 1 });
  });

  it('defer carries the closest candidates, best first', () => {
    const d = matchInstruction('click save', MIXED);
    expect(d.kind).toBe('defer');
    if (d.kind !== 'defer') return;
    expect(d.candidates.map((c) => c.id).sort()).toEqual([11, 12, 13]);
    expect(d.candidates[0]!.score).toBeGreaterThanOrEqual(d.candidates[1]!.score);
    expect(formatCandidates(d.candidates)).toMatch(/^closest: \[1[123]\] button 'Save/);
  });
});

describe('matchInstruction: details', () => {
  it('describes the action in words', () => {
    const d = matchInstruction('click the Sign in button', LOGIN);
    expect(d.kind === 'action' && d.action.description).toBe("click button 'Sign in'");
    const f = matchInstruction('type %email% into email', LOGIN);
    expect(f.kind === 'action' && f.action.description).toBe("fill '%email%' into textbox 'Email'");
  });

  it('reports score, margin and time', () => {
    const d = matchInstruction('click the Sign in button', LOGIN);
    expect(d).toMatchObject({ kind: 'action', score: 1 });
    if (d.kind !== 'action') return;
    expect(d.margin).toBeGreaterThanOrEqual(0.15);
    expect(d.ms).toBeGreaterThanOrEqual(0);
    expect(d.parsed.verb).toBe('click');
  });

  it('thresholds are options', () => {
    // "accept" covers half of "Accept all" (0.70): a looser threshold and margin take it.
    expect(matchInstruction('click accept', MIXED).kind).toBe('defer');
    expect(matchInstruction('click accept', MIXED, { threshold: 0.65, margin: 0.1 })).toMatchObject({
      kind: 'action',
      elementId: 8,
    });
    expect(matchInstruction('click the Sign in button', LOGIN, { threshold: 1.01 }).kind).toBe('defer');
  });

  it('formatCandidates', () => {
    expect(formatCandidates([])).toBe('no element came close');
    expect(
      formatCandidates([
        { id: 3, role: 'button', name: 'Sign up', score: 0.624 },
        { id: 5, role: 'link', name: 'Sign in', score: 0.41 },
      ]),
    ).toBe("closest: [3] button 'Sign up' (0.62), [5] link 'Sign in' (0.41)");
  });

  it('decides over a 2,000-element page', () => {
    const specs: Spec[] = [];
    for (let i = 0; i < 2000; i++) {
      const kind = i % 4;
      if (kind === 0) specs.push({ role: 'link', name: `Article ${i} about topic ${i % 37}` });
      else if (kind === 1) specs.push({ role: 'button', name: `Share ${i}` });
      else if (kind === 2) specs.push({ role: 'text', name: `Paragraph ${i} with some longer text in it` });
      else specs.push({ role: 'textbox', name: `Comment ${i}`, placeholder: 'Write a comment' });
    }
    specs.push({ role: 'button', name: 'Load more stories' });
    const big = page(specs);
    const d = matchInstruction('click the Load more stories button', big);
    expect(d).toMatchObject({ kind: 'action', elementId: 2001 });
    expect(matchInstruction('click Share', big).kind).toBe('defer');
    expect(typeof d.ms).toBe('number');
  });
});

describe('scoring', () => {
  const s = (a: string, b: string, quoted = false) => textScore(toNorm(a), toNorm(b), quoted);

  it('orders exact > synonyms > stemmed > reordered > most of the name > half of it > overlap', () => {
    expect(s('sign in', 'Sign in')).toBe(1);
    expect(s('log in', 'Sign in')).toBe(0.97);
    expect(s('Log-In', 'login')).toBe(0.97);
    expect(s('e-mail address', 'Email address')).toBe(0.97);
    expect(s('Add to carts', 'Add to cart')).toBe(0.96);
    expect(s('cart add to', 'Add to cart')).toBe(0.95);
    expect(s('email', 'Email address')).toBeGreaterThan(0.75);
    expect(s('save draft', 'Save draft now')).toBeGreaterThan(0.75);
    expect(s('accept', 'Accept all')).toBeLessThan(0.75);
    expect(s('cancel subscription', 'Cancel')).toBeLessThan(0.75);
    expect(s('sign in with facebook', 'Sign in with Google')).toBeLessThan(0.6);
    expect(s('log in', 'Sign up')).toBeLessThan(0.6);
    expect(s('card b', 'Card A')).toBeLessThan(0.6);
  });

  it('quoted phrases match whole texts only', () => {
    expect(s('Forgot password', 'Forgot password?', true)).toBe(1);
    expect(s('Accept', 'Accept all', true)).toBe(0);
  });

  it('punctuation, case and accents do not matter', () => {
    expect(s('cafe menu', 'Café — Menu!')).toBe(1);
    expect(s('terms and conditions', 'Terms & Conditions')).toBe(1);
  });

  it('never matches an element on nearby text alone', () => {
    const ranked = scoreCandidates({ phrase: 'referral code' }, SIGNUP.elements, 'fill');
    expect(ranked.find((c) => c.element.id === 5)).toBeUndefined();
  });

  it('scores stay in [0, 1], sorted', () => {
    const ranked = scoreCandidates({ phrase: 'add to cart' }, PRODUCTS.elements, 'click');
    expect(ranked.length).toBeGreaterThan(0);
    for (const [i, c] of ranked.entries()) {
      expect(c.score).toBeGreaterThan(0);
      expect(c.score).toBeLessThanOrEqual(1);
      if (i > 0) expect(c.score).toBeLessThanOrEqual(ranked[i - 1]!.score);
    }
  });

  it('prefers what is on screen, slightly', () => {
    const ranked = scoreCandidates({ phrase: 'add to cart' }, PRODUCTS.elements, 'click');
    expect(ranked[0]!.element.inViewport).toBe(true);
    expect(ranked.at(-1)!.score).toBeCloseTo(0.97, 2);
  });
});
