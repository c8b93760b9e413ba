/**
 * The planner's reference fields, as pure rules: `needsDiscovery` with listing pages gives the spec a
 * discovery block (and no samples: Discover finds them); `systemPrompt` travels from the spec to the
 * agent's task and into the system part of every step's prompt.
 */
import { describe, expect, it } from 'vitest';
import { systemPrompt } from '../../lib/agent/prompt.ts';
import { AgentTaskSchema } from '../../lib/agent/state.ts';
import { discoveryFromPlan, type PlanReply, specFromPlan } from '../../lib/runs/planner.ts';
import { taskFromSpec } from '../../lib/runs/slice-runner.ts';

const base: PlanReply = {
  goal: 'read each member name',
  fields: [{ name: 'name', type: 'string', description: 'full name' }],
  requiredFields: ['name'],
  keywords: ['member'],
  maxSteps: 5,
  expectedItems: null,
  samples: [{ sample_id: 'org', url: 'https://example.org/members' }],
};

describe('planner: needs_discovery', () => {
  it('a plan naming a listing gets a discovery block over its listing pages, and no samples yet', () => {
    const { spec, samples } = specFromPlan({
      ...base,
      needsDiscovery: true,
      listingUrls: ['https://example.org/members'],
      itemLinkPattern: 'https://example.org/people/*',
    });
    expect(spec.discovery).toEqual({
      listings: ['https://example.org/members'],
      include: 'https://example.org/people/*',
    });
    expect(samples).toEqual([]);
  });

  it('without a link pattern the model picks the item links; without listing pages there is no discovery', () => {
    expect(
      discoveryFromPlan({ ...base, needsDiscovery: true, listingUrls: ['https://example.org/m'] }),
    ).toEqual({
      listings: ['https://example.org/m'],
      instruction: 'the links to each item page the task is about: read each member name',
    });
    const { spec, samples } = specFromPlan({ ...base, needsDiscovery: true, listingUrls: [] });
    expect(spec.discovery).toBeUndefined();
    expect(samples.map((s) => s.sampleId)).toEqual(['org']);
  });

  it('an older reply without the new fields still plans: no discovery, no system prompt', () => {
    const { spec } = specFromPlan(base);
    expect(spec.discovery).toBeUndefined();
    expect(spec.systemPrompt).toBeUndefined();
  });
});

describe('planner: system_prompt', () => {
  it("reaches the agent's task and the system part of its prompt", () => {
    const { spec } = specFromPlan({ ...base, systemPrompt: '  Member pages list the name in the header.  ' });
    expect(spec.systemPrompt).toBe('Member pages list the name in the header.');
    const { mode: _mode, ...sliceTask } = taskFromSpec(spec);
    const task = AgentTaskSchema.parse(sliceTask);
    expect(task.systemPrompt).toBe('Member pages list the name in the header.');
    expect(systemPrompt(task)).toContain(
      'Instructions for this task:\nMember pages list the name in the header.',
    );
    expect(systemPrompt(AgentTaskSchema.parse({ goal: 'g' }))).not.toContain('Instructions for this task');
  });
});
