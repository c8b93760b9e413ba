import { describe, expect, it } from 'vitest';
import { normalizeKey, type ParsedInstruction, parseInstruction } from '../../lib/ops/matcher/parse.ts';

/** Parses and fails loudly when the sentence is not recognised. */
function parsed(text: string): ParsedInstruction {
  const p = parseInstruction(text);
  if (!p) throw new Error(`not parsed: ${text}`);
  return p;
}

describe('parseInstruction: clicks and targets', () => {
  it.each([
    ['click the Sign in button', 'sign in', 'button'],
    ['Click on the "Sign in" button.', 'Sign in', 'button'],
    ['please tap Sign In', 'sign in', undefined],
    ['press the sign in button!', 'sign in', 'button'],
    ['hit Submit', 'submit', undefined],
    ['open the Create an account link', 'create an account', 'link'],
    ['follow the link Pricing', 'pricing', 'link'],
    ['click the button labelled Save', 'save', 'button'],
    ['click the Settings tab', 'settings', 'tab'],
    ['could you click the Continue btn please', 'continue', 'button'],
    ['Click «Accept all»', 'Accept all', undefined],
    ['click ‘Forgot password?’', 'Forgot password?', undefined],
    ['click `Go`', 'Go', undefined],
    ['click “Men’s shoes”', 'Men’s shoes', undefined],
    ["click 'Men's shoes'", "Men's shoes", undefined],
    ['click the search icon', 'search', 'icon'],
  ])('%s', (text, phrase, roleHint) => {
    const p = parsed(text);
    expect(p.verb).toBe('click');
    expect(p.target?.phrase).toBe(phrase);
    expect(p.target?.roleHint).toBe(roleHint);
  });

  it('marks quoted phrases and keeps their case', () => {
    expect(parsed('click "Sign In"').target).toMatchObject({ phrase: 'Sign In', quoted: true });
    expect(parsed('click Sign In').target?.quoted).toBeUndefined();
  });

  it('keeps the role words for names that include them', () => {
    expect(parsed('click the deep button').target).toMatchObject({
      phrase: 'deep',
      roleHint: 'button',
      full: 'deep button',
    });
  });

  it('a lone role word is the name to look for', () => {
    expect(parsed('click the menu').target).toEqual({ phrase: 'menu' });
  });

  it.each([
    ['click the second Add to cart button', 2, 'add to cart'],
    ['click the 2nd add to cart button', 2, 'add to cart'],
    ['click the last "Add to cart"', -1, 'Add to cart'],
    ['click the first add to cart', 1, 'add to cart'],
    ['click the third link', 3, ''],
    ['click Add to cart #4', 4, 'add to cart'],
    ['click the add to cart button number 5', 5, 'add to cart'],
    ['click the tenth result', 10, 'result'],
  ])('ordinal: %s', (text, ordinal, phrase) => {
    const t = parsed(text).target;
    expect(t?.ordinal).toBe(ordinal);
    expect(t?.phrase).toBe(phrase);
  });

  it('keeps the literal reading of a word ordinal ("First Aid Kit")', () => {
    expect(parsed('click First Aid Kit').target).toMatchObject({
      phrase: 'aid kit',
      ordinal: 1,
      literal: 'first aid kit',
    });
  });

  it('"first name" and "last name" are never counts', () => {
    const t = parsed('type "Ada" into the first name field').target;
    expect(t).toMatchObject({ phrase: 'first name', roleHint: 'field' });
    expect(t?.ordinal).toBeUndefined();
  });

  it('double-click and hover', () => {
    expect(parsed('double-click the row')).toMatchObject({ verb: 'dblclick', target: { phrase: 'row' } });
    expect(parsed('double click on Card A')).toMatchObject({
      verb: 'dblclick',
      target: { phrase: 'card a' },
    });
    expect(parsed('hover over Products')).toMatchObject({ verb: 'hover', target: { phrase: 'products' } });
    expect(parsed('mouse over the Help icon')).toMatchObject({
      verb: 'hover',
      target: { phrase: 'help', roleHint: 'icon' },
    });
  });

  it('"select" a checkable thing means check it', () => {
    expect(parsed('select the Remember me checkbox')).toMatchObject({
      verb: 'check',
      target: { phrase: 'remember me', roleHint: 'checkbox' },
    });
    expect(parsed('select the remember me box')).toMatchObject({ verb: 'check' });
    expect(parsed('choose the Express radio button')).toMatchObject({ verb: 'check' });
    expect(parsed('select Pro')).toMatchObject({ verb: 'click', word: 'select', target: { phrase: 'pro' } });
  });
});

describe('parseInstruction: text entry', () => {
  it.each([
    ['type "ada@example.com" into the email field', 'ada@example.com', 'email', 'field'],
    ["enter 'ada@example.com' in Email", 'ada@example.com', 'email', undefined],
    ['fill the email box with “ada@example.com”', 'ada@example.com', 'email', 'field'],
    ['fill in the phone number with "555-0100"', '555-0100', 'phone number', undefined],
    ['put "Oslo" in the city field', 'Oslo', 'city', 'field'],
    ['write "hello" in the cross-origin note', 'hello', 'cross-origin note', undefined],
    ['input "42" into quantity', '42', 'quantity', undefined],
    ['Type %password% into the password field', '%password%', 'password', 'field'],
    ['type "%first% %last%" into full name', '%first% %last%', 'full name', undefined],
    ['in the search box, type "shoes"', 'shoes', 'search', 'field'],
    ['enter "Oslo" for city', 'Oslo', 'city', undefined],
    ["type 'it's fine' into notes", "it's fine", 'notes', undefined],
  ])('%s', (text, value, phrase, roleHint) => {
    const p = parsed(text);
    expect(p.verb).toBe('fill');
    expect(p.value).toBe(value);
    expect(p.target?.phrase).toBe(phrase);
    expect(p.target?.roleHint).toBe(roleHint);
  });

  it('set X to "v" fills, or selects when X turns out to be a dropdown', () => {
    expect(parsed('set the password to "hunter2"')).toMatchObject({
      verb: 'fill',
      value: 'hunter2',
      alsoSelect: true,
      target: { phrase: 'password' },
    });
    expect(parsed('set the size dropdown to small')).toMatchObject({
      verb: 'select',
      value: 'small',
      target: { phrase: 'size', roleHint: 'dropdown' },
    });
    // A bare value can only be an option: the option list proves it.
    expect(parsed('set size to large')).toMatchObject({ verb: 'select', value: 'large' });
  });

  it('clears a field only when the sentence says it is a field', () => {
    expect(parsed('clear the search field')).toMatchObject({
      verb: 'fill',
      value: '',
      target: { phrase: 'search' },
    });
    expect(parseInstruction('clear filters')).toBeUndefined();
  });

  it('type with no target types into the focused element', () => {
    expect(parsed('type "hello world"')).toEqual({ verb: 'type', value: 'hello world', word: 'type' });
  });

  it('refuses unquoted text to type', () => {
    expect(parseInstruction('type ada@example.com into email')).toBeUndefined();
    expect(parseInstruction('fill email with ada@example.com')).toBeUndefined();
  });
});

describe('parseInstruction: select, check, toggle', () => {
  it.each([
    ['select "Norway" from the Country dropdown', 'Norway', 'country', 'dropdown'],
    ['choose Sweden from country', 'sweden', 'country', undefined],
    ['pick japan in the country select', 'japan', 'country', 'dropdown'],
    ['select the Large option from size', 'large', 'size', undefined],
    ['select %country% from country', '%country%', 'country', undefined],
    ['select size: "Large"', 'Large', 'size', undefined],
  ])('%s', (text, value, phrase, roleHint) => {
    const p = parsed(text);
    expect(p.verb).toBe('select');
    expect(p.value).toBe(value);
    expect(p.target?.phrase).toBe(phrase);
    expect(p.target?.roleHint).toBe(roleHint);
  });

  it.each([
    ['check Remember me', 'check', 'remember me'],
    ['tick the remember me checkbox', 'check', 'remember me'],
    ['tick the box next to Remember me', 'check', 'remember me'],
    ['mark "I agree" as checked', 'check', 'I agree'],
    ['make sure newsletter is checked', 'check', 'newsletter'],
    ['ensure that newsletter is unchecked', 'uncheck', 'newsletter'],
    ['uncheck Remember me', 'uncheck', 'remember me'],
    ['untick the newsletter box', 'uncheck', 'newsletter'],
    ['turn on dark mode', 'check', 'dark mode'],
    ['turn off the dark mode switch', 'uncheck', 'dark mode'],
    ['toggle remember me', 'toggle', 'remember me'],
    ['toggle off notifications', 'uncheck', 'notifications'],
  ])('%s', (text, verb, phrase) => {
    const p = parsed(text);
    expect(p.verb).toBe(verb);
    expect(p.target?.phrase).toBe(phrase);
  });

  it('"check that …" is a verification, not a checkbox', () => {
    expect(parseInstruction('check that the total is 5')).toBeUndefined();
    expect(parseInstruction('check if the order went through')).toBeUndefined();
    expect(parseInstruction('mark all as read')).toBeUndefined();
  });
});

describe('parseInstruction: keys', () => {
  it.each([
    ['press Enter', 'Enter'],
    ['hit return', 'Enter'],
    ['press the Escape key', 'Escape'],
    ['press esc', 'Escape'],
    ['press Tab', 'Tab'],
    ['press ctrl+a', 'Control+A'],
    ['press Control+A', 'Control+A'],
    ['press ctrl + shift + k', 'Control+Shift+K'],
    ['press Ctrl-C', 'Control+C'],
    ['press cmd+enter', 'Meta+Enter'],
    ['press the down arrow', 'ArrowDown'],
    ['press arrow up', 'ArrowUp'],
    ['press ArrowLeft', 'ArrowLeft'],
    ['press page down', 'PageDown'],
    ['press the space bar', 'Space'],
    ['press F5', 'F5'],
    ['press shift+tab', 'Shift+Tab'],
    ['press the a key', 'a'],
    ['press the Enter key on the keyboard', 'Enter'],
  ])('%s', (text, key) => {
    const p = parsed(text);
    expect(p.verb).toBe('press');
    expect(p.key).toBe(key);
  });

  it('press a key inside an element', () => {
    expect(parsed('press Tab in the shortcut field')).toMatchObject({
      verb: 'press',
      key: 'Tab',
      target: { phrase: 'shortcut', roleHint: 'field' },
    });
    expect(parsed('press Enter on the search box').target?.phrase).toBe('search');
  });

  it('flags bare key words that could also be names', () => {
    expect(parsed('press home').keyWord).toBe('home');
    expect(parsed('press the Home key').keyWord).toBeUndefined();
    expect(parsed('press ctrl+home').keyWord).toBeUndefined();
  });

  it('press on something that is not a key is a click', () => {
    expect(parsed('press the Delete account button')).toMatchObject({ verb: 'click' });
    expect(parsed('press sign in')).toMatchObject({ verb: 'click', target: { phrase: 'sign in' } });
  });

  it('normalizeKey', () => {
    expect(normalizeKey('ctrl+shift+k')).toBe('Control+Shift+K');
    expect(normalizeKey('Alt+F4')).toBe('Alt+F4');
    expect(normalizeKey('enter')).toBe('Enter');
    expect(normalizeKey('a')).toBeUndefined();
    expect(normalizeKey('a', true)).toBe('a');
    expect(normalizeKey('ctrl+ctrl+a')).toBeUndefined();
    expect(normalizeKey('sign in')).toBeUndefined();
    expect(normalizeKey('shift')).toBe('Shift');
  });
});

describe('parseInstruction: scrolling and navigation', () => {
  it.each([
    ['scroll down', 'down'],
    ['scroll up a bit', 'up'],
    ['Scroll down the page.', 'down'],
    ['scroll to the bottom', 'bottom'],
    ['scroll to top of the page', 'top'],
    ['scroll all the way down', 'bottom'],
    ['scroll to the very top', 'top'],
    ['scroll to the end of the page', 'bottom'],
    ['scroll halfway down the page', 50],
    ['scroll to the middle', 50],
    ['scroll to 75%', 75],
    ['scroll to 30 percent of the page', 30],
  ])('%s', (text, to) => {
    expect(parsed(text)).toEqual({ verb: 'scroll', scroll: { to } });
  });

  it('scroll by pixels', () => {
    expect(parsed('scroll down 300px')).toEqual({ verb: 'scroll', scroll: { to: 'down', px: 300 } });
    expect(parsed('scroll up by 200 pixels')).toEqual({ verb: 'scroll', scroll: { to: 'up', px: 200 } });
  });

  it('scroll to an element', () => {
    expect(parsed('scroll to the Back to top button')).toMatchObject({
      verb: 'scroll',
      target: { phrase: 'back to top', roleHint: 'button' },
    });
    expect(parsed('scroll until you see Reviews')).toMatchObject({ target: { phrase: 'reviews' } });
    expect(parsed('scroll the pricing table into view')).toMatchObject({
      target: { phrase: 'pricing table' },
    });
  });

  it.each([
    ['go back', 'back'],
    ['Go back to the previous page.', 'back'],
    ['navigate back', 'back'],
    ['go forward', 'forward'],
    ['reload', 'reload'],
    ['refresh the page', 'reload'],
    ['Reload this page!', 'reload'],
  ])('%s', (text, verb) => {
    expect(parsed(text)).toEqual({ verb });
  });

  it('rejects scroll forms it does not know', () => {
    expect(parseInstruction('scroll to 150%')).toBeUndefined();
    expect(parseInstruction('scroll down three times')).toBeUndefined();
  });
});

describe('parseInstruction: what it refuses', () => {
  it.each([
    'log in',
    'do the usual',
    'buy the cheapest item',
    'sign in with my account',
    'click Sign in and then wait for the dashboard',
    'type "x" into email and press enter',
    'click Next, then click Finish',
    'right-click the file',
    "don't click anything",
    'if you see a cookie banner, accept it',
    'click',
    'type "x" into "%field%"',
    'click "unterminated',
    '',
  ])('%s', (text) => {
    expect(parseInstruction(text)).toBeUndefined();
  });
});

describe('parseInstruction: generic role words (issue 8)', () => {
  it.each([
    ['click the button', 'click', 'button', 'button'],
    ['Click the button.', 'click', 'button', 'button'],
    ['click on the link', 'click', 'link', 'link'],
    ['check the checkbox', 'check', 'checkbox', 'checkbox'],
    ['tick the box', 'check', 'checkbox', 'box'],
    ['click the tab', 'click', 'tab', 'tab'],
    ['open the dropdown', 'click', 'dropdown', 'dropdown'],
  ])('%s → role only', (text, verb, roleHint, full) => {
    const p = parsed(text);
    expect(p.verb).toBe(verb);
    expect(p.target).toEqual({ phrase: '', roleHint, roleOnly: true, full });
  });

  it.each([
    ['type "x" into the text field', 'text field'],
    ['enter "x" in the textbox', 'textbox'],
    ['type "x" into the input', 'input'],
    ['put "x" in the text box', 'text box'],
    ['type "x" into the box', 'box'],
  ])('text entry: %s', (text, full) => {
    expect(parsed(text)).toMatchObject({
      verb: 'fill',
      value: 'x',
      target: { phrase: '', roleHint: 'field', roleOnly: true, full },
    });
  });

  it.each([
    ['select A from the dropdown', 'a', 'dropdown'],
    ['Select Ukraine from the list', 'ukraine', 'list'],
    ['choose "Large" from the drop-down menu', 'Large', 'drop-down menu'],
  ])('select from a generic control: %s', (text, value, full) => {
    expect(parsed(text)).toMatchObject({
      verb: 'select',
      value,
      target: { phrase: '', roleHint: 'dropdown', roleOnly: true, full },
    });
  });

  it('keeps names that merely end in a role word', () => {
    expect(parsed('click the Sign in button').target).toEqual({
      phrase: 'sign in',
      roleHint: 'button',
      full: 'sign in button',
    });
    expect(parsed('click the menu').target).toEqual({ phrase: 'menu' });
    expect(parsed('click the icon').target).toEqual({ phrase: 'icon' });
  });

  it('"a "checkbox" widget" names a kind', () => {
    // "a": any one of them will do, so the first in reading order.
    expect(parsed('Click on a "checkbox" widget.').target).toEqual({
      phrase: '',
      roleHint: 'checkbox',
      roleOnly: true,
      full: 'checkbox',
      ordinal: 1,
    });
    expect(parsed('click the "checkbox" widget').target?.ordinal).toBeUndefined();
    expect(parsed('click on a "textarea" widget').target).toMatchObject({
      roleHint: 'field',
      full: 'textarea',
    });
    expect(parseInstruction('click on a "gizmo" widget')).toBeUndefined();
  });
});

describe('parseInstruction: ordinals over roles (issue 8)', () => {
  it.each([
    ['click tab #2', 'tab', 2],
    ['Click on Tab #2.', 'tab', 2],
    ['click the second tab', 'tab', 2],
    ['click the 3rd link', 'link', 3],
    ['click the last button', 'button', -1],
    ['click the first checkbox', 'checkbox', 1],
    ['Focus into the 2nd input textbox.', 'field', 2],
  ])('%s', (text, roleHint, ordinal) => {
    expect(parsed(text).target).toMatchObject({ phrase: '', roleHint, ordinal, roleOnly: true });
  });
});

describe('parseInstruction: focus (issue 8)', () => {
  it.each([
    ['Focus into the textbox.', { phrase: '', roleHint: 'field', roleOnly: true }],
    ['focus on the email field', { phrase: 'email', roleHint: 'field' }],
    ['focus the search box', { phrase: 'search', roleHint: 'field' }],
    ['put the cursor in the Notes field', { phrase: 'notes', roleHint: 'field' }],
    ['set focus to the email field', { phrase: 'email', roleHint: 'field' }],
  ])('%s is a click that may only land on a field', (text, target) => {
    const p = parsed(text);
    expect(p).toMatchObject({ verb: 'click', word: 'focus', target });
  });

  it('refuses to "focus" a button: clicking it would press it', () => {
    expect(parseInstruction('focus the submit button')).toBeUndefined();
    expect(parseInstruction('focus on the Sign in link')).toBeUndefined();
  });
});

describe('parseInstruction: dialog close (issue 8)', () => {
  it.each([
    'close the dialog',
    'Close the dialog box.',
    'dismiss the modal',
    'close the popup',
    'Close the dialog box by clicking the "x".',
    'close the dialog by clicking the close button',
    'close this modal',
  ])('%s', (text) => {
    expect(parsed(text)).toEqual({
      verb: 'click',
      word: 'close',
      target: { phrase: 'close', roleHint: 'button', closes: 'dialog' },
    });
  });

  it('"click the x" is the close control, with its name kept for pages without a dialog', () => {
    expect(parsed('click the x').target).toEqual({ phrase: 'x', closes: 'dialog' });
    expect(parsed('click the X button').target).toMatchObject({
      phrase: 'x',
      roleHint: 'button',
      closes: 'dialog',
    });
    expect(parsed('click "×"').target).toMatchObject({ phrase: '×', closes: 'dialog' });
  });

  it('refuses a dialog close with an unknown means', () => {
    expect(parseInstruction('close the dialog by clicking the OK button')).toBeUndefined();
    expect(parseInstruction('close the window')).toBeUndefined();
  });

  it('scopes "the button in the dialog labeled …" to the dialog', () => {
    expect(parsed('Click the button in the dialog box labeled "Cancel".').target).toEqual({
      phrase: 'Cancel',
      quoted: true,
      roleHint: 'button',
      within: 'dialog',
    });
    expect(parsed('click the OK button in the dialog').target).toMatchObject({
      phrase: 'ok',
      roleHint: 'button',
      within: 'dialog',
    });
    expect(parsed('Click the button in the dialog box labeled "x".').target).toMatchObject({
      closes: 'dialog',
    });
  });
});

describe('parseInstruction: press Enter / Submit (issue 8)', () => {
  it('a key name is a key, a button name is a click', () => {
    expect(parsed('press Enter')).toMatchObject({ verb: 'press', key: 'Enter' });
    expect(parsed('press Submit')).toMatchObject({
      verb: 'click',
      target: { phrase: 'submit' },
      word: 'press',
    });
    expect(parsed('hit submit')).toMatchObject({ verb: 'click', target: { phrase: 'submit' } });
  });
});

describe('parseInstruction: what the element does', () => {
  it.each([
    ['click the button that signs in', 'sign in', 'button'],
    ['click the button which logs you in', 'log in', 'button'],
    ['click the button for signing up', 'sign up', 'button'],
    ['click the link that searches the catalogue', 'search the catalogue', 'link'],
    ['click the link to reset a forgotten password', 'reset a forgotten password', 'link'],
    ['click the link to the docs', 'docs', 'link'],
    // Plain connectors keep working as before.
    ['click the checkbox for remember me', 'remember me', 'checkbox'],
    ['click the button labelled Save', 'save', 'button'],
  ])('%s', (text, phrase, roleHint) => {
    const p = parsed(text);
    expect(p.target?.phrase).toBe(phrase);
    expect(p.target?.roleHint).toBe(roleHint);
  });
});
