import { describe, expect, it } from 'vitest';
import {
  CdpConnectError,
  type CdpPolicy,
  CdpRefusedError,
  cdpPolicyFromEnv,
  checkCdpUrl,
} from '../../lib/browser/cdp-guard.ts';

/** Name → addresses, no network: these checks only decide, they never connect. */
const dns: Record<string, string[]> = {
  'cdp.example.test': ['93.184.216.34'],
  'rebind.example.test': ['93.184.216.34', '10.1.2.3'],
  'meta.example.test': ['169.254.169.254'],
  'inside.example.test': ['10.0.0.7'],
};
const resolve = async (h: string) => {
  const ips = dns[h];
  if (!ips) throw new Error('ENOTFOUND');
  return ips;
};

const refusal = async (url: string, policy: CdpPolicy) => {
  const err = await checkCdpUrl(url, policy, resolve).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof CdpRefusedError)) throw new Error(`${url} was admitted`);
  return err;
};

describe('cdpUrl guard', () => {
  it('allows nothing by default, not even the server own browser (BROWSERFN_CDP_URL)', async () => {
    const none = cdpPolicyFromEnv({});
    for (const url of [
      'ws://127.0.0.1:9222/devtools/browser/x',
      'wss://cdp.example.test/',
      'http://[::1]:9222',
    ])
      expect((await refusal(url, none)).kind).toBe('blocked');
    // That browser runs every tenant's jobs: attached to it, a caller would reach their pages.
    const operator = cdpPolicyFromEnv({ BROWSERFN_CDP_URL: 'http://127.0.0.1:9222' });
    const own = await refusal('ws://127.0.0.1:9222/devtools/browser/abc', operator);
    expect(own.kind).toBe('blocked');
    // The same words as for any unlisted endpoint: nothing tells a caller it found the server's own.
    expect(own.message).toBe(
      (await refusal('ws://127.0.0.1:9223/devtools/browser/abc', operator)).message.replace('9223', '9222'),
    );
    const listed = cdpPolicyFromEnv({
      BROWSERFN_CDP_URL: 'http://127.0.0.1:9222',
      BROWSERFN_CDP_ALLOW_HOSTS: '127.0.0.1:9222',
    });
    await expect(
      checkCdpUrl('ws://127.0.0.1:9222/devtools/browser/abc', listed, resolve),
    ).resolves.toBeTruthy();
  });

  it('refuses malformed values and other schemes as invalid', async () => {
    const open = cdpPolicyFromEnv({ BROWSERFN_CDP_ALLOW_HOSTS: '127.0.0.1' });
    for (const url of [
      'not a url',
      'file:///etc/passwd',
      'ftp://127.0.0.1/',
      'javascript:alert(1)',
      'data:,x',
    ]) {
      const err = await refusal(url, open);
      expect(err.kind, url).toBe('invalid');
      expect(err.message).toMatch(/^cdpUrl: /);
    }
  });

  it('opens exactly what is listed: IPs, ports, CIDRs, localhost', async () => {
    const policy = cdpPolicyFromEnv({
      BROWSERFN_CDP_ALLOW_HOSTS: '127.0.0.1:9222, [::1]:9222, localhost:9333, 10.0.0.0/8',
    });
    for (const url of [
      'ws://127.0.0.1:9222/devtools/browser/x',
      'http://[::1]:9222',
      'http://localhost:9333',
      'http://0x7f.0.0.1:9222', // WHATWG URL canonicalises to 127.0.0.1
      'ws://inside.example.test:9222/', // resolves into the listed CIDR
    ])
      await expect(checkCdpUrl(url, policy, resolve), url).resolves.toBeTruthy();
    for (const url of [
      'http://127.0.0.1:9223',
      'http://[::1]:80',
      'http://localhost:9222',
      'http://127.0.0.2:9222',
    ])
      expect((await refusal(url, policy)).kind, url).toBe('blocked');
  });

  it('never lets a listed name reach a private or metadata address', async () => {
    const policy = cdpPolicyFromEnv({
      BROWSERFN_CDP_ALLOW_HOSTS: '*.example.test',
    });
    await expect(checkCdpUrl('wss://cdp.example.test/session', policy, resolve)).resolves.toMatchObject({
      ip: '93.184.216.34',
    });
    expect((await refusal('wss://rebind.example.test/', policy)).message).toMatch(/private.*10\.1\.2\.3/);
    expect((await refusal('wss://meta.example.test/', policy)).message).toMatch(/169\.254\.169\.254/);
    expect((await refusal('wss://inside.example.test/', policy)).message).toMatch(/10\.0\.0\.7/);
    // Listed but not resolvable: not there (a connection failure), and never resolved again unchecked.
    await expect(checkCdpUrl('wss://gone.example.test/', policy, resolve)).rejects.toBeInstanceOf(
      CdpConnectError,
    );
    const unlisted = cdpPolicyFromEnv({ BROWSERFN_CDP_ALLOW_HOSTS: 'cdp.example.test' });
    expect((await refusal('wss://gone.example.test/', unlisted)).kind).toBe('blocked');
  });

  it('names only scheme, host and port in its messages (paths and queries carry tokens)', async () => {
    const err = await refusal(
      'wss://127.0.0.1:9222/devtools/browser/s3cr3t?apiKey=s3cr3t',
      cdpPolicyFromEnv({}),
    );
    expect(err.message).toContain('wss://127.0.0.1:9222');
    expect(err.message).not.toContain('s3cr3t');
  });
});

describe('cdpUrl guard lookups', () => {
  it('does not even resolve a name when nothing on the list could admit it', async () => {
    const asked: string[] = [];
    const spy = async (h: string) => {
      asked.push(h);
      return ['93.184.216.34'];
    };
    const policy = cdpPolicyFromEnv({ BROWSERFN_CDP_ALLOW_HOSTS: 'cdp.example.test' });
    await expect(checkCdpUrl('wss://probe.example.test/', policy, spy)).rejects.toBeInstanceOf(
      CdpRefusedError,
    );
    expect(asked).toEqual([]);
  });
});
