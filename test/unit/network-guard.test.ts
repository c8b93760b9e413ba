import { describe, expect, it } from 'vitest';
import { checkUrl, classifyAddress, isAllowed } from '../../lib/browser/guard.ts';
import { DEFAULT_POLICY, mergePolicy, policyFromEnv } from '../../lib/browser/guard-policy.ts';

const noDns = async (): Promise<string[]> => {
  throw new Error('no DNS in this test');
};

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local / cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique local'],
    ['fc00::1', 'unique local'],
    ['::ffff:127.0.0.1', 'loopback address inside an IPv6'],
    ['::ffff:7f00:1', 'loopback address inside an IPv6'],
    ['::ffff:a9fe:a9fe', 'link-local / cloud metadata address inside'],
    ['64:ff9b::a00:1', 'private address (RFC 1918) inside'],
    ['2002:c0a8:101::1', 'private address (RFC 1918) inside'],
    ['::7f00:1', 'loopback address inside'],
  ])('%s is blocked as %s', (ip, rule) => {
    const c = classifyAddress(ip);
    expect(c.blocked).toBe(true);
    expect(c.rule).toContain(rule);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toEqual({ blocked: false });
  });
});

describe('checkUrl', () => {
  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0/', 'unspecified'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]:8080/x', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://[fd00:ec2::254]/latest', 'unique local'],
    ['http://localhost:3000/', 'loopback'],
    ['http://LOCALHOST./', 'loopback'],
    ['http://app.localhost/', 'loopback'],
    ['file:///etc/passwd', 'file URLs are not allowed'],
    ['view-source:http://example.com', 'view-source URLs are not allowed'],
    ['ftp://example.com/', 'ftp URLs are not allowed'],
  ])('%s → blocked (%s), with the URL and the rule in the message', async (url, rule) => {
    const v = await checkUrl(url, DEFAULT_POLICY, noDns);
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.rule).toContain(rule);
    expect(v.message).toContain(url);
    expect(v.message).toContain('BROWSERFN_ALLOW_HOSTS');
  });

  it('blocks a hostname that resolves to a private address, naming both', async () => {
    const v = await checkUrl('http://intranet.example/', DEFAULT_POLICY, async () => [
      '93.184.216.34',
      '10.0.0.5',
    ]);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.message).toContain('intranet.example resolves to 10.0.0.5');
  });

  it('lets public addresses and names through', async () => {
    expect((await checkUrl('https://93.184.216.34/', DEFAULT_POLICY, noDns)).ok).toBe(true);
    expect((await checkUrl('https://shop.example/', DEFAULT_POLICY, async () => ['93.184.216.34'])).ok).toBe(
      true,
    );
    expect((await checkUrl('about:blank', DEFAULT_POLICY, noDns)).ok).toBe(true);
    expect((await checkUrl('data:text/html,hi', DEFAULT_POLICY, noDns)).ok).toBe(true);
  });

  it('opens allow-listed hosts: exact, host:port, wildcard, CIDR, or everything private', async () => {
    const policy = mergePolicy(DEFAULT_POLICY, {
      allowHosts: ['127.0.0.1:8080', 'fixtures.internal', '*.corp.example', '10.20.0.0/16'],
    });
    const ok = async (url: string, ips: string[] = []) => (await checkUrl(url, policy, async () => ips)).ok;
    expect(await ok('http://127.0.0.1:8080/login')).toBe(true);
    expect(await ok('http://127.0.0.1:8081/login')).toBe(false);
    expect(await ok('http://fixtures.internal/', ['10.9.9.9'])).toBe(true);
    expect(await ok('http://wiki.corp.example/', ['10.1.1.1'])).toBe(true);
    expect(await ok('http://10.20.3.4/')).toBe(true);
    expect(await ok('http://10.21.3.4/')).toBe(false);
    expect(await ok('http://db.internal/', ['10.20.1.1'])).toBe(true);
    const open = { allowPrivate: true, allowHosts: [] };
    expect((await checkUrl('http://10.0.0.1/', open, noDns)).ok).toBe(true);
    expect((await checkUrl('http://localhost:3000/', open, noDns)).ok).toBe(true);
    // Opening the private network never opens the cloud metadata service.
    for (const url of [
      'http://169.254.169.254/latest',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:169.254.169.254]/',
    ])
      expect((await checkUrl(url, open, noDns)).ok, url).toBe(false);
    expect((await checkUrl('http://meta.internal/', open, async () => ['169.254.169.254'])).ok).toBe(false);
    expect(
      (
        await checkUrl(
          'http://169.254.169.254/',
          { allowPrivate: true, allowHosts: ['169.254.169.254'] },
          noDns,
        )
      ).ok,
    ).toBe(true);
    expect(isAllowed(policy, 'evil.corp.example.attacker.test', '80')).toBe(false);
  });

  it('reads the policy from the environment', () => {
    expect(
      policyFromEnv({ BROWSERFN_ALLOW_HOSTS: ' 127.0.0.1:9000 ,Example.test', BROWSERFN_ALLOW_PRIVATE: '' }),
    ).toEqual({
      allowPrivate: false,
      allowHosts: ['127.0.0.1:9000', 'example.test'],
    });
    expect(policyFromEnv({ BROWSERFN_ALLOW_PRIVATE: '1' }).allowPrivate).toBe(true);
  });
});
