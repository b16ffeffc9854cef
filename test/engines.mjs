import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromeLauncher } from '@web/test-runner-chrome';
import { WebdriverLauncher } from '@web/test-runner-webdriver';
import puppeteer from 'puppeteer-core';

/**
 * The three browser engines the suite runs in, and the few things a test asks of the browser
 * itself (a key chord, the OAuth popup) done the way each engine's driver can:
 * - Chromium and Firefox through puppeteer (Chrome DevTools Protocol; WebDriver BiDi for Firefox);
 * - WebKit (WebKitGTK's MiniBrowser) through WebKitWebDriver, which has no headless mode, so it
 *   runs on its own Xvfb display.
 * Paths default to Debian's packages (chromium, firefox-esr, webkit2gtk-driver, xvfb).
 */

export const ENGINES = ['chromium', 'firefox', 'webkit'];

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
// Debian keeps MiniBrowser in the library folder of the machine's architecture.
const MULTIARCH = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch];
const MINIBROWSER =
  process.env.MINIBROWSER_PATH ??
  ['4.1', '4.0'].map((api) => `/usr/lib/${MULTIARCH}/webkit2gtk-${api}/MiniBrowser`).find((path) => existsSync(path)) ??
  'MiniBrowser';

/** Starts a helper process and stops it with this one. */
function startHelper(command, args, env = {}) {
  const child = spawn(command, args, { stdio: 'ignore', env: { ...process.env, ...env } });
  // A missing program is an 'error' event, not an exception; keep it for the readiness check.
  child.on('error', (error) => {
    child.startError = error;
  });
  const stop = () => child.exitCode === null && child.kill();
  process.once('exit', stop);
  return { child, stop };
}

async function waitForDriver(url, child) {
  for (let i = 0; i < 100; i++) {
    if (child.startError) {
      throw new Error(
        `WebKitWebDriver did not start (${child.startError.message}); on Debian: apt-get install webkit2gtk-driver xvfb`,
      );
    }
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited (${child.exitCode}) before it answered`);
    try {
      if ((await fetch(`${url}/status`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`WebKitWebDriver did not answer at ${url}`);
}

/**
 * Xvfb and WebKitWebDriver for the WebKit runs, on a display and port derived from `port` so that
 * several runs on one machine do not meet. Answers a function that stops both.
 */
export async function startWebKitDriver(port) {
  const display = `:${port}`;
  const xvfb = startHelper('Xvfb', [display, '-nolisten', 'tcp', '-screen', '0', '1280x1024x24']);
  const driver = startHelper('WebKitWebDriver', [`--port=${port}`, '--host=127.0.0.1'], { DISPLAY: display });
  await waitForDriver(`http://127.0.0.1:${port}`, driver.child);
  return () => {
    driver.stop();
    xvfb.stop();
  };
}

/**
 * WebKit through WebDriver, named after its engine rather than its browser (MiniBrowser).
 * web-test-runner types a string over WebDriver by holding every key down and then letting them
 * all go, so a character that comes twice (the second space of "a b c") is lost: this launcher
 * types one key at a time.
 */
class WebKitLauncher extends WebdriverLauncher {
  async initialize(config) {
    await super.initialize(config);
    this.name = 'WebKit';
  }

  async sendKeys(sessionId, keys) {
    for (const key of keys) await super.sendKeys(sessionId, [key]);
  }
}

/** The launcher for each engine named. */
export function launchers(engines, { webkitDriverPort }) {
  return engines.map((engine) => {
    switch (engine) {
      case 'chromium':
        return chromeLauncher({
          launchOptions: {
            executablePath: CHROMIUM,
            headless: true,
            args: [
              '--no-sandbox',
              '--disable-gpu',
              '--disable-dev-shm-usage',
              '--disable-background-networking',
              '--disable-component-update',
              '--no-first-run',
            ],
          },
        });
      case 'firefox':
        return chromeLauncher({
          puppeteer,
          launchOptions: { browser: 'firefox', executablePath: FIREFOX, headless: true },
        });
      case 'webkit':
        return new WebKitLauncher({
          hostname: '127.0.0.1',
          port: webkitDriverPort,
          logLevel: 'error',
          capabilities: {
            browserName: 'MiniBrowser',
            'wdio:enforceWebDriverClassic': true,
            'webkitgtk:browserOptions': {
              binary: MINIBROWSER,
              // Without the second flag WebKit refuses window.open from a script that the
              // driver's click started, and the OAuth popup never opens.
              args: ['--automation', '--javascript-can-open-windows-automatically=true'],
            },
          },
        });
      default:
        throw new Error(`Unknown browser engine ${engine}; use ${ENGINES.join(', ')}`);
    }
  });
}

/** The engine a test session runs in. */
export function engineOf(session) {
  if (session.browser.type === 'webdriver') return 'webkit';
  return /firefox/i.test(session.browser.name) ? 'firefox' : 'chromium';
}

/** WebDriver's key codes for the modifier names a test uses. */
const WEBDRIVER_KEYS = { Control: '\uE009', Shift: '\uE008', Alt: '\uE00A', Meta: '\uE03D' };

/**
 * Presses keys together (`['Control', 'a']`) and lets them go in reverse order: what
 * web-test-runner's `sendKeys({down})` does in puppeteer, which its WebDriver support lacks.
 */
export async function pressChord(session, keys) {
  if (session.browser.type === 'webdriver') {
    const codes = keys.map((key) => WEBDRIVER_KEYS[key] ?? key);
    await session.browser.driver.performActions([
      {
        type: 'key',
        id: 'keyboard',
        actions: [
          ...codes.map((value) => ({ type: 'keyDown', value })),
          ...codes.toReversed().map((value) => ({ type: 'keyUp', value })),
        ],
      },
    ]);
    await session.browser.driver.releaseActions();
    return true;
  }
  const { keyboard } = session.browser.getPage(session.id);
  for (const key of keys) await keyboard.down(key);
  for (const key of keys.toReversed()) await keyboard.up(key);
  return true;
}

const isConsentPage = (url) => url.includes('/local-oauth/');

/**
 * Finds the OAuth popup the test page opened (a real window, on the service's origin, so the
 * page itself cannot reach into it) and presses Allow or Deny on the local consent page, or
 * closes the window, or (`find`) only waits until the consent page is there. Answers the popup's
 * URL, for checks on what it carries.
 */
export async function consentInPopup(session, decision, detached = false) {
  if (session.browser.type === 'webdriver') return consentInWebDriverPopup(session.browser.driver, decision);
  const page = session.browser.getPage(session.id);
  // Firefox (WebDriver BiDi) has no Target.opener(); one test page runs at a time per engine,
  // so the consent page that is open is this page's popup. A popup a consent page cut from its
  // opener (`detached`, Cross-Origin-Opener-Policy) has none either.
  const opener = engineOf(session) === 'chromium' && !detached ? page.target() : undefined;
  const target = await page
    .browser()
    .waitForTarget((t) => (!opener || t.opener() === opener) && isConsentPage(t.url()), { timeout: 10_000 });
  const popup = await target.page();
  const url = popup.url();
  if (decision === 'find') return url;
  if (decision === 'close') {
    await popup.close();
    return url;
  }
  const button = `button[value="${decision}"]`;
  await popup.waitForSelector(button);
  // Pressing the button submits the form; the callback page then closes the window itself.
  await popup.click(button);
  return url;
}

async function consentInWebDriverPopup(driver, decision) {
  const main = await driver.getWindowHandle();
  let url;
  await driver.waitUntil(
    async () => {
      for (const handle of await driver.getWindowHandles()) {
        if (handle === main) continue;
        await driver.switchToWindow(handle);
        const current = await driver.getUrl();
        if (isConsentPage(current)) {
          url = current;
          return true;
        }
      }
      await driver.switchToWindow(main);
      return false;
    },
    { timeout: 10_000, interval: 100, timeoutMsg: 'the test page opened no OAuth consent window' },
  );
  try {
    if (decision === 'find') return url;
    if (decision === 'close') {
      await driver.closeWindow();
    } else {
      const button = await driver.$(`button[value="${decision}"]`);
      await button.waitForExist({ timeout: 10_000 });
      await button.click();
    }
  } finally {
    // The driver acts on one window at a time: the test page's again, whatever happened above.
    await driver.switchToWindow(main);
  }
  return url;
}

/**
 * Closes every window of the test page's browser but the test pages themselves, and gives the
 * focus back to this one: a sign-in window its consent page cut from its opener
 * (Cross-Origin-Opener-Policy) is one no script of the page can close, and in Firefox a window
 * left open keeps the focus that later tests' key presses need.
 */
export async function closeOtherWindows(session) {
  if (session.browser.type === 'webdriver') {
    const { driver } = session.browser;
    const main = await driver.getWindowHandle();
    for (const handle of await driver.getWindowHandles()) {
      if (handle === main) continue;
      try {
        await driver.switchToWindow(handle);
        await driver.closeWindow();
      } catch (error) {
        // It closed itself since the list was read (the return page does): nothing left to close.
        if (!/no such window/i.test(String(error?.message ?? error))) throw error;
      }
    }
    await driver.switchToWindow(main);
    return true;
  }
  const page = session.browser.getPage(session.id);
  for (const other of await page.browser().pages()) {
    // A window may close itself meanwhile (the return page does, where the browser lets it).
    if (other !== page && !other.url().includes('wtr-session-id')) await other.close().catch(() => undefined);
  }
  await page.bringToFront();
  return true;
}
