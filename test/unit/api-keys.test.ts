import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { KeyConfigError, keysFromEnv } from '../../lib/api/auth.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-keys-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

/** The one-line error keysFromEnv stops start-up with. */
const failure = (env: NodeJS.ProcessEnv): string => {
  try {
    keysFromEnv(env);
  } catch (err) {
    expect(err).toBeInstanceOf(KeyConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe('API keys configuration', () => {
  it('reads keys, tenants and the default tenant', async () => {
    const ring = keysFromEnv({
      BROWSERFN_API_KEYS: ' k1:alpha , k2 ,k:3:beta',
      BROWSERFN_API_KEYS_FILE: await file('ok.json', '{"k4": "a/b"}'),
    });
    expect([...ring]).toEqual([
      ['k1', 'alpha'],
      ['k2', 'default'],
      ['k:3', 'beta'],
      ['k4', 'a/b'],
    ]);
  });

  it('refuses bad entries with a line that names the place and never the key', async () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ BROWSERFN_API_KEYS: 'secret1:' }, /BROWSERFN_API_KEYS entry 1: empty tenant/],
      [{ BROWSERFN_API_KEYS: 'ok:t,:tenant' }, /entry 2: empty API key/],
      [{ BROWSERFN_API_KEYS: 'secret1:a,secret1:b' }, /entry 2: same API key as BROWSERFN_API_KEYS entry 1/],
      [{ BROWSERFN_API_KEYS: 'sec ret1:a' }, /whitespace/],
      [{ BROWSERFN_API_KEYS: `secret1:${'x'.repeat(65)}` }, /longer than 64 bytes/],
      [{ BROWSERFN_API_KEYS_FILE: await file('bad.json', '{"secret1": ') }, /bad\.json: not valid JSON/],
      [{ BROWSERFN_API_KEYS_FILE: await file('arr.json', '["secret1"]') }, /expected a JSON object/],
      [{ BROWSERFN_API_KEYS_FILE: await file('empty-t.json', '{"secret1": ""}') }, /entry 1: empty tenant/],
      [{ BROWSERFN_API_KEYS_FILE: await file('num.json', '{"secret1": 7}') }, /tenant must be a string/],
      [{ BROWSERFN_API_KEYS_FILE: await file('empty-k.json', '{"": "t"}') }, /empty API key/],
      [{ BROWSERFN_API_KEYS_FILE: join(dir, 'missing.json') }, /missing\.json: cannot read \(ENOENT\)/],
      [
        {
          BROWSERFN_API_KEYS: 'secret1:a',
          BROWSERFN_API_KEYS_FILE: await file('dup.json', '{"secret1": "b"}'),
        },
        /dup\.json entry 1: same API key as BROWSERFN_API_KEYS entry 1/,
      ],
    ];
    for (const [env, expected] of cases) {
      const message = failure(env);
      expect(message, JSON.stringify(env)).toMatch(expected);
      expect(message).not.toContain('secret1');
    }
  });

  it('will not build an app whose key ring has an empty tenant', () => {
    expect(() =>
      createApp({ keys: new Map([['k', '']]), policy: { allowPrivate: false, allowHosts: [] } }),
    ).toThrow(/empty tenant/);
  });
});
