/**
 * bench:workflows' catalogue task and its scripted model: what a product page holds (the truth every
 * mode is held to), the quantity each page orders, and the model's answers to the agent's decisions,
 * extract calls and a heal's observe call, read from what each prompt shows (as a capable model
 * would), so nothing is keyed to the page number the bench happens to be on.
 */

import { currentUrl, isDecision, reply } from '../../support/agent-env.ts';
import { product } from '../../support/catalogue-site.ts';
import type { RecordedRequest, ScriptedReply } from '../../support/llm-server.ts';
import { idInPrompt } from '../../support/ops-env.ts';

export const DETAIL_INSTRUCTION = "the product's name, price, SKU and whether it is in stock";
export const DETAIL_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    sku: { type: 'string' },
    inStock: { type: 'boolean' },
  },
  required: ['name', 'price', 'sku', 'inStock'],
};

/** The product's data as a careful reader of its page gives it. */
export const truth = (id: number) => {
  const p = product(id);
  return { name: p.name, price: p.cents / 100, sku: p.sku, inStock: p.inStock };
};
/** Quantity typed on page `id`: never 1, so a look-alike's one-click add cannot pass for it. */
export const qtyFor = (id: number) => 2 + (id % 4);
export const cartLine = (id: number, qty: number) => `Added ${qty} × ${product(id).name} to your cart.`;

/**
 * The model. Agent: on a product page type the task's quantity, tick gift wrap, add to cart; on the
 * cart page report the cart line. Extract: the product (by the SKU on the page) or the cart line.
 * Observe (a heal): the element the kept instruction names; among look-alikes a careless model
 * takes the first it reads (on the trap template, the deal of the day's button).
 */
export function answer(r: RecordedRequest): ScriptedReply {
  if (isDecision(r)) {
    const url = currentUrl(r);
    if (url.includes('/product/')) {
      const qty = /Add (\d+) gift-wrapped/.exec(`${r.system}\n${r.text}`)?.[1];
      if (!qty) return { status: 400, body: { error: { message: 'no quantity in the task' } } };
      return reply([
        { tool: 'type', id: idInPrompt(r.text, 'spinbutton', 'Quantity'), text: qty },
        { tool: 'click', id: idInPrompt(r.text, 'checkbox', 'Gift wrap') },
        { tool: 'click', id: idInPrompt(r.text, 'button', 'Add to cart') },
      ]);
    }
    const line = /Added \d+ × [^.]+ to your cart\./.exec(r.text)?.[0] ?? '';
    return reply([{ tool: 'done', data: { cartLine: line } }]);
  }
  if (r.schemaName === 'extracted') {
    const line = /Added \d+ × [^.]+ to your cart\./.exec(r.text)?.[0];
    if (line) return { json: { data: { cartLine: line }, done: true } };
    const sku = /CAT-(\d{5})/.exec(r.text);
    if (!sku) return { status: 400, body: { error: { message: 'no product on this page' } } };
    return { json: { data: truth(Number(sku[1])), done: true } };
  }
  if (r.schemaName === 'list_elements') {
    // The heal asks by the step's kept words (`the "Quantity" field`); the model points by meaning.
    const instruction = /^Instruction: (.*)$/m.exec(r.text)?.[1] ?? '';
    const want: [string, RegExp] = /quantity/i.test(instruction)
      ? ['spinbutton', /^(Quantity|How many\?)/]
      : /gift/i.test(instruction)
        ? ['checkbox', /^Gift wrap/]
        : ['button', /^Add to cart/];
    const fits = [...r.text.matchAll(/\[(\d+)\] ([\w-]+): ([^\n]*)/g)].filter(
      (x) => x[2] === want[0] && want[1].test(x[3] ?? ''),
    );
    // Among look-alikes a careless model takes the first it reads: the trap's deal of the day.
    const found = fits[0];
    if (!found) return { json: { elements: [] } };
    return {
      json: {
        elements: [{ elementId: Number(found[1]), description: found[3], method: 'click', arguments: [] }],
      },
    };
  }
  return { status: 400, body: { error: { message: `unexpected request ${r.schemaName}` } } };
}
