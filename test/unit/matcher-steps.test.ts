import { describe, expect, it } from 'vitest';
import { splitInstruction } from '../../lib/ops/matcher/steps.ts';

const texts = (s: string) => splitInstruction(s)?.map((p) => p.text);

describe('splitInstruction: compound instructions split at the obvious joints', () => {
  it.each([
    [
      'Enter "Kasie" into the text field and press Submit.',
      ['Enter "Kasie" into the text field', 'press Submit'],
    ],
    ['type "a" into x, then click y', ['type "a" into x', 'click y']],
    ['Click button ONE, then click button TWO.', ['Click button ONE', 'click button TWO']],
    ['click Next; click Finish', ['click Next', 'click Finish']],
    ['click Next and then click Finish', ['click Next', 'click Finish']],
    ['type "x" into email. Click Go', ['type "x" into email', 'Click Go']],
    [
      'select Large from the size dropdown and click Add to cart',
      ['select Large from the size dropdown', 'click Add to cart'],
    ],
    ['Check the checkbox and press Enter', ['Check the checkbox', 'press Enter']],
  ])('%s', (input, want) => {
    expect(texts(input)).toEqual(want);
  });

  it('expands a comma list of things to tick', () => {
    expect(texts('select A, B and C and click Submit')).toEqual([
      'select A',
      'select B',
      'select C',
      'click Submit',
    ]);
    expect(texts('Select Xp, 5kbF, and click Submit.')).toEqual(['Select Xp', 'Select 5kbF', 'click Submit']);
  });

  it('"select nothing" asks for no action', () => {
    expect(texts('Select nothing and click Submit.')).toEqual(['click Submit']);
  });

  it('keeps quoted text whole, joints inside quotes included', () => {
    expect(texts('Enter "a, then b" into the field and click Go')).toEqual([
      'Enter "a, then b" into the field',
      'click Go',
    ]);
    expect(texts('type %user% into email and press Enter')).toEqual([
      'type %user% into email',
      'press Enter',
    ]);
    const steps = splitInstruction('type "x" into email and press enter');
    expect(steps?.map((s) => s.parsed.verb)).toEqual(['fill', 'press']);
  });

  it.each([
    'click Sign in',
    'click Terms and Conditions',
    'click Sign in and then wait for the dashboard',
    'Enter the password "xyz" into both text fields and press submit.',
    'Expand the section below and click submit.',
    'For the user @ada, click on the "Like" button.',
    'Use the textbox to enter "cats" and press "Search", then find and click the 3rd search result.',
  ])('no split unless every part is plain: %s', (input) => {
    expect(splitInstruction(input)).toBeUndefined();
  });

  it('puts "after …-ing" steps first and "before …-ing" steps last', () => {
    expect(texts('Click on the "ok" button, after clicking on the link "lorem".')).toEqual([
      'click on the link "lorem"',
      'Click on the "ok" button',
    ]);
    expect(
      texts('Select Tobe and click Submit, after entering "abc" into the text field and pressing Submit'),
    ).toEqual(['enter "abc" into the text field', 'press Submit', 'Select Tobe', 'click Submit']);
    expect(texts('click Save before closing the dialog')).toEqual(['click Save', 'close the dialog']);
    expect(splitInstruction('click Save after editing')).toBeUndefined();
  });

  it('refuses a part that still holds a joint', () => {
    expect(splitInstruction('type "x" into the field and pressing Submit')).toBeUndefined();
  });

  it('"enter the username "a" and the password "b" into the text fields": one field per value', () => {
    expect(
      texts('Enter the username "kanesha" and the password "Ja9" into the text fields and press login.'),
    ).toEqual([
      'Enter "kanesha" into the username field',
      'Enter "Ja9" into the password field',
      'press login',
    ]);
    expect(
      splitInstruction('Enter the password "xyz" into both text fields and press submit.'),
    ).toBeUndefined();
  });
});
