import { describe, expect, it } from 'vitest';
import { addStartScript, carries, markCarried, startScripts } from '../../lib/browser/start-scripts.ts';

describe('start scripts', () => {
  it('a context carries the scripts added before it was made, and only those', () => {
    addStartScript('test-first', 'globalThis.__first = 1');
    const early = {};
    const before = startScripts();
    markCarried(early, before.names);
    expect(before.source).toContain('globalThis.__first = 1');

    addStartScript('test-second', 'globalThis.__second = 2');
    const late = {};
    const after = startScripts();
    markCarried(late, after.names);

    expect(carries(early, 'test-first')).toBe(true);
    expect(carries(early, 'test-second')).toBe(false);
    expect(carries(late, 'test-second')).toBe(true);
    expect(after.source).toContain('globalThis.__first = 1;\nglobalThis.__second = 2');
    // A context nobody marked carries nothing.
    expect(carries({}, 'test-first')).toBe(false);
  });

  it('adding a script under a name it already has replaces it', () => {
    addStartScript('test-replaced', 'globalThis.__v = 1');
    addStartScript('test-replaced', 'globalThis.__v = 2');
    const { source } = startScripts();
    expect(source).toContain('globalThis.__v = 2');
    expect(source).not.toContain('globalThis.__v = 1');
  });
});
