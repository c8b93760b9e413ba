import dgram from 'node:dgram';
import http from 'node:http';
import type net from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { launchBrowser, WEBRTC_POLICY_FLAG } from '../../lib/browser/launch.ts';
import { openSession } from '../../lib/browser/session.ts';
import { startBrowser } from '../support/browser.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';

/** A UDP port on loopback that a page names as STUN server, TURN server and peer. Nothing may arrive. */
let udp: dgram.Socket;
let udpPort: number;
let packets = 0;
let site: http.Server;
let siteUrl: string;
let browser: Browser;
let remote: RemoteChrome;

/**
 * Gathers candidates against the STUN and TURN servers, then connects two peers and hands one of
 * them an extra candidate at the UDP port, which makes it send connectivity checks there.
 */
const page = (port: number) => `<!doctype html><title>rtc</title><script>
window.rtc = (async () => {
  const servers = { iceServers: [
    { urls: 'stun:127.0.0.1:${port}' },
    { urls: 'turn:127.0.0.1:${port}?transport=udp', username: 'u', credential: 'p' },
  ] };
  const a = new RTCPeerConnection(servers);
  const b = new RTCPeerConnection();
  a.createDataChannel('x');
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  await a.addIceCandidate({ candidate: 'candidate:9 1 udp 2122260223 127.0.0.1 ${port} typ host', sdpMid: '0', sdpMLineIndex: 0 });
  return 'peer connections made';
})().catch((e) => 'refused: ' + e.message);
</script>`;

beforeAll(async () => {
  udp = dgram.createSocket('udp4');
  udp.on('message', () => {
    packets++;
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  udpPort = udp.address().port;
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page(udpPort));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  siteUrl = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}/`;
  // The remote browser is a foreign one: it has none of our flags, the WebRTC policy included.
  [browser, remote] = await Promise.all([startBrowser(), startRemoteChrome([WEBRTC_POLICY_FLAG])]);
});
afterAll(async () => {
  await browser?.close();
  await remote?.close();
  await closeGuardProxies();
  site?.close();
  udp?.close();
});

const policy = () => ({ allowPrivate: false, allowHosts: [new URL(siteUrl).host] });

/** Opens the page, lets WebRTC try for a while, returns what the page said and what arrived. */
async function probe(options: { browser: Browser } | { cdpUrl: string }) {
  packets = 0;
  const session = await openSession({ ...options, policy: policy(), url: siteUrl });
  try {
    const said = await session.page.evaluate('window.rtc');
    const transport = await session.page.evaluate('typeof WebTransport');
    await new Promise((r) => setTimeout(r, 2500));
    return { said, packets, transport };
  } finally {
    await session.close();
  }
}

describe('WebRTC cannot send UDP past the network guard', () => {
  it('in the embedded browser (launch policy: no UDP unless proxied)', async () => {
    const r = await probe({ browser });
    // The page ran its WebRTC code in full; the policy, not an error, kept the packets home.
    expect(r.said).toBe('peer connections made');
    expect(r.packets).toBe(0);
  });

  it('in a remote browser over CDP (init script: no RTCPeerConnection)', async () => {
    const r = await probe({ cdpUrl: remote.wsUrl });
    expect(r.packets).toBe(0);
    expect(r.said).toMatch(/^refused: /);
    // QUIC is UDP too, and request interception does not see it.
    expect(r.transport).toBe('undefined');
  });

  it('in a remote browser the server itself runs on (BROWSERFN_CDP_URL: a new context per job)', async () => {
    const shared = await launchBrowser({ cdpUrl: remote.wsUrl });
    try {
      const r = await probe({ browser: shared });
      expect(r.packets).toBe(0);
      expect(r.said).toMatch(/^refused: /);
      expect(r.transport).toBe('undefined');
    } finally {
      await shared.close();
    }
  });
});
