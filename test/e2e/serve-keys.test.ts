import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** `browserfn serve` with a keys configuration it must refuse: one line, non-zero, no stack, no key. */
function serve(keys: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/browserfn.js', 'serve', '--port', '18799'],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: process.env.TMPDIR,
          BROWSERFN_API_KEYS: keys,
        },
        timeout: 30_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('serve refuses a bad keys configuration at start-up', () => {
  it.each([
    ['sk-live-123:', /BROWSERFN_API_KEYS entry 1: empty tenant/],
    ['sk-live-123:a,sk-live-123:b', /entry 2: same API key as BROWSERFN_API_KEYS entry 1/],
  ])('%s', async (keys, message) => {
    const r = await serve(keys);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr + r.stdout).not.toContain('sk-live-123');
    expect(r.stdout).not.toContain('listening');
  });
});
