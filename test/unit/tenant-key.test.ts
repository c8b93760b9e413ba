import { describe, expect, it } from 'vitest';
import { tenantFromSegment, tenantSegment } from '../../lib/store/tenant-key.ts';

const TRICKY = [
  'a/b',
  'a_b',
  'a b',
  'a\\b',
  'a~b',
  'a~2Fb',
  'a.b',
  '..',
  '.',
  '...',
  'café',
  'cafe\u0301',
  '租户',
  '😀',
  'A',
  'a',
  'CON',
  '-',
  '_',
  'a:b',
  '%2e%2e',
];

describe('tenantSegment', () => {
  it('gives every tenant its own segment (injective)', () => {
    const segments = TRICKY.map(tenantSegment);
    expect(new Set(segments).size).toBe(TRICKY.length);
  });

  it('never yields a path component that climbs, names the root or splits', () => {
    for (const t of TRICKY) {
      const s = tenantSegment(t);
      expect(s, t).toMatch(/^[A-Za-z0-9_~-]+$/);
      expect(s).not.toBe('.');
      expect(s).not.toBe('..');
    }
    expect(tenantSegment('..')).toBe('~2E~2E');
    expect(tenantSegment('a/b')).toBe('a~2Fb');
    expect(tenantSegment('a b')).toBe('a~20b');
    expect(tenantSegment('a_b')).toBe('a_b');
    expect(tenantSegment('é')).toBe('~C3~A9');
  });

  it('keeps plain names readable and round-trips every name', () => {
    expect(tenantSegment('tenant-a_1')).toBe('tenant-a_1');
    for (const t of TRICKY) expect(tenantFromSegment(tenantSegment(t))).toBe(t);
  });

  it('refuses an empty tenant and segments it cannot have produced', () => {
    expect(() => tenantSegment('')).toThrow(/empty/);
    for (const bad of ['', 'a/b', '~2e', '~', 'a~ZZ', '~C3'])
      expect(() => tenantFromSegment(bad), bad).toThrow();
  });
});
