/**
 * act / observe / extract on any page driver: the entry an edge worker calls with the raw-CDP
 * driver (no Node, no Playwright on this path), and what the parity test drives on both adapters.
 * Same inputs and results as the HTTP API's ops.
 */
import type { Action } from '../actions/types.ts';
import { type CdpDriverOptions, type CdpPage, openCdpPage } from '../browser/cdp-open.ts';
import type { PageDriver } from '../browser/page-driver.ts';
import { act } from './act.ts';
import { extract } from './extract.ts';
import type { ExtractSchema } from './extract-schema.ts';
import { observe } from './observe.ts';
import type { ActResult, ExtractResult, ObservedElement, ObserveResult, OpContext } from './types.ts';

/** Everything of an op's context but the page: the model, cache, variables, options, log, deadline. */
export type PortableContext = Omit<OpContext, 'page'>;

export function actOn(
  driver: PageDriver,
  input: string | Action | ObservedElement,
  context: PortableContext = {},
): Promise<ActResult> {
  return act({ ...context, page: driver }, input);
}

export function observeOn(
  driver: PageDriver,
  instruction?: string,
  context: PortableContext = {},
): Promise<ObserveResult> {
  return observe({ ...context, page: driver }, instruction);
}

export function extractOn(
  driver: PageDriver,
  instruction?: string,
  schema?: ExtractSchema,
  context: PortableContext = {},
): Promise<ExtractResult> {
  return extract({ ...context, page: driver }, instruction, schema);
}

/**
 * Opens a new tab in a remote browser over its CDP WebSocket URL (`ws://…/devtools/browser/…`)
 * and returns its driver; `close()` closes the tab and the socket. With `attach: 'existing'` it
 * drives the browser's first page instead and `close()` leaves that page open. On Node 20 pass the `ws`
 * package's class as `WebSocket`; workerd and Node 22 have a global one.
 */
export function connectCdpDriver(wsUrl: string, options: CdpDriverOptions = {}): Promise<CdpPage> {
  return openCdpPage(wsUrl, options);
}

export type { CdpDriverOptions, CdpPage };
