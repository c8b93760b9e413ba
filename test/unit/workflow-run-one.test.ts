/**
 * The synchronous run's pure parts: the answer per alias with secrets scrubbed from every string, the
 * outcome signature (same shape, same signature, whatever the values), and the healed version's note.
 */
import { describe, expect, it } from 'vitest';
import { newWorkflowState } from '../../lib/workflows/executor.ts';
import { healNote, outcomeSignature, runAnswer } from '../../lib/workflows/run-one.ts';
import type { HealRecord } from '../../lib/workflows/types.ts';
import { parseWorkflow } from '../../lib/workflows/validate.ts';

const workflow = parseWorkflow({
  name: 'Sign in',
  nodes: [{ alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } }],
});
const usage = { promptTokens: 12, completionTokens: 3, cachedTokens: 0, model: 'm', ms: 5, calls: 1 };

describe('runAnswer', () => {
  it('answers per alias with status, resolvedBy, tokens and error, and scrubs secret values everywhere', () => {
    const state = newWorkflowState({
      tenant: 't',
      runId: 'r',
      sampleId: 'main',
      workflow,
      inputs: {},
      url: 'https://shop.test/login',
    });
    state.status = 'failed';
    state.failedAt = 'sign_in';
    state.reason = 'sign_in (browser_action): the page still says hunter2 is wrong';
    state.data = { echoed: 'password hunter2 accepted' };
    state.results.sign_in = {
      alias: 'sign_in',
      type: 'browser_action',
      status: 'failed',
      usage,
      resolvedBy: 'heal-llm',
      ms: 40,
      error: { kind: 'deterministic', message: 'value hunter2 not kept', resolution: 'check the field' },
    };
    const answer = runAnswer(state, 3, { password: 'hunter2' });
    expect(JSON.stringify(answer)).not.toContain('hunter2');
    expect(answer).toMatchObject({ status: 'failed', failedAt: 'sign_in', version: 3 });
    expect(answer.results.sign_in).toEqual({
      status: 'failed',
      resolvedBy: 'heal-llm',
      usage: { promptTokens: 12, completionTokens: 3, calls: 1 },
      ms: 40,
      error: expect.objectContaining({ kind: 'deterministic', message: expect.stringContaining('value') }),
    });
    // No secrets given: nothing to scrub, the answer is as the state says.
    expect(runAnswer(state, 3).data).toEqual({ echoed: 'password hunter2 accepted' });
  });
});

describe('outcomeSignature', () => {
  it('is the same for the same shape and differs when the shape does', () => {
    const a = outcomeSignature({ items: [{ name: 'A', price: 1 }], total: 1 });
    expect(outcomeSignature({ total: 9, items: [{ price: 5, name: 'B' }] })).toBe(a);
    expect(outcomeSignature({ items: [{ name: 'A' }], total: 1 })).not.toBe(a);
    expect(outcomeSignature({ items: [], total: 1 })).not.toBe(a);
  });
});

describe('healNote', () => {
  it('names only the confirmed heals, with how and why', () => {
    const heal = (alias: string, confirmed: boolean): HealRecord => ({
      alias,
      path: 'nodes.1',
      url: 'https://shop.test/p/1',
      old: [],
      new: [{ kind: 'css', value: '#x' }],
      via: 'matcher',
      reason: 'no candidate matched',
      confirmed,
    });
    expect(healNote([heal('add_to_cart', true), heal('quantity', false)])).toBe(
      'healed add_to_cart (matcher: no candidate matched)',
    );
  });
});
