import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';

/** An app served on a free loopback port, and its base URL (`http://127.0.0.1:PORT`). */
export async function serveOnLoopback(
  fetch: (req: Request) => Response | Promise<Response>,
): Promise<{ server: ServerType; base: string }> {
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A node:http server listening on a free loopback port; its base URL (`http://127.0.0.1:PORT`). */
export const listenOnLoopback = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
