/** Key names as people write them (`ctrl+a`, `esc`, `page down`) turned into Playwright key names. */
const KEY_NAMES: Record<string, string> = {
  enter: 'Enter',
  return: 'Enter',
  tab: 'Tab',
  escape: 'Escape',
  esc: 'Escape',
  space: 'Space',
  spacebar: 'Space',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  insert: 'Insert',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pgup: 'PageUp',
  pagedown: 'PageDown',
  pgdn: 'PageDown',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
  uparrow: 'ArrowUp',
  downarrow: 'ArrowDown',
  leftarrow: 'ArrowLeft',
  rightarrow: 'ArrowRight',
};

const MODIFIERS: Record<string, string> = {
  ctrl: 'Control',
  control: 'Control',
  ctl: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  meta: 'Meta',
  win: 'Meta',
  super: 'Meta',
  alt: 'Alt',
  option: 'Alt',
  opt: 'Alt',
  shift: 'Shift',
  controlormeta: 'ControlOrMeta',
};

const KEY_SUFFIX = /\s+keys?$/;
const PLUS_SPLIT = /\s*\+\s*/;
const DASH_OR_SPACE_SPLIT = /[\s-]+/;
const ALL_SPACE = /\s+/g;
const FUNCTION_KEY = /^f([1-9]|1\d|2[0-4])$/;
const SINGLE_CHAR = /^[a-z0-9`\-=[\]\\;',./]$/;

/**
 * `ctrl+shift+k` → `Control+Shift+K`, `enter` → `Enter`, `down arrow` → `ArrowDown`; undefined when
 * the text is not a key. A lone character is a key only when `allowChar` says the sentence called
 * it one ("press the a key"): "press a" is more likely half of something else.
 */
export function normalizeKey(text: string, allowChar = false): string | undefined {
  const s = text.toLowerCase().trim().replace(KEY_SUFFIX, '');
  if (!s) return undefined;
  let parts = s.split(PLUS_SPLIT);
  if (parts.length === 1) {
    // "ctrl-c", "ctrl shift k": separators other than + only count after a modifier.
    const loose = s.split(DASH_OR_SPACE_SPLIT);
    if (loose.length > 1 && MODIFIERS[loose[0]!]) parts = loose;
  }
  const out: string[] = [];
  for (const [i, raw] of parts.entries()) {
    const p = raw.replace(ALL_SPACE, '');
    if (!p) return undefined;
    if (i < parts.length - 1) {
      const mod = MODIFIERS[p];
      if (!mod || out.includes(mod)) return undefined;
      out.push(mod);
      continue;
    }
    const named = KEY_NAMES[p] ?? (FUNCTION_KEY.test(p) ? p.toUpperCase() : undefined);
    if (named) out.push(named);
    else if (MODIFIERS[p] && parts.length === 1) out.push(MODIFIERS[p]!);
    // With a modifier, letters are shortcuts: Playwright matches `Control+A` by key code.
    else if (SINGLE_CHAR.test(p) && (parts.length > 1 || allowChar))
      out.push(parts.length > 1 ? p.toUpperCase() : p);
    else return undefined;
  }
  return out.join('+');
}
