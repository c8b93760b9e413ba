/**
 * What the runner asks the page and the model differently in set-of-marks mode and once a step
 * falls back to coordinates: one object per scenario, so run-scenario.ts stays a plain loop. It
 * takes the marked picture when one is due, shows the trimmed outline in SoM mode, answers look
 * commands within the budget, runs coordinate commands and counts a step's failed attempts.
 */
import type { Page } from 'playwright-core';
import type { LlmClient, MessagePart, Usage } from '../llm/types.ts';
import type { Snapshot } from '../perception/types.ts';
import type { RecordedCommand, RunContext } from './commands.ts';
import {
  type CoordinateCommand,
  coordinatePrompt,
  coordinatesOffered,
  isFailedAttempt,
  runMixedCommands,
  standIn,
} from './coordinate-fallback.ts';
import type { Command, CommandResult } from './decision.ts';
import {
  capturePicture,
  decideWithLooks,
  imagePart,
  type LookAnswer,
  type LookState,
  type ModeDecision,
  type Picture,
  SOM_SYSTEM,
  somPageText,
  type VisionMode,
} from './som-mode.ts';

export interface VisionOptions {
  vision?: VisionMode;
  /** The scenario is being made into a workflow / script: coordinates need a stated reason. */
  scriptMode?: boolean;
  secrets?: Record<string, string>;
}

export interface IterationView {
  /** The page section of the prompt: the outline, or in SoM mode the element map and text. */
  tree: string;
  /** Extra prompt sections (the coordinate offer). */
  extra: string[];
  picture?: Picture;
}

export class ScenarioVision {
  private failed = 0;
  private looks: LookState = { asked: 0 };
  private marker: { x: number; y: number } | undefined;
  private previous: Picture | undefined;

  constructor(
    private readonly page: Page,
    private readonly opts: VisionOptions,
  ) {}

  get som(): boolean {
    return this.opts.vision === 'som';
  }

  get coordinates(): boolean {
    return coordinatesOffered(this.failed);
  }

  system(base: string): string {
    return this.som ? base + SOM_SYSTEM : base;
  }

  startStep(): void {
    this.failed = 0;
    this.looks = { asked: 0 };
  }

  /** The page for this iteration's prompt; a picture in SoM mode and whenever coordinates are offered. */
  async view(snap: Snapshot): Promise<IterationView> {
    const coordinates = this.coordinates;
    if (!this.som && !coordinates) return { tree: snap.tree, extra: [] };
    const picture = await capturePicture(this.page, snap, {
      ...(this.opts.secrets ? { secrets: this.opts.secrets } : {}),
      ...(this.marker ? { marker: this.marker } : {}),
    });
    this.marker = undefined;
    const extra = coordinates ? [coordinatePrompt(this.failed, this.opts.scriptMode ?? false)] : [];
    if (!this.som)
      extra.push(
        'A screenshot of the viewport is attached: every element of the outline has a box labelled with its id.',
      );
    return { tree: this.som ? somPageText(snap) : snap.tree, extra, picture };
  }

  /**
   * The iteration's decision. Look commands (SoM mode) are answered here; a refresh renews the
   * snapshot, so the commands must run against the one returned.
   */
  async decide(input: {
    llm: LlmClient;
    system: string;
    prompt: string;
    view: IterationView;
    snap: Snapshot;
    resnap: () => Promise<Snapshot>;
    signal?: AbortSignal;
  }): Promise<{ value: ModeDecision; usage: Usage | undefined; looks: string[]; snap: Snapshot }> {
    const { view } = input;
    let snap = input.snap;
    const content: string | MessagePart[] = view.picture
      ? [{ type: 'text', text: input.prompt }, imagePart(view.picture)]
      : input.prompt;
    const take = async (tool: string): Promise<LookAnswer> => {
      if (tool === 'view_previous_screenshot') {
        if (!this.previous) return { text: 'There is no earlier picture in this scenario.' };
        return {
          ...this.previous,
          text: 'The picture the previous iteration started from. Its ids may be gone: act only on the current ids.',
        };
      }
      snap = await input.resnap();
      const fresh = await capturePicture(
        this.page,
        snap,
        this.opts.secrets ? { secrets: this.opts.secrets } : {},
      );
      return {
        ...fresh,
        text: `The page now, marked again; ids are renewed, use these.\n${somPageText(snap)}`,
      };
    };
    const out = await decideWithLooks({
      llm: input.llm,
      system: input.system,
      content,
      pictures: new Set(view.picture ? [view.picture.hash] : []),
      coordinates: this.coordinates,
      looksOffered: this.som,
      looks: this.looks,
      take,
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (view.picture) this.previous = view.picture;
    return { ...out, snap };
  }

  /** Runs the decision's commands (outline and coordinate ones) and counts a failed attempt. */
  async run(
    ctx: RunContext,
    commands: readonly ModeDecision['commands'][number][],
  ): Promise<{ results: CommandResult[]; recorded: RecordedCommand[] }> {
    const runnable = commands.filter((c): c is Command | CoordinateCommand => c.kind !== 'look');
    const got = await runMixedCommands({ ...ctx, scriptMode: this.opts.scriptMode ?? false }, runnable);
    if (got.marker) this.marker = got.marker;
    this.noteResults(got.results);
    return { results: got.results, recorded: got.recorded };
  }

  /** Counts an iteration with a failed command towards the coordinate fallback. */
  noteResults(results: readonly CommandResult[]): void {
    if (isFailedAttempt(results)) this.failed++;
  }
}

/** A decision's command as results show it (a coordinate or look command stands as an action). Pure. */
export function shownAs(c: ModeDecision['commands'][number]): Command {
  if (c.kind === 'coordinate') return standIn(c);
  if (c.kind === 'look')
    return { kind: 'action', action: 'wait', value: '0', description: `look: ${c.tool}` };
  return c;
}
