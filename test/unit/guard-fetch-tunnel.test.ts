/**
 * The session of a target reached through another (non-flat CDP): what goes out is wrapped in
 * `Target.sendMessageToTarget`, what comes back in `Target.receivedMessageFromTarget` is routed to
 * its own session, answers to their calls and events to their listeners.
 */
import { describe, expect, it } from 'vitest';
import { type Channel, tunnel } from '../../lib/browser/guard-fetch.ts';

function fakeParent() {
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  const parent: Channel = {
    send: async (method, params = {}) => {
      sent.push({ method, params });
      if (params.sessionId === 'gone') throw new Error('No session with given id');
      return {};
    },
    on: () => undefined,
  };
  return { parent, sent };
}

const wrapped = (sent: { params: Record<string, unknown> }[], i: number) =>
  JSON.parse(sent[i]!.params.message as string) as { id: number; method: string; params: unknown };

describe('tunnel', () => {
  it('wraps each call for its session and resolves it with its own answer', async () => {
    const { parent, sent } = fakeParent();
    const routes = new Map<string, (message: string) => void>();
    const child = tunnel(parent, 'S1', routes);
    const first = child.send('Fetch.enable', { patterns: [] });
    const second = child.send('Runtime.runIfWaitingForDebugger');
    await Promise.resolve();
    expect(sent.map((s) => [s.method, s.params.sessionId])).toEqual([
      ['Target.sendMessageToTarget', 'S1'],
      ['Target.sendMessageToTarget', 'S1'],
    ]);
    const [a, b] = [wrapped(sent, 0), wrapped(sent, 1)];
    expect([a.method, b.method]).toEqual(['Fetch.enable', 'Runtime.runIfWaitingForDebugger']);
    expect(a.id).not.toBe(b.id);
    // Answered out of order: each call gets its own.
    routes.get('S1')!(JSON.stringify({ id: b.id, result: { second: true } }));
    routes.get('S1')!(JSON.stringify({ id: a.id, result: { first: true } }));
    expect(await first).toEqual({ first: true });
    expect(await second).toEqual({ second: true });
  });

  it('rejects a call the target answers with an error, or that cannot be sent', async () => {
    const { parent, sent } = fakeParent();
    const routes = new Map<string, (message: string) => void>();
    const child = tunnel(parent, 'S1', routes);
    const call = child.send('Fetch.continueRequest', { requestId: 'r1' });
    await Promise.resolve();
    routes.get('S1')!(
      JSON.stringify({ id: wrapped(sent, 0).id, error: { message: 'Invalid InterceptionId.' } }),
    );
    await expect(call).rejects.toThrow('Invalid InterceptionId.');
    await expect(tunnel(parent, 'gone', routes).send('Fetch.enable')).rejects.toThrow('No session');
  });

  it("hands events to the listeners of their own session's channel only", () => {
    const { parent } = fakeParent();
    const routes = new Map<string, (message: string) => void>();
    const one = tunnel(parent, 'S1', routes);
    const two = tunnel(parent, 'S2', routes);
    const seen: string[] = [];
    one.on('Fetch.requestPaused', (p) => seen.push(`one ${p.requestId}`));
    two.on('Fetch.requestPaused', (p) => seen.push(`two ${p.requestId}`));
    routes.get('S2')!(JSON.stringify({ method: 'Fetch.requestPaused', params: { requestId: 'r9' } }));
    routes.get('S1')!(JSON.stringify({ method: 'Fetch.requestPaused', params: { requestId: 'r1' } }));
    routes.get('S1')!(JSON.stringify({ method: 'Network.dataReceived', params: {} }));
    expect(seen).toEqual(['two r9', 'one r1']);
  });
});
