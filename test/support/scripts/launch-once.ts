// Child process for the launch race test: unpack (maybe), launch, open a page, report, exit.
import { newJobContext, newPage } from '../../../lib/browser/context.ts';
import { launchBrowser } from '../../../lib/browser/launch.ts';

const browser = await launchBrowser();
const context = await newJobContext(browser);
const page = await newPage(context);
await page.setContent('<button>ok</button>');
process.stdout.write(`launched ${await page.locator('button').textContent()}\n`);
await browser.close();
