/**
 * A call that outlives the server's request deadline (here 4 s, so a page load on a busy machine stays inside it) fails for
 * the SDK, and nothing is done on the session's page after that answer: a model reply that comes
 * later is not acted on.
 */
import type { Stagehand } from '@browserbasehq/stagehand';
import { describe, expect, it } from 'vitest';
import { idInPrompt } from '../support/ops-env.ts';
import { type StagehandEnv, stagehandSuite } from '../support/stagehand-env.ts';

let env: StagehandEnv;
let sh: Stagehand;

stagehandSuite({ requestTimeoutMs: 4000 }, (e, s) => {
  env = e;
  sh = s;
});

describe('a Stagehand call past the server deadline', () => {
  it('agent().execute() fails, and its late decision is never carried out on the page', async () => {
    const page = sh.context.pages()[0]!;
    await page.goto(`${env.site.url}/login.html`);
    const ticked = () =>
      page.evaluate(() => (document.querySelector('input[type=checkbox]') as HTMLInputElement).checked);
    expect(await ticked()).toBe(false);
    let decisions = 0;
    env.llm.setHandler((r) => {
      if (r.schemaName !== 'next_actions') return { status: 400 };
      decisions++;
      // The agent's first decision arrives after the deadline.
      return {
        delayMs: 6000,
        reply: {
          json: {
            evaluation_previous_step: 'start',
            next_goal: 'tick remember me',
            actions: [{ tool: 'click', id: idInPrompt(r.text, 'checkbox', 'Remember me') }],
          },
        },
      };
    });
    const err = await sh
      .agent()
      .execute({ instruction: 'tick the box that keeps me signed in', maxSteps: 3 })
      .catch((e: Error) => e);
    expect(String(err)).toMatch(/longer than 4000 ms/);
    await new Promise((r) => setTimeout(r, 6500));
    // At most the one decision asked before the deadline (none if the page read took longer).
    expect(decisions).toBeLessThanOrEqual(1);
    expect(await ticked()).toBe(false);
  });
});
