import { describe, expect, it } from 'vitest';
import { TenantGate } from '../../lib/api/tenant-gate.ts';

describe('TenantGate', () => {
  it('lets each tenant in up to its share, and counts a release once however often it is called', () => {
    const gate = new TenantGate(2);
    const a1 = gate.enter('a');
    const a2 = gate.enter('a');
    expect(a1).toBeTypeOf('function');
    expect(a2).toBeTypeOf('function');
    expect(gate.enter('a')).toBeUndefined();
    expect(gate.enter('b')).toBeTypeOf('function');
    a1!();
    a1!();
    expect(gate.active('a')).toBe(1);
    const a3 = gate.enter('a');
    expect(a3).toBeTypeOf('function');
    expect(gate.enter('a')).toBeUndefined();
    a2!();
    a3!();
    expect(gate.active('a')).toBe(0);
  });
});
