import type { Browser } from 'playwright-core';
import { act } from '../../lib/ops/act.ts';
import { OpError } from '../../lib/ops/types.ts';
import type { TaskCase } from '../fixtures/tasks.ts';
import type { FixtureServer } from './fixture-server.ts';
import { fixtureSession, opContext } from './ops-env.ts';

export type TaskOutcome = 'right' | 'wrong' | 'deferred';

export interface TaskRun {
  task: TaskCase;
  instruction: string;
  outcome: TaskOutcome;
  /** What act said, or why the page judged it wrong. */
  detail: string;
  ms: number;
}

/**
 * Runs one task page through `act` with no model, as a user would: the instruction verbatim from
 * the page. Right = act reported success and the page agrees; deferred = act refused and the page
 * saw nothing happen; anything else (a wrong click, a partial compound, success the page does not
 * confirm) is wrong.
 */
export async function runTask(browser: Browser, site: FixtureServer, task: TaskCase): Promise<TaskRun> {
  const session = await fixtureSession(browser, site, `/tasks/${task.page}.html`);
  try {
    const instruction = (await session.page.locator('#query').textContent())?.trim() ?? '';
    const started = performance.now();
    let success = false;
    let refused = false;
    let detail = '';
    try {
      const result = await act(opContext(session), instruction);
      success = result.success;
      detail = result.success ? result.actionDescription : result.message;
    } catch (err) {
      if (!(err instanceof OpError) || err.kind !== 'no_model') throw err;
      refused = true;
      detail = err.message;
    }
    const ms = Math.round(performance.now() - started);
    await session.page.waitForTimeout(20);
    const page = (await session.page.evaluate('[window.__result, window.__why]')) as [
      string | undefined,
      string,
    ];
    const [verdict, why] = page;
    let outcome: TaskOutcome;
    if (refused && verdict === undefined) outcome = 'deferred';
    else if (success && verdict === 'right') outcome = 'right';
    else {
      outcome = 'wrong';
      detail = `${detail} | page: ${verdict ?? 'nothing happened'}${why ? ` (${why})` : ''}`;
    }
    return { task, instruction, outcome, detail, ms };
  } finally {
    await session.close();
  }
}
