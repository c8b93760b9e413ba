/**
 * The 10-step fixture task the agent benchmarks run (sign in, page through invoices, save progress,
 * screenshot, navigate, done), as the scripted model's answer for each step.
 */

import { currentUrl, reply } from './agent-env.ts';
import type { RecordedRequest, ScriptedReply } from './llm-server.ts';
import { idInPrompt } from './ops-env.ts';

export const INVOICE_GOAL = 'Sign in as alice, collect every invoice number, take a screenshot of page 2';
export const INVOICE_START = '/agent/login.html';
/** The fixture portal's password for alice, given to the agent as the `%password%` secret. */
export const INVOICE_PASSWORD = 'correct-horse-battery-staple';

export function invoiceStep(r: RecordedRequest, step: number): ScriptedReply {
  const url = currentUrl(r);
  const id = (role: string, name: string) => idInPrompt(r.text, role, name);
  switch (step) {
    case 1:
      return reply([
        { tool: 'type', id: id('textbox', 'Username'), text: 'alice' },
        { tool: 'type', id: id('textbox', 'Password'), text: '%password%' },
        { tool: 'click', id: id('button', 'Sign in') },
      ]);
    case 2:
      return reply([{ tool: 'click', id: id('link', 'Invoices') }]);
    case 3:
    case 5:
      return reply([
        {
          tool: 'save_progress',
          data: { invoices: [...r.text.matchAll(/INV-\d+/g)].map((m) => m[0]) },
          note: url,
        },
      ]);
    case 4:
      return reply([{ tool: 'click', id: id('link', 'Next') }]);
    case 6:
      return reply([{ tool: 'screenshot', label: 'invoices_p2' }]);
    case 7:
      return reply([{ tool: 'click', id: id('link', 'Previous') }]);
    case 8:
      return reply([{ tool: 'click', id: id('link', 'Home') }]);
    case 9:
      return reply([{ tool: 'scroll', direction: 'down' }]);
    default:
      return reply([{ tool: 'done', data: {} }]);
  }
}
