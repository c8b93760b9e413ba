/**
 * The exploratory mode's prompts, in our own words. The command language is the scenario
 * runner's (the same paragraph of its system text), so an explored journey is made of the same
 * commands a scenario records. Pure.
 */
import { SCENARIO_SYSTEM } from './prompt.ts';

/** The runner's description of the page outline and of the commands (not its per-step rules). */
function commandLanguage(): string {
  const from = SCENARIO_SYSTEM.indexOf('The page comes as an outline');
  const to = SCENARIO_SYSTEM.indexOf('How to decide:');
  return from >= 0 && to > from ? SCENARIO_SYSTEM.slice(from, to).trim() : SCENARIO_SYSTEM;
}

export const EXPLORE_SYSTEM = `You explore a live web application on your own to find and test the user journeys a goal asks for. Nobody gives you steps: each call is one iteration, you see the page, choose what to try next, your commands run, and you are called again.

${commandLanguage()}

How to explore:
- Stay within the goal; do not wander into unrelated parts of the app.
- Name the journey every decision belongs to ("journey", kebab-case, e.g. add-note, change-settings). A journey is one path a user takes to get something done. Use "setup" for what every journey needs first, such as logging in with the test credentials.
- Describe each decision's commands as one plain scenario step ("step"), the way a tester would write it.
- When a journey reaches its end, prove it with at least one verification command in the same decision and set journeyDone: the journey is then recorded and the page goes back to the start for the next one. A new journey always starts from that start page.
- Test credentials are given as placeholders only; type them exactly as %name%. Without credentials, do not try to log in or sign up.
- A CAPTCHA, a one-time code or an e-mail confirmation cannot be done: answer "stuck" if the goal needs it, otherwise explore elsewhere.
- A cookie banner or a modal in the way is a blocker: clear it with blockerDetected.
- status "complete" once every journey the goal asks for has been recorded; "stuck" when you cannot go on. Never claim a journey you have not proved.
- noteToFutureSelf is your only memory between iterations: what you have covered, what is left, what to try if something failed.`;

export interface ExploreView {
  goal: string;
  iteration: number;
  maxIterations: number;
  journeys: { id: string; done: boolean; steps: string[] }[];
  setup: string[];
  current?: string;
  note?: string;
  /** What the explorer itself did or refused since the last decision. */
  notice?: string;
  lastResults: string[];
  cleared: string[];
  experiences: string[];
  variableNames: string[];
  url: string;
  title: string;
  tree: string;
}

export function explorePrompt(v: ExploreView): string {
  const out: string[] = [`Goal: ${v.goal}`, `Iteration ${v.iteration} of ${v.maxIterations}.`];
  out.push(
    v.variableNames.length
      ? `Test credentials and data (type them as placeholders): ${v.variableNames.map((n) => `%${n}%`).join(', ')}`
      : 'No test credentials were given.',
  );
  if (v.setup.length)
    out.push(`Set-up done (shared by every journey):\n${v.setup.map((s) => `- ${s}`).join('\n')}`);
  if (v.journeys.length)
    out.push(
      `Journeys so far:\n${v.journeys
        .map(
          (j) =>
            `- ${j.id} (${j.done ? 'recorded' : j.id === v.current ? 'in progress' : 'left unfinished'}): ${j.steps.join(' → ') || '(no step yet)'}`,
        )
        .join('\n')}`,
    );
  if (v.notice) out.push(v.notice);
  if (v.note) out.push(`Your note from the previous iteration: ${v.note}`);
  if (v.lastResults.length) out.push(`Results of your last commands:\n${v.lastResults.join('\n')}`);
  if (v.cleared.length) out.push(`Cleared before this iteration (no action needed): ${v.cleared.join('; ')}`);
  if (v.experiences.length)
    out.push(`Learned about this site:\n${v.experiences.map((e) => `- ${e}`).join('\n')}`);
  out.push(`Current page: ${v.url}\nTitle: ${v.title}\n${v.tree}`);
  return out.join('\n\n');
}
