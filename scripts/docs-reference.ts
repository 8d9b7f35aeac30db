import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { REFERENCE_HTML_PATH, SPEC_PATH } from '../src/api/contract/specification.js';
import { REPO_ROOT, isObject, listOperations, loadSpec } from './spec-document.js';

/**
 * Checks, in headless Chromium with every network request refused, that the HTML reference (built
 * by scripts/build.ts) renders and shows every operation of the spec. Used by `npm run docs:check`
 * (scripts/docs-check.ts).
 */

export const DOCS_SCREENSHOT_PATH = join(REPO_ROOT, 'docs', 'screenshot.png');

/** Debian's package `chromium`; HERALD_CHROMIUM_PATH points elsewhere when needed. */
export const CHROMIUM_PATH = process.env.HERALD_CHROMIUM_PATH || '/usr/bin/chromium';

/** Headless, no sandbox (CI runs as root), and none of Chromium's own calls home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A message saying how to install Chromium, or undefined when it is there. */
export function chromiumMissing(path: string = CHROMIUM_PATH): string | undefined {
  if (existsSync(path)) return undefined;
  return (
    `Chromium not found at ${path}. The docs check drives Debian's headless Chromium through playwright-core ` +
    `(it never downloads a browser). Install it with: apt-get install -y chromium ` +
    `(fonts-liberation is recommended for readable screenshots), or set HERALD_CHROMIUM_PATH.`
  );
}

export interface ExpectedOperation {
  operationId: string;
  summary: string;
  method: string;
  path: string;
}

export interface DocsReport {
  title: string;
  operations: (ExpectedOperation & { rendered: boolean })[];
  /** One line per problem; empty when the page rendered every operation. */
  problems: string[];
  /** Requests the page tried beyond its own file (all refused: the page must not need them). */
  refusedRequests: string[];
  screenshotPath: string;
}

/** The operations the page must show, read from the spec. */
export function expectedOperations(specPath: string = SPEC_PATH): { title: string; operations: (ExpectedOperation & { tags: string[] })[] } {
  const doc = loadSpec(specPath);
  const info = isObject(doc.info) ? doc.info : {};
  const operations = listOperations(doc).map((op) => ({
    operationId: op.operationId ?? `${op.method} ${op.path}`,
    summary: op.summary ?? '',
    method: op.method.toUpperCase(),
    path: op.path,
    tags: op.tags,
  }));
  return { title: typeof info.title === 'string' ? info.title : '', operations };
}

/** Follows an in-page link, as clicking it in the sidebar would. */
async function openHash(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    (globalThis as unknown as { location: { hash: string } }).location.hash = h;
  }, hash);
}

/**
 * The tag sections by their heading. Redoc renders a section only once it is scrolled into view,
 * so each one is scrolled to, as a reader scrolling down would.
 */
async function tagSections(page: Page): Promise<Map<string, string>> {
  // Typed by what it uses: the callback runs in the page, and this project has no DOM types.
  const ids = await page.$$eval('[data-section-id]', (els: { getAttribute(name: string): string | null }[]) =>
    els.map((el) => el.getAttribute('data-section-id') ?? ''),
  );
  const out = new Map<string, string>();
  for (const id of new Set(ids.filter((id) => id.split('/').length === 2 && !id.startsWith('/section')))) {
    const section = page.locator(`[data-section-id="${id}"]`).first();
    await scrollTo(section);
    const heading = section.locator('h1, h2').first();
    const shown = await heading.waitFor().then(
      () => true,
      () => false,
    );
    if (shown) out.set((await heading.innerText()).trim(), id);
  }
  return out;
}

/**
 * Scrolls a section into view. Redoc re-renders sections as others come into view, so the element
 * found can be replaced before the scroll: find it again, a few times.
 */
async function scrollTo(section: Locator): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await section.scrollIntoViewIfNeeded({ timeout: 5_000 });
      return;
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('not attached')) throw err;
    }
  }
}

/** Whether a visible element inside the section shows the text; waits for it to render. */
async function shows(section: Locator, text: string): Promise<boolean> {
  return section
    .getByText(text, { exact: false })
    .filter({ visible: true })
    .first()
    .waitFor()
    .then(
      () => true,
      () => false,
    );
}

/**
 * Opens the built page offline and checks it: the title renders, each tag has its section, and
 * visiting a tag shows each of its operations with the summary and the path, as a reader who
 * clicks the tag and scrolls would see them. Ends with a screenshot of the first operation.
 */
export async function checkRenderedDocs({
  htmlPath = REFERENCE_HTML_PATH,
  specPath = SPEC_PATH,
  screenshotPath = DOCS_SCREENSHOT_PATH,
  timeoutMs = 60_000,
  pageUrl,
}: {
  htmlPath?: string;
  specPath?: string;
  screenshotPath?: string;
  timeoutMs?: number;
  /** Open the page as a server serves it (its headers apply), instead of the file at htmlPath. */
  pageUrl?: string;
} = {}): Promise<DocsReport> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  const { title, operations } = expectedOperations(specPath);
  const problems: string[] = [];
  const refusedRequests: string[] = [];
  const openUrl = pageUrl ?? pathToFileURL(htmlPath).href;
  const origin = pageUrl === undefined ? undefined : new URL(pageUrl).origin;

  let browser: Browser | undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`docs check timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  const check = async (): Promise<DocsReport> => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // Generous: CI runs this next to other test files on two cores.
    context.setDefaultTimeout(20_000);
    // Offline, on purpose: anything the page asks from the network is refused.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:') || url.startsWith('blob:') || (origin !== undefined && url.startsWith(`${origin}/`)))
        return route.continue();
      refusedRequests.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    // What the page's content security policy refused shows here: something from elsewhere (Redoc's
    // logo on its CDN) is a request refused, as offline; anything of the page's own is a problem.
    page.on('console', (msg) => {
      if (msg.type() !== 'error' || !/content security policy/i.test(msg.text())) return;
      const external = /'(https?:\/\/[^']+)'/.exec(msg.text())?.[1];
      if (external !== undefined && (origin === undefined || !external.startsWith(`${origin}/`))) refusedRequests.push(external);
      else problems.push(`refused by the page's policy: ${msg.text()}`);
    });

    await page.goto(openUrl, { waitUntil: 'load' });
    await page.locator('#api-content').waitFor();
    await page.getByRole('heading', { name: title }).first().waitFor();

    const tags = await tagSections(page);
    for (const tag of new Set(operations.flatMap((op) => op.tags))) {
      if (!tags.has(tag)) problems.push(`tag "${tag}" has no section on the page`);
    }
    const report: DocsReport['operations'] = [];
    let firstSection: string | undefined;
    let openTag: string | undefined;
    for (const op of operations) {
      const tagId = op.tags.map((t) => tags.get(t)).find((id) => id !== undefined);
      const sectionId = tagId === undefined ? undefined : `${tagId}/${op.operationId.toLowerCase()}`;
      let rendered = false;
      if (tagId !== undefined && sectionId !== undefined) {
        if (openTag !== tagId) {
          await openHash(page, `#${tagId}`);
          await page.locator(`[data-section-id^="${tagId}/"]`).first().waitFor({ state: 'attached' });
          openTag = tagId;
        }
        // A tag's operation sections are all placed at once; a missing one is not coming.
        const section = page.locator(`[data-section-id="${sectionId}"]`).first();
        const present = await section.waitFor({ state: 'attached', timeout: 3_000 }).then(
          () => true,
          () => false,
        );
        if (present) {
          await scrollTo(section);
          const summaryShown = op.summary === '' || (await shows(section, op.summary));
          const pathShown = await shows(section, op.path);
          if (!summaryShown) problems.push(`operation ${op.operationId}: summary "${op.summary}" not shown`);
          if (!pathShown) problems.push(`operation ${op.operationId}: path ${op.path} not shown`);
          rendered = summaryShown && pathShown;
          if (rendered) firstSection ??= sectionId;
        }
      }
      if (!rendered && !problems.some((p) => p.startsWith(`operation ${op.operationId}:`))) {
        problems.push(`operation ${op.operationId} (${op.method} ${op.path}) is not on the page`);
      }
      const { tags: _tags, ...expected } = op;
      report.push({ ...expected, rendered });
    }

    // The screenshot shows the first operation, opened the way a reader would open it.
    if (firstSection) {
      await openHash(page, `#${firstSection}`);
      await page.locator(`[data-section-id="${firstSection}"]`).first().waitFor();
    }
    await page.waitForTimeout(300);
    await mkdir(dirname(screenshotPath), { recursive: true });
    await page.screenshot({ path: screenshotPath });
    return { title, operations: report, problems, refusedRequests: [...new Set(refusedRequests)], screenshotPath };
  };
  const checking = check();
  checking.catch(() => {}); // settled by the race below; a late failure after a timeout is not news
  try {
    return await Promise.race([checking, deadline]);
  } finally {
    clearTimeout(timer);
    await browser?.close().catch(() => {});
  }
}
