/**
 * Pointer and keyboard input over CDP (`Input.dispatch*`), in top-level viewport CSS pixels: the
 * browser routes each event to whatever frame is under the point, out-of-process iframes included.
 */
import type { CdpSession } from './cdp-session.ts';
import type { DriverKeyboard, DriverMouse, MouseButton } from './page-driver.ts';

interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
  location?: number;
}

const named: Record<string, [code: string, keyCode: number, text?: string]> = {
  Enter: ['Enter', 13, '\r'],
  Tab: ['Tab', 9],
  Escape: ['Escape', 27],
  Backspace: ['Backspace', 8],
  Delete: ['Delete', 46],
  ArrowUp: ['ArrowUp', 38],
  ArrowDown: ['ArrowDown', 40],
  ArrowLeft: ['ArrowLeft', 37],
  ArrowRight: ['ArrowRight', 39],
  Home: ['Home', 36],
  End: ['End', 35],
  PageUp: ['PageUp', 33],
  PageDown: ['PageDown', 34],
  Insert: ['Insert', 45],
  Space: ['Space', 32, ' '],
  Shift: ['ShiftLeft', 16],
  Control: ['ControlLeft', 17],
  Alt: ['AltLeft', 18],
  Meta: ['MetaLeft', 91],
};
for (let i = 1; i <= 12; i++) named[`F${i}`] = [`F${i}`, 111 + i];

const MODIFIER_BITS: Record<string, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };

/** The key's definition as a US keyboard sends it; unknown names are an error, as in Playwright. */
export function keyDef(name: string): KeyDef {
  const alias = name === ' ' ? 'Space' : name === 'Esc' ? 'Escape' : name === 'Return' ? 'Enter' : name;
  const known = named[alias];
  if (known) {
    const [code, keyCode, text] = known;
    return {
      key: alias === 'Space' ? ' ' : alias,
      code,
      keyCode,
      ...(text ? { text } : {}),
      ...(alias in MODIFIER_BITS ? { location: 1 } : {}),
    };
  }
  if ([...name].length !== 1) throw new Error(`Unknown key: "${name}"`);
  const upper = name.toUpperCase();
  if (/[a-z]/i.test(name))
    return { key: name, code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: name };
  if (/[0-9]/.test(name)) return { key: name, code: `Digit${name}`, keyCode: name.charCodeAt(0), text: name };
  return { key: name, code: '', keyCode: 0, text: name };
}

export class CdpKeyboard implements DriverKeyboard {
  #modifiers = 0;
  constructor(private readonly session: CdpSession) {}

  get modifiers(): number {
    return this.#modifiers;
  }

  async down(name: string): Promise<void> {
    const def = keyDef(name);
    const bit = MODIFIER_BITS[def.key] ?? 0;
    this.#modifiers |= bit;
    // A held Control / Alt / Meta makes a shortcut: no text goes in with it.
    const text = def.text !== undefined && !(this.#modifiers & ~8) ? def.text : undefined;
    await this.session.send('Input.dispatchKeyEvent', {
      type: text ? 'keyDown' : 'rawKeyDown',
      modifiers: this.#modifiers,
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      ...(text ? { text, unmodifiedText: text } : {}),
      ...(def.location ? { location: def.location } : {}),
    });
  }

  async up(name: string): Promise<void> {
    const def = keyDef(name);
    this.#modifiers &= ~(MODIFIER_BITS[def.key] ?? 0);
    await this.session.send('Input.dispatchKeyEvent', {
      type: 'keyUp',
      modifiers: this.#modifiers,
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      ...(def.location ? { location: def.location } : {}),
    });
  }

  async press(chord: string): Promise<void> {
    // "Control+A", "Shift++": the last part is the key, the others are held around it.
    const parts = chord === '+' ? ['+'] : chord.split(/\+(?!$)/);
    const key = parts.pop()!;
    for (const m of parts) await this.down(m);
    await this.down(key);
    await this.up(key);
    for (const m of parts.reverse()) await this.up(m);
  }

  async type(text: string): Promise<void> {
    for (const ch of text) {
      if (ch === '\n' || ch === '\r') await this.press('Enter');
      else if (/^[\x20-\x7e]$/.test(ch)) await this.press(ch === ' ' ? 'Space' : ch);
      // What a US keyboard has no key for goes in the way an input method would.
      else await this.insertText(ch);
    }
  }

  async insertText(text: string): Promise<void> {
    await this.session.send('Input.insertText', { text });
  }
}

const BUTTON_BITS: Record<MouseButton, number> = { left: 1, right: 2, middle: 4 };

export class CdpMouse implements DriverMouse {
  #x = 0;
  #y = 0;
  #buttons = 0;
  #button: MouseButton | 'none' = 'none';
  constructor(
    private readonly session: CdpSession,
    private readonly keyboard: CdpKeyboard,
  ) {}

  #send(type: string, extra: Record<string, unknown> = {}): Promise<unknown> {
    return this.session.send('Input.dispatchMouseEvent', {
      type,
      x: this.#x,
      y: this.#y,
      modifiers: this.keyboard.modifiers,
      buttons: this.#buttons,
      button: this.#button,
      ...extra,
    });
  }

  async move(x: number, y: number, options: { steps?: number } = {}): Promise<void> {
    const steps = Math.max(1, options.steps ?? 1);
    const fromX = this.#x;
    const fromY = this.#y;
    for (let i = 1; i <= steps; i++) {
      this.#x = fromX + ((x - fromX) * i) / steps;
      this.#y = fromY + ((y - fromY) * i) / steps;
      await this.#send('mouseMoved');
    }
  }

  async down(options: { button?: MouseButton; clickCount?: number } = {}): Promise<void> {
    const button = options.button ?? 'left';
    this.#button = button;
    this.#buttons |= BUTTON_BITS[button];
    await this.#send('mousePressed', { button, clickCount: options.clickCount ?? 1 });
  }

  async up(options: { button?: MouseButton; clickCount?: number } = {}): Promise<void> {
    const button = options.button ?? 'left';
    this.#buttons &= ~BUTTON_BITS[button];
    this.#button = 'none';
    await this.#send('mouseReleased', { button, clickCount: options.clickCount ?? 1 });
  }

  async click(
    x: number,
    y: number,
    options: { button?: MouseButton; clickCount?: number } = {},
  ): Promise<void> {
    await this.move(x, y);
    const count = options.clickCount ?? 1;
    for (let i = 1; i <= count; i++) {
      await this.down({ ...options, clickCount: i });
      await this.up({ ...options, clickCount: i });
    }
  }

  async wheel(dx: number, dy: number): Promise<void> {
    await this.#send('mouseWheel', { deltaX: dx, deltaY: dy });
  }
}
