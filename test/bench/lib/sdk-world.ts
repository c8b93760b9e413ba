/**
 * The world bench:stagehand-sdk runs in, as its own process: the fixture site and the scripted
 * model. In real use neither shares the SDK's event loop, and in one process their work (the model
 * server counts every prompt's tokens) would land inside the calls being timed. Prints one JSON
 * line (`siteUrl`, `sitePort`, `openaiBaseURL`) and runs until stdin closes.
 */
import { startFixtureServer } from '../../support/fixture-server.ts';
import { startScriptedModel } from '../../support/llm-server.ts';
import { sdkBenchReply } from './sdk-model.ts';

const [site, llm] = await Promise.all([startFixtureServer(), startScriptedModel()]);
llm.setHandler(sdkBenchReply);
process.stdout.write(
  `${JSON.stringify({ siteUrl: site.url, sitePort: site.port, openaiBaseURL: llm.openaiBaseURL })}\n`,
);
process.stdin.resume();
process.stdin.on('end', async () => {
  await Promise.all([site.close(), llm.close()]);
  process.exit(0);
});
