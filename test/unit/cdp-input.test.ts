import { describe, expect, it } from 'vitest';
import { CdpKeyboard, CdpMouse, keyDef } from '../../lib/browser/cdp-input.ts';
import type { CdpSession } from '../../lib/browser/cdp-session.ts';

/** Records what the keyboard and mouse would send to the browser. */
function recorder() {
  const sent: Record<string, unknown>[] = [];
  const session = {
    send: async (method: string, params: Record<string, unknown>) => {
      sent.push({ method, ...params });
      return {};
    },
  } as unknown as CdpSession;
  return { sent, session };
}

describe('raw-CDP key input', () => {
  it('knows keys as a US keyboard sends them, and refuses a name it does not know', () => {
    expect(keyDef('Enter')).toMatchObject({ key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' });
    expect(keyDef('a')).toMatchObject({ key: 'a', code: 'KeyA', keyCode: 65, text: 'a' });
    expect(keyDef('7')).toMatchObject({ code: 'Digit7', keyCode: 55 });
    expect(keyDef(' ')).toMatchObject({ key: ' ', code: 'Space', text: ' ' });
    expect(() => keyDef('Entr')).toThrow('Unknown key: "Entr"');
  });

  it('holds modifiers around a chord, and a shortcut types no text', async () => {
    const { sent, session } = recorder();
    await new CdpKeyboard(session).press('Control+a');
    expect(sent.map((e) => [e.type, e.key, e.modifiers, e.text])).toEqual([
      ['rawKeyDown', 'Control', 2, undefined],
      ['rawKeyDown', 'a', 2, undefined],
      ['keyUp', 'a', 2, undefined],
      ['keyUp', 'Control', 0, undefined],
    ]);
  });

  it('types text key by key, a new line as Enter, and what has no key as inserted text', async () => {
    const { sent, session } = recorder();
    await new CdpKeyboard(session).type('Hi\né');
    const downs = sent.filter((e) => e.type === 'keyDown' || e.method === 'Input.insertText');
    expect(downs.map((e) => e.text)).toEqual(['H', 'i', '\r', 'é']);
    expect(sent.at(-1)).toMatchObject({ method: 'Input.insertText', text: 'é' });
  });

  it('clicks twice as a double click does: each press carries its click count', async () => {
    const { sent, session } = recorder();
    await new CdpMouse(session, new CdpKeyboard(session)).click(10, 20, { clickCount: 2 });
    expect(sent.map((e) => [e.type, e.x, e.y, e.clickCount ?? null])).toEqual([
      ['mouseMoved', 10, 20, null],
      ['mousePressed', 10, 20, 1],
      ['mouseReleased', 10, 20, 1],
      ['mousePressed', 10, 20, 2],
      ['mouseReleased', 10, 20, 2],
    ]);
  });
});
