// Child process for the release test: a Stagehand script that starts a session on browserfn and
// then hangs, until the test kills it. Its shutdown supervisor must then release the session.
import { Stagehand } from '@browserbasehq/stagehand';

const stagehand = new Stagehand({
  env: 'BROWSERBASE',
  apiKey: process.env.BFN_TEST_KEY ?? '',
  model: 'auto',
  verbose: 0,
  disablePino: true,
  logger: () => {},
});
await stagehand.init();
process.stdout.write(`session ${stagehand.browserbaseSessionID}\n`);
setInterval(() => {}, 60_000);
