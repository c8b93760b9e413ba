import { join } from 'node:path';
import { ActionCache } from '../ops/cache.ts';
import { LocalCacheStore } from '../store/local-cache.ts';
import { tenantSegment } from '../store/tenant-key.ts';

/**
 * One action cache per tenant, each in its own directory under `root`. The directory name comes
 * from `tenantSegment`, so no two tenants share one and none lies outside `root`.
 */
export function localTenantCaches(
  root: string,
  onError?: (err: unknown) => void,
): (tenant: string) => ActionCache {
  const caches = new Map<string, ActionCache>();
  return (tenant) => {
    let c = caches.get(tenant);
    if (!c) {
      c = new ActionCache(new LocalCacheStore(join(root, tenantSegment(tenant))), onError);
      caches.set(tenant, c);
    }
    return c;
  };
}
