// Loads the conformance report page in headless Chromium and checks that the findings a
// misbehaving client produced are shown. Saves a screenshot as a test artifact.
import { chromium } from 'playwright-core';

const [base, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = 0;
const check = (name, ok) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`); if (!ok) failed++; };
try {
  const page = await browser.newPage();
  const response = await page.goto(`${base}/conformance`);
  check('the page loads', response.status() === 200);
  check('the title says what it is', (await page.title()).includes('conformance'));
  const rules = await page.locator('tr.finding td.rule').allTextContents();
  check('findings are listed', rules.length >= 3);
  for (const rule of ['content-type', 'retry-too-soon', 'unsupported-method']) {
    check(`the ${rule} finding is shown`, rules.includes(rule));
  }
  check('the run is named', (await page.content()).includes('run:page-demo'));
  await page.screenshot({ path: screenshot, fullPage: true });
  check('a screenshot was saved', true);
} finally {
  await browser.close();
}
console.log(`conformance page: ${7 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
