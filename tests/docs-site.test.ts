/**
 * The documentation site as a reader gets it: `npm run docs` builds it (TypeDoc: the guides and
 * the API reference), a static server serves it, and Debian's Chromium (through playwright-core)
 * opens the front page, every guide and document and some API pages — each loads without a
 * script error, with its heading and the navigation TypeDoc's scripts draw. Every internal link
 * of every page (what the browser sees on the pages it opened, and the links in all 600-odd HTML
 * files) resolves to a file of the site, and its #anchor to an element of that page. With
 * CI=true a missing browser fails instead of skipping.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize, relative, sep } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.CI === "true")
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does) to run the browser tests.`);

const root = join(import.meta.dirname, "..");
const site = mkdtempSync(join(tmpdir(), "gradsim-docs-"));
const types: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};
let server: Server, base: string, browser: Browser | undefined;

beforeAll(async () => {
  const r = spawnSync(process.execPath, [join(root, "tools", "docs", "build.mjs"), "--out", site], {
    cwd: root,
    encoding: "utf8",
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`npm run docs failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  server = createServer((req, res) => {
    const path = normalize(join(site, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)));
    const file = path.endsWith(sep) ? join(path, "index.html") : path;
    if (!file.startsWith(site) || !existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  if (haveBrowser) browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}, 660_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
  rmSync(site, { recursive: true, force: true });
});

const htmlFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? htmlFiles(join(dir, e.name)) : e.name.endsWith(".html") ? [join(dir, e.name)] : [],
  );
const idsOf = new Map<string, Set<string>>();
/** The ids and names an anchor may point to in a page of the site. */
function anchorsOf(file: string): Set<string> {
  let ids = idsOf.get(file);
  if (!ids) {
    const html = readFileSync(file, "utf8");
    ids = new Set([...html.matchAll(/\s(?:id|name)="([^"]+)"/g)].map((m) => decodeHtml(m[1]!)));
    idsOf.set(file, ids);
  }
  return ids;
}
const decodeHtml = (s: string) =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#39;/g, "'");

/** Why a link from page `from` (a site path) does not resolve, or null. External links are not checked. */
function brokenLink(from: string, href: string): string | null {
  if (/^(https?:|mailto:|javascript:|data:)/.test(href) && !href.startsWith(base)) return null;
  const url = new URL(href, new URL(from, base));
  if (url.origin !== new URL(base).origin) return null;
  const path = decodeURIComponent(url.pathname);
  const file = join(site, path.endsWith("/") ? `${path}index.html` : path);
  if (!existsSync(file)) return `${href} → ${path} does not exist`;
  const anchor = decodeURIComponent(url.hash.slice(1));
  if (anchor && file.endsWith(".html") && !anchorsOf(file).has(anchor))
    return `${href} → no element #${anchor} in ${path}`;
  return null;
}

describe("the documentation site", () => {
  it("has the guides, the documents and the API reference", () => {
    const documents = readdirSync(join(site, "documents"));
    for (const page of [
      "Quickstart.html",
      "Transforms_for_JAX_users.html",
      "Your_own_video.html",
      "Models.html",
      "Rendering.html",
      "RISP.html",
      "Datasets_on_many_machines.html",
      "results_README.html",
    ]) {
      expect(documents).toContain(page);
    }
    expect(readdirSync(join(site, "functions"))).toEqual(
      expect.arrayContaining(["gradsim.grad.html", "gradsim.vmap.html", "gradsim.jit.html"]),
    );
  });

  it("every internal link of every page resolves, anchors included", () => {
    const pages = htmlFiles(site);
    expect(pages.length).toBeGreaterThan(100);
    const broken: string[] = [];
    let links = 0,
      anchored = 0;
    for (const file of pages) {
      const from = relative(site, file).split(sep).join("/");
      for (const m of readFileSync(file, "utf8").matchAll(/\shref="([^"]+)"/g)) {
        const href = decodeHtml(m[1]!);
        links++;
        if (href.includes("#") && !/^https?:/.test(href)) anchored++;
        const why = brokenLink(from, href);
        if (why) broken.push(`${from}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
    // The check saw the site's links (a pattern that matched nothing would pass vacuously).
    expect(links).toBeGreaterThan(5000);
    expect(anchored).toBeGreaterThan(100);
    // And it can fail: a missing page and a missing anchor are reported.
    expect(brokenLink("documents/Quickstart.html", "Nope.html")).toMatch(/does not exist/);
    expect(brokenLink("documents/Quickstart.html", "Models.html#no-such-heading")).toMatch(
      /no element #no-such-heading/,
    );
    expect(brokenLink("documents/Quickstart.html", "Models.html")).toBeNull();
  });

  it.skipIf(!haveBrowser)(
    "Chromium opens the pages without errors, and the links it sees resolve",
    async () => {
      const documents = readdirSync(join(site, "documents")).map((f) => `documents/${f}`);
      const pages = [
        "index.html",
        "modules.html",
        ...documents,
        "modules/gradsim.html",
        "functions/gradsim.grad.html",
        "classes/gradsim.Array.html",
        "modules/gradsim.sysid.html",
      ];
      const page = await browser!.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
      const broken: string[] = [];
      for (const path of pages) {
        const response = await page.goto(base + path, { waitUntil: "load" });
        expect(response?.status(), path).toBe(200);
        expect((await page.locator("h1").first().textContent())?.trim(), `${path} has a heading`).toBeTruthy();
        // The navigation tree is drawn by TypeDoc's script from its compressed index.
        await page.waitForFunction(() => document.querySelectorAll(".tsd-navigation a").length > 10, undefined, {
          timeout: 20_000,
        });
        const hrefs = await page.evaluate(() =>
          [...document.querySelectorAll("a[href]")].map((a) => (a as HTMLAnchorElement).href),
        );
        for (const href of hrefs) {
          const why = brokenLink(path, href);
          if (why) broken.push(`${path}: ${why}`);
        }
      }
      expect(errors).toEqual([]);
      expect([...new Set(broken)]).toEqual([]);
      await page.close();
    },
    300_000,
  );
});
