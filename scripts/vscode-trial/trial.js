// Drives code-server (VS Code in the browser) in headless Chromium through
// playwright-core: opens a .gir file with a verifier error, waits for
// glow-lsp's diagnostic, opens the Problems panel, shows the hover of a
// value, and writes one screenshot per step. Used by scripts/vscode-trial.sh.
"use strict";

const { chromium } = require("playwright-core");

const [url, file, out] = process.argv.slice(2);

let page;

// Moves the cursor with Go to Line (`line:column`).
async function goto(p, where) {
  await p.keyboard.press("Control+G");
  await p.waitForTimeout(500);
  await p.keyboard.type(where);
  await p.keyboard.press("Enter");
  await p.waitForTimeout(500);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
  await page.waitForTimeout(4000);
  // Quick Open the file.
  await page.keyboard.press("Control+P");
  await page.waitForTimeout(800);
  await page.keyboard.type(file);
  await page.waitForTimeout(800);
  await page.keyboard.press("Enter");
  await page.waitForSelector(".monaco-editor .view-lines", { timeout: 30000 });
  // The server publishes diagnostics after didOpen: wait for a squiggle.
  await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 60000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: `${out}/1-diagnostic.png` });
  // The Problems panel lists the same text glow-opt prints.
  await page.keyboard.press("Control+Shift+M");
  await page.waitForTimeout(1500);
  const problems = await page.locator(".markers-panel").innerText().catch(() => "");
  console.log("problems panel: " + problems.replace(/\s+/g, " ").trim());
  await page.screenshot({ path: `${out}/2-problems.png` });
  // Edit the error away (incremental didChange): `%missing` on line 10 becomes `%in`.
  await page.keyboard.press("Escape");
  await page.locator(".monaco-editor .view-lines").first().click();
  await goto(page, "10:42");
  await page.keyboard.press("Shift+End");
  await page.keyboard.type("%in");
  await page.waitForSelector(".monaco-editor .squiggly-error", { state: "detached", timeout: 30000 });
  console.log("after the edit: no diagnostic");
  // Hover on %t in `relu @out %t` (line 9, column 18): type, live range, arena offset.
  await goto(page, "9:18");
  await page.keyboard.press("Control+K");
  await page.keyboard.press("Control+I");
  const hoverBox = page.locator(".monaco-hover-content", { hasText: "%t" }).first();
  await hoverBox.waitFor({ timeout: 30000 });
  await page.waitForTimeout(1000);
  console.log("hover: " + (await hoverBox.innerText()).replace(/\s+/g, " ").trim());
  await page.screenshot({ path: `${out}/3-hover.png` });
  await browser.close();
}

main().catch(async (e) => {
  console.error("trial failed: " + e.message);
  if (page) await page.screenshot({ path: `${out}/failed.png` }).catch(() => {});
  process.exit(1);
});
