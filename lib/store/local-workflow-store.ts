/**
 * `WorkflowStore` on local files: `<root>/<tenant>/<id>/v0000000001.json`, one immutable file per
 * version (written once by hard link, so two writers never both get a version), and
 * `outcomes-v<N>.json` beside it (updated under a lock file) for the verified mark.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fromKeySegment, keySegment } from './keys.ts';
import { readJsonFile, withFileLock, writeFileAtomic, writeFileOnce } from './local-files.ts';
import type { WriteOnce } from './ports.ts';
import {
  applyOutcome,
  DEFAULT_VERIFY_AFTER,
  freshOutcomes,
  type WorkflowOutcome,
  type WorkflowStore,
  type WorkflowSummary,
  type WorkflowVersionInput,
  type WorkflowVersionRecord,
  workflowName,
} from './workflow-ports.ts';

type StoredVersion = Omit<WorkflowVersionRecord, 'verified' | 'streak' | 'signature' | 'runs'>;
type Outcomes = Pick<WorkflowVersionRecord, 'verified' | 'streak' | 'signature' | 'runs'>;

const versionFile = (version: number) => `v${String(version).padStart(10, '0')}.json`;
const VERSION_FILE = /^v(\d{10})\.json$/;

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export class LocalWorkflowStore implements WorkflowStore {
  private readonly verifyAfter: number;

  constructor(
    readonly root: string,
    options: { verifyAfter?: number } = {},
  ) {
    this.verifyAfter = options.verifyAfter ?? DEFAULT_VERIFY_AFTER;
  }

  private dir(tenant: string, id: string): string {
    return join(this.root, keySegment(tenant), keySegment(id));
  }

  private async versions(tenant: string, id: string): Promise<number[]> {
    return (await names(this.dir(tenant, id)))
      .map((n) => VERSION_FILE.exec(n)?.[1])
      .filter((v): v is string => v !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  private async read(
    tenant: string,
    id: string,
    version: number,
  ): Promise<WorkflowVersionRecord | undefined> {
    const dir = this.dir(tenant, id);
    const stored = await readJsonFile<StoredVersion>(join(dir, versionFile(version)));
    if (!stored) return undefined;
    const outcomes = (await readJsonFile<Outcomes>(join(dir, `outcomes-${version}.json`))) ?? freshOutcomes();
    return { ...stored, ...outcomes };
  }

  async putVersion(input: WorkflowVersionInput): Promise<WriteOnce> {
    const stored: StoredVersion = {
      ...input,
      name: workflowName(input.document, input.id),
      createdAt: new Date().toISOString(),
    };
    const file = join(this.dir(input.tenant, input.id), versionFile(input.version));
    return (await writeFileOnce(file, JSON.stringify(stored))) ? 'written' : 'exists';
  }

  async getVersion(tenant: string, id: string, version?: number): Promise<WorkflowVersionRecord | undefined> {
    const wanted = version ?? (await this.versions(tenant, id)).at(-1);
    return wanted === undefined ? undefined : this.read(tenant, id, wanted);
  }

  async listVersions(tenant: string, id: string): Promise<WorkflowVersionRecord[]> {
    const out: WorkflowVersionRecord[] = [];
    for (const v of await this.versions(tenant, id)) {
      const record = await this.read(tenant, id, v);
      if (record) out.push(record);
    }
    return out;
  }

  async list(tenant: string): Promise<WorkflowSummary[]> {
    const out: WorkflowSummary[] = [];
    for (const segment of (await names(join(this.root, keySegment(tenant)))).sort()) {
      let id: string;
      try {
        id = fromKeySegment(segment);
      } catch {
        continue; // a stray file, not one of ours
      }
      const latest = await this.getVersion(tenant, id);
      if (latest)
        out.push({ tenant, id, name: latest.name, latest: latest.version, updatedAt: latest.createdAt });
    }
    return out;
  }

  async recordOutcome(
    tenant: string,
    id: string,
    version: number,
    outcome: WorkflowOutcome,
  ): Promise<WorkflowVersionRecord | undefined> {
    const dir = this.dir(tenant, id);
    if (!(await readJsonFile<StoredVersion>(join(dir, versionFile(version))))) return undefined;
    const file = join(dir, `outcomes-${version}.json`);
    await withFileLock(file, async () => {
      const now = (await readJsonFile<Outcomes>(file)) ?? freshOutcomes();
      await writeFileAtomic(file, JSON.stringify(applyOutcome(now, outcome, this.verifyAfter)));
    });
    return this.read(tenant, id, version);
  }
}
