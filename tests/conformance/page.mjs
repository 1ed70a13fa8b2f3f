// Loads the conformance report page in headless Chromium, gives it the client's token, and
// checks that the findings a misbehaving client produced are shown grouped by rule with
// repeats collapsed, and that another owner's token sees none of them. Saves a screenshot.
import { chromium } from 'playwright-core';

const [base, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let passed = 0;
let failed = 0;
const check = (name, ok) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
  if (ok) passed++; else failed++;
};
const show = async (page, token) => {
  await page.evaluate(() => { document.getElementById('report').textContent = ''; });
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForFunction(() => document.getElementById('report').textContent.trim() !== '');
};
try {
  const page = await browser.newPage();
  const response = await page.goto(`${base}/conformance`);
  check('the page loads', response.status() === 200);
  check('the title says what it is', (await page.title()).includes('conformance'));
  check('no finding is shown without a token', (await page.locator('tr.finding').count()) === 0);

  await show(page, 'not-a-token');
  check('a wrong token is refused', (await page.locator('#report').textContent()).includes('not accepted'));

  await show(page, process.env.TOKEN);
  const rules = await page.locator('tr.rule-summary td.rule').allTextContents();
  for (const rule of ['content-type', 'retry-too-soon', 'unsupported-method']) {
    check(`the ${rule} rule is listed`, rules.includes(rule));
  }
  const contentType = page.locator('tr.rule-summary', { hasText: 'content-type' }).locator('td.count');
  check('the content-type findings are counted (301)', (await contentType.textContent()).trim() === '301');
  const rows = await page.locator('tr.finding').count();
  check(`repeats are collapsed (${rows} rows for 303 findings)`, rows > 0 && rows < 10);
  check('the groups start closed', (await page.locator('details[open]').count()) === 0);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  check(`the page stays short (${height} px)`, height < 2500);
  check('the run is named', (await page.content()).includes('page-demo'));
  await page.click('details[data-rule="content-type"] summary');
  check('a group opens to its rows', await page.locator('details[data-rule="content-type"] tr.finding').first().isVisible());
  await page.screenshot({ path: screenshot, fullPage: true });

  const other = await browser.newPage();
  await other.goto(`${base}/conformance`);
  await show(other, process.env.OTHER_TOKEN);
  check("another owner's token sees none of the run", !(await other.content()).includes('page-demo'));
} finally {
  await browser.close();
}
console.log(`conformance page: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
