/**
 * The workflow versions a run reads and writes, through the `WorkflowStore` port: which workflow a
 * spec names (an inline document is stored under the tenant for the run, so heals have somewhere to
 * go), the up-front check that a named id exists, loading a version, and writing a sample's confirmed
 * heals back as the next version that later samples then start on.
 */
import type { JsonObject } from '../store/ports.ts';
import type { WorkflowStore, WorkflowVersionRecord } from '../store/workflow-ports.ts';
import { saveNextVersion } from '../store/workflow-ports.ts';
import { applyHeals } from '../workflows/heal.ts';
import { AI_NODE_TYPES, type NodeType, type Workflow } from '../workflows/schema.ts';
import type { HealRecord } from '../workflows/types.ts';
import { parseWorkflow } from '../workflows/validate.ts';
import { SpecError, type TaskSpec } from './task-spec.ts';
import { inlineWorkflowId } from './workflow-sample-usage.ts';

export interface WorkflowRef {
  id: string;
  /** Pinned by the spec; absent: every sample starts on the latest version. */
  version?: number;
}

const refuse = (path: string, message: string): never => {
  throw new SpecError(`task spec ${path}: ${message}`, [{ path, message }]);
};

/**
 * Refuses, before a run is created, a spec whose stored workflow does not exist for this tenant (or
 * lacks the pinned version), or whose version is not verified when the spec requires it.
 */
export async function checkRunWorkflow(
  store: WorkflowStore | undefined,
  tenant: string,
  spec: TaskSpec,
): Promise<void> {
  if (spec.mode !== 'workflow' || !spec.workflow) return;
  if (!store) refuse('workflow', 'this deployment has no workflow store');
  if ('nodes' in spec.workflow) {
    if (spec.requireVerified)
      refuse(
        'requireVerified',
        'an inline workflow has no verified version yet; save it (POST /v1/workflows) and run it by id',
      );
    return;
  }
  const { id, version } = spec.workflow as WorkflowRef;
  const record = await store!.getVersion(tenant, id, version);
  if (!record)
    refuse(
      'workflow.id',
      version === undefined ? `no workflow "${id}" is stored` : `workflow "${id}" has no version ${version}`,
    );
  if (spec.requireVerified && !record!.verified)
    refuse(
      'requireVerified',
      `workflow "${id}" version ${record!.version} is not verified (${record!.streak} identical successes so far); run it attended first or drop requireVerified`,
    );
}

/** The workflow a run's samples read; an inline document is stored as version 1 of the run's own id. */
export async function runWorkflowRef(
  store: WorkflowStore,
  tenant: string,
  runId: string,
  spec: TaskSpec,
): Promise<WorkflowRef> {
  const w = spec.workflow;
  if (!w) throw new Error('mode "workflow" without a workflow');
  if (!('nodes' in w)) return w as WorkflowRef;
  const id = inlineWorkflowId(runId);
  if (!(await store.getVersion(tenant, id, 1))) {
    const document = { ...parseWorkflow(w), version: 1 } as unknown as JsonObject;
    // Two first samples may race here: the second one finds it written ('exists') and reads it.
    await store.putVersion({ tenant, id, version: 1, document, note: `inline workflow of run ${runId}` });
  }
  return { id };
}

/** A stored version as a runnable document (its `version` is the stored one, the base of the next). */
export async function loadVersion(
  store: WorkflowStore,
  tenant: string,
  ref: WorkflowRef,
): Promise<{ workflow: Workflow; record: WorkflowVersionRecord } | { problem: string }> {
  const record = await store.getVersion(tenant, ref.id, ref.version);
  if (!record)
    return {
      problem:
        ref.version === undefined
          ? `no workflow "${ref.id}" is stored for this tenant`
          : `workflow "${ref.id}" has no version ${ref.version}`,
    };
  try {
    return { workflow: { ...parseWorkflow(record.document), version: record.version }, record };
  } catch (err) {
    return { problem: `workflow "${ref.id}" version ${record.version}: ${(err as Error).message}` };
  }
}

/**
 * Writes a finished sample's confirmed heals as the next version. The heals are applied to the
 * latest version (another sample may have written one since this one started): when that version
 * already holds them, nothing is written. Returns the version written, if any.
 */
export async function writeBackHeals(
  store: WorkflowStore,
  tenant: string,
  id: string,
  heals: readonly HealRecord[],
  why: { runId: string; sampleId: string },
): Promise<number | undefined> {
  const confirmed = heals.filter((h) => h.confirmed);
  if (!confirmed.length) return undefined;
  const latest = await loadVersion(store, tenant, { id });
  if ('problem' in latest) return undefined;
  const next = applyHeals(latest.workflow, confirmed);
  if (!next) return undefined;
  const steps = [...new Set(confirmed.map((h) => `${h.alias} (${h.via})`))].join(', ');
  return saveNextVersion(store, {
    tenant,
    id,
    document: next as unknown as JsonObject,
    parent: latest.record.version,
    note: `healed ${steps} in run ${why.runId}, sample ${why.sampleId}`,
  });
}

/** Whether a document holds a node that calls a model (AI nodes at any depth); pinned steps heal without one. */
export function usesModel(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(usesModel);
  if (!value || typeof value !== 'object') return false;
  const node = value as { alias?: unknown; type?: unknown };
  if (typeof node.alias === 'string' && AI_NODE_TYPES.includes(node.type as NodeType)) return true;
  return Object.values(value).some(usesModel);
}

/**
 * Whether a mode "workflow" run needs a model: when its workflow has AI nodes or the agent is its
 * fallback. A stored workflow is read (the pinned version, else the latest); one not found needs
 * none here (the up-front check names it).
 */
export async function workflowNeedsModel(
  store: WorkflowStore | undefined,
  tenant: string,
  spec: TaskSpec,
): Promise<boolean> {
  if (spec.fallback === 'agent') return true;
  const w = spec.workflow;
  if (!w) return false;
  if ('nodes' in w) return usesModel(w.nodes);
  const record = await store?.getVersion(tenant, (w as WorkflowRef).id, (w as WorkflowRef).version);
  return record ? usesModel(record.document.nodes) : false;
}
