/**
 * Instruction → expected target on the fixture pages. Shared by the matcher test and the matcher
 * benchmark. `nth` counts elements with that role and name in reading order (1-based).
 */
export interface ResolveCase {
  page: string;
  instruction: string;
  expect:
    | { role: string; name: string; nth?: number; method: string; args?: string[] }
    | { method: string; args: string[] };
}

export interface DeferCase {
  page: string;
  instruction: string;
  why: string;
}

const el = (role: string, name: string, method = 'click', args?: string[], nth?: number) => ({
  role,
  name,
  method,
  ...(args ? { args } : {}),
  ...(nth ? { nth } : {}),
});

export const RESOLVE_CASES: ResolveCase[] = [
  // login
  { page: '/login.html', instruction: 'click the Sign in button', expect: el('button', 'Sign in') },
  { page: '/login.html', instruction: 'Click "Sign in"', expect: el('button', 'Sign in') },
  { page: '/login.html', instruction: 'press the sign in button.', expect: el('button', 'Sign in') },
  { page: '/login.html', instruction: 'tap Sign In', expect: el('button', 'Sign in') },
  {
    page: '/login.html',
    instruction: 'please click on the “Sign in” button',
    expect: el('button', 'Sign in'),
  },
  {
    page: '/login.html',
    instruction: 'type "ada@example.com" into the email field',
    expect: el('textbox', 'Email', 'fill', ['ada@example.com']),
  },
  {
    page: '/login.html',
    instruction: "enter 'ada@example.com' in Email",
    expect: el('textbox', 'Email', 'fill', ['ada@example.com']),
  },
  {
    page: '/login.html',
    instruction: 'fill the email box with “ada@example.com”',
    expect: el('textbox', 'Email', 'fill', ['ada@example.com']),
  },
  {
    page: '/login.html',
    instruction: 'type %email% into email',
    expect: el('textbox', 'Email', 'fill', ['%email%']),
  },
  {
    page: '/login.html',
    instruction: 'Type %password% into the password field',
    expect: el('textbox', 'Password', 'fill', ['%password%']),
  },
  {
    page: '/login.html',
    instruction: 'set the password to "hunter2"',
    expect: el('textbox', 'Password', 'fill', ['hunter2']),
  },
  { page: '/login.html', instruction: 'check Remember me', expect: el('checkbox', 'Remember me', 'check') },
  {
    page: '/login.html',
    instruction: 'tick the remember me checkbox',
    expect: el('checkbox', 'Remember me', 'check'),
  },
  { page: '/login.html', instruction: 'toggle remember me', expect: el('checkbox', 'Remember me', 'check') },
  {
    page: '/login.html',
    instruction: 'click the Forgot password? link',
    expect: el('link', 'Forgot password?'),
  },
  {
    page: '/login.html',
    instruction: 'open the create an account link',
    expect: el('link', 'Create an account'),
  },
  {
    page: '/login.html',
    instruction: 'type "you@x.io" into the field that says you@example.com',
    expect: { method: 'defer-ok', args: [] },
  },
  // signup
  {
    page: '/signup.html',
    instruction: 'type "Ada Lovelace" into Full name',
    expect: el('textbox', 'Full name', 'fill', ['Ada Lovelace']),
  },
  {
    page: '/signup.html',
    instruction: 'enter "ada@work.io" into the work email field',
    expect: el('textbox', 'Work email', 'fill', ['ada@work.io']),
  },
  {
    page: '/signup.html',
    instruction: 'type "Acme" into company name',
    expect: el('textbox', 'Company name', 'fill', ['Acme']),
  },
  {
    page: '/signup.html',
    instruction: 'type "Acme" into the Company name box',
    expect: el('textbox', 'Company name', 'fill', ['Acme']),
  },
  {
    page: '/signup.html',
    instruction: 'fill in the phone number with "555-0100"',
    expect: el('textbox', 'Phone number', 'fill', ['555-0100']),
  },
  {
    page: '/signup.html',
    instruction: 'put "Oslo" in the city field',
    expect: el('textbox', 'City', 'fill', ['Oslo']),
  },
  {
    page: '/signup.html',
    instruction: 'select "Norway" from the Country dropdown',
    expect: el('combobox', 'Country', 'select', ['Norway']),
  },
  {
    page: '/signup.html',
    instruction: 'choose Sweden from country',
    expect: el('combobox', 'Country', 'select', ['Sweden']),
  },
  {
    page: '/signup.html',
    instruction: 'pick japan in the country select',
    expect: el('combobox', 'Country', 'select', ['Japan']),
  },
  { page: '/signup.html', instruction: 'check the Pro radio button', expect: el('radio', 'Pro', 'check') },
  { page: '/signup.html', instruction: 'click Pro', expect: el('radio', 'Pro') },
  {
    page: '/signup.html',
    instruction: 'check "I accept the terms"',
    expect: el('checkbox', 'I accept the terms', 'check'),
  },
  {
    page: '/signup.html',
    instruction: 'tick accept the terms',
    expect: el('checkbox', 'I accept the terms', 'check'),
  },
  {
    page: '/signup.html',
    instruction: 'click the Create account button',
    expect: el('button', 'Create account'),
  },
  { page: '/signup.html', instruction: 'CLICK CREATE ACCOUNT', expect: el('button', 'Create account') },
  // dropdown
  {
    page: '/dropdown.html',
    instruction: 'select "Large" from the size dropdown',
    expect: el('combobox', 'Size', 'select', ['Large']),
  },
  {
    page: '/dropdown.html',
    instruction: 'set the size dropdown to small',
    expect: el('combobox', 'Size', 'select', ['Small']),
  },
  { page: '/dropdown.html', instruction: 'click "Choose a colour"', expect: el('button', 'Choose a colour') },
  // iframes and shadow DOM
  {
    page: '/iframes.html',
    instruction: 'type "shoes" into the search box',
    expect: el('textbox', 'Search', 'fill', ['shoes']),
  },
  { page: '/iframes.html', instruction: 'click Go', expect: el('button', 'Go') },
  { page: '/iframes.html', instruction: 'click the deep button', expect: el('button', 'Deep button') },
  { page: '/iframes.html', instruction: 'click "Srcdoc button"', expect: el('button', 'Srcdoc button') },
  {
    page: '/iframes.html',
    instruction: 'write "hello" in the cross-origin note',
    expect: el('textbox', 'Cross-origin note', 'fill', ['hello']),
  },
  { page: '/iframes.html', instruction: 'press Cross save', expect: el('button', 'Cross save') },
  { page: '/iframes.html', instruction: 'click the top button', expect: el('button', 'Top button') },
  {
    page: '/shadow.html',
    instruction: 'type "a@b.co" into shadow email',
    expect: el('textbox', 'Shadow email', 'fill', ['a@b.co']),
  },
  { page: '/shadow.html', instruction: 'click Shadow submit', expect: el('button', 'Shadow submit') },
  {
    page: '/shadow.html',
    instruction: 'click the nested shadow button',
    expect: el('button', 'Nested shadow button'),
  },
  {
    page: '/shadow.html',
    instruction: 'click the closed shadow button',
    expect: el('button', 'Closed shadow button'),
  },
  {
    page: '/shadow.html',
    instruction: 'check closed opt-in',
    expect: el('checkbox', 'Closed opt-in', 'check'),
  },
  { page: '/shadow.html', instruction: 'click Slotted action', expect: el('button', 'Slotted action') },
  // modal, products, ordinals
  { page: '/modal.html', instruction: 'click Accept all', expect: el('button', 'Accept all') },
  { page: '/modal.html', instruction: 'click the close button', expect: el('button', 'Close') },
  { page: '/modal.html', instruction: 'reject all cookies', expect: { method: 'defer-ok', args: [] } },
  {
    page: '/products.html',
    instruction: 'click the second Add to cart button',
    expect: el('button', 'Add to cart', 'click', undefined, 2),
  },
  {
    page: '/products.html',
    instruction: 'click the first "Add to cart"',
    expect: el('button', 'Add to cart', 'click', undefined, 1),
  },
  {
    page: '/products.html',
    instruction: 'click the last add to cart button',
    expect: el('button', 'Add to cart', 'click', undefined, 12),
  },
  {
    page: '/products.html',
    instruction: 'click the 3rd add to cart button',
    expect: el('button', 'Add to cart', 'click', undefined, 3),
  },
  {
    page: '/products.html',
    instruction: 'open the Trail Runner Shoes link',
    expect: el('link', 'Trail Runner Shoes'),
  },
  { page: '/products.html', instruction: 'click First Aid Kit', expect: el('link', 'First Aid Kit') },
  {
    page: '/products.html',
    instruction: 'type "lantern" into search products',
    expect: el('searchbox', 'Search products', 'fill', ['lantern']),
  },
  {
    page: '/products.html',
    instruction: 'select "Price: low to high" from Sort by',
    expect: el('combobox', 'Sort by', 'select', ['Price: low to high']),
  },
  // misc widgets
  {
    page: '/forms-misc.html',
    instruction: 'double-click "Double-click me"',
    expect: el('button', 'Double-click me', 'dblclick'),
  },
  {
    page: '/forms-misc.html',
    instruction: 'hover over Products',
    expect: el('menuitem', 'Products', 'hover'),
  },
  {
    page: '/forms-misc.html',
    instruction: 'type "hi there" into the message field',
    expect: el('textbox', 'Message', 'fill', ['hi there']),
  },
  {
    page: '/forms-misc.html',
    instruction: 'fill quantity with "3"',
    expect: el('spinbutton', 'Quantity', 'fill', ['3']),
  },
  { page: '/forms-misc.html', instruction: 'click More options', expect: el('button', 'More options') },
  { page: '/forms-misc.html', instruction: 'press Enter', expect: { method: 'press', args: ['Enter'] } },
  { page: '/forms-misc.html', instruction: 'press ctrl+a', expect: { method: 'press', args: ['Control+A'] } },
  {
    page: '/forms-misc.html',
    instruction: 'hit the Escape key',
    expect: { method: 'press', args: ['Escape'] },
  },
  {
    page: '/forms-misc.html',
    instruction: 'press Tab in the shortcut field',
    expect: el('textbox', 'Shortcut', 'press', ['Tab']),
  },
  // scrolling and navigation
  { page: '/scroll.html', instruction: 'scroll down', expect: { method: 'scroll', args: ['down'] } },
  {
    page: '/scroll.html',
    instruction: 'scroll to the bottom',
    expect: { method: 'scroll', args: ['bottom'] },
  },
  {
    page: '/scroll.html',
    instruction: 'scroll to top of the page',
    expect: { method: 'scroll', args: ['top'] },
  },
  {
    page: '/scroll.html',
    instruction: 'scroll halfway down the page',
    expect: { method: 'scroll', args: ['50%'] },
  },
  { page: '/scroll.html', instruction: 'scroll to 75%', expect: { method: 'scroll', args: ['75%'] } },
  {
    page: '/scroll.html',
    instruction: 'scroll to the Back to top button',
    expect: el('button', 'Back to top', 'scroll'),
  },
  { page: '/scroll.html', instruction: 'go back', expect: { method: 'back', args: [] } },
  { page: '/scroll.html', instruction: 'Go forward.', expect: { method: 'forward', args: [] } },
  { page: '/scroll.html', instruction: 'reload the page', expect: { method: 'reload', args: [] } },
  { page: '/pagination.html', instruction: 'click Next', expect: el('link', 'Next') },
  { page: '/pagination.html', instruction: 'click the "2" link', expect: el('link', '2') },
  { page: '/dashboard.html', instruction: 'click the refresh button', expect: el('button', 'Refresh') },
  { page: '/dashboard.html', instruction: 'click settings', expect: el('button', 'Settings') },
  { page: '/rerender.html', instruction: 'click Save draft', expect: el('button', 'Save draft') },
  { page: '/rerender.html', instruction: 'click publish', expect: el('button', 'Publish') },
  // A role word alone names the one element of that kind (issue 8: generic role words).
  { page: '/signup.html', instruction: 'click the button', expect: el('button', 'Create account') },
  { page: '/login.html', instruction: 'click the 2nd link', expect: el('link', 'Shop') },
  { page: '/modal.html', instruction: 'close the dialog', expect: el('button', 'Close') },
  { page: '/modal.html', instruction: 'click the x', expect: el('button', 'Close') },
  { page: '/forms-misc.html', instruction: 'focus on the notes field', expect: el('textbox', 'Notes') },
].filter((c) => c.expect.method !== 'defer-ok');

export const DEFER_CASES: DeferCase[] = [
  { page: '/products.html', instruction: 'click Add to cart', why: 'twelve identical buttons, no ordinal' },
  { page: '/products.html', instruction: 'click the add to cart button', why: 'ambiguous duplicates' },
  { page: '/products.html', instruction: 'click the 13th add to cart button', why: 'ordinal past the end' },
  { page: '/products.html', instruction: 'buy the cheapest item', why: 'needs reasoning' },
  { page: '/products.html', instruction: 'click the trail link', why: 'two links share "Trail"' },
  { page: '/login.html', instruction: 'log in', why: 'only "Sign in" exists; no invented synonyms' },
  { page: '/login.html', instruction: 'click the login button', why: 'no such button' },
  { page: '/login.html', instruction: 'click the thing', why: 'vague' },
  { page: '/login.html', instruction: 'do the usual', why: 'not an instruction form' },
  {
    page: '/login.html',
    instruction: 'check the Sign in button',
    why: 'role mismatch: a button cannot be checked',
  },
  { page: '/login.html', instruction: 'type ada@example.com into email', why: 'unquoted text to type' },
  { page: '/login.html', instruction: 'select "Large" from the email field', why: 'email is not a dropdown' },
  { page: '/login.html', instruction: 'click the submit button', why: 'no button named submit' },
  { page: '/dropdown.html', instruction: 'select "Purple" from the size dropdown', why: 'no such option' },
  {
    page: '/dropdown.html',
    instruction: 'select "Green" from the colour picker',
    why: 'custom dropdown: two steps, model job',
  },
  { page: '/signup.html', instruction: 'type "x" into the field', why: 'many fields' },
  { page: '/login.html', instruction: 'click the link', why: 'several links, no words to tell them apart' },
  { page: '/login.html', instruction: 'close the dialog', why: 'no dialog is open' },
  { page: '/login.html', instruction: 'focus the sign in button', why: 'focus would press a button' },
  {
    page: '/signup.html',
    instruction: 'enter "123" into referral code',
    why: 'label-less field: only nearby text',
  },
  { page: '/dashboard.html', instruction: 'click the red icon', why: 'visual only' },
  { page: '/dashboard.html', instruction: 'click the square button', why: 'unlabelled icons' },
  { page: '/pagination.html', instruction: 'click page 3 of the results', why: 'reasoning about pages' },
  { page: '/forms-misc.html', instruction: 'click Disabled action', why: 'disabled element' },
  { page: '/iframes.html', instruction: 'click the button', why: 'many buttons' },
  { page: '/shadow.html', instruction: 'click shadow', why: 'three shadow buttons' },
];
