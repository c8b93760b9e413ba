import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError } from './args.ts';

/** What the operator typed as the page: a web URL, or a local HTML file (CLI only). */
export interface PageArg {
  url: string;
  /** Set for a local file: the only `file:` URL the session may open. */
  file?: string;
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/**
 * `https://…`, `file:///…` or a path such as `./page.html`. A local file is the operator's own
 * choice on their own machine; the API never accepts one, and pages may never navigate to `file:`.
 */
export function pageArg(value: string | undefined, what = 'url'): PageArg {
  if (!value) throw new UsageError(`missing <${what}>`);
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) return { url: url.toString() };
  if (url?.protocol === 'file:') {
    const path = fileURLToPath(url);
    if (!isFile(path)) throw new UsageError(`<${what}>: no such file ${path}`);
    return { url: url.toString(), file: url.toString() };
  }
  // Not a URL (a Windows drive letter parses as a scheme, so check the disk either way).
  if (isFile(value)) {
    const file = pathToFileURL(resolve(value)).toString();
    return { url: file, file };
  }
  // Written like a path (./x, ../x, /x, x.html): the person meant a file that is not there.
  if (/^\.{0,2}[\\/]|\.x?html?$/i.test(value) && !existsSync(value))
    throw new UsageError(`<${what}>: the file ${resolve(value)} does not exist`);
  throw new UsageError(`<${what}> must be an http(s) URL or a local file, got "${value}"`);
}
