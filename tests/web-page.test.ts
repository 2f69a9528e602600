/**
 * The page in a real browser: Debian's Chromium (through playwright-core) with WebGPU on its
 * bundled SwiftShader loads the page from `npm run web`'s server, reports the WebGPU backend,
 * recovers the hidden mass from the rendered video, shows the object on its canvases, recovers
 * a soft beam's stiffness, and a mass from a GIF dropped in as the target. Screenshots are
 * written to test-artifacts/. With CI=true a missing browser fails instead of skipping.
 */
import { existsSync, mkdirSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeGif, init } from "../src/index.js";
import { DEFAULT_SETTINGS, renderVideo, sceneById } from "../web/demo.js";
import { servePage } from "../web/serve.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does) to run the browser tests.`);

interface PageState { phase: string; backend: string; adapter: string; estimate: number | null; losses: number[]; error: string | null; verdict: string | null }

const artefacts = join(import.meta.dirname, "..", "test-artifacts");

/** A demo scene's video with its parameter at `value`, rendered by gradsim on the CPU in Node and written as a GIF (256 colours): a target made outside the page. */
async function sceneGif(scene: string, value: number): Promise<Buffer> {
  await init({ backend: "cpu" });
  const video = await renderVideo(sceneById(scene), DEFAULT_SETTINGS, value).data();
  const { frames, size } = DEFAULT_SETTINGS;
  const rasters = Array.from({ length: frames }, (_, k) => {
    const rgba = new Uint8ClampedArray(size * size * 4);
    for (let i = 0; i < size * size; i++) {
      for (let c = 0; c < 3; c++) rgba[4 * i + c] = Math.round(Math.min(1, Math.max(0, video[(k * size * size + i) * 3 + c]!)) * 255);
      rgba[4 * i + 3] = 255;
    }
    return { width: size, height: size, rgba };
  });
  return Buffer.from(encodeGif(rasters));
}
let server: Server, url: string, browser: Browser;

beforeAll(async () => {
  if (!haveBrowser) return;
  mkdirSync(artefacts, { recursive: true });
  ({ server, url } = await servePage(0));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-angle=swiftshader", "--no-sandbox"] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

const stateOf = (page: Page) => page.evaluate(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo);

async function finished(page: Page, timeoutMs = 400_000): Promise<PageState> {
  const t0 = Date.now();
  for (;;) {
    const s = await stateOf(page);
    if (s.phase === "done" || s.phase === "error") return s;
    if (Date.now() - t0 > timeoutMs) throw new Error(`the page did not finish in ${timeoutMs / 1000} s (phase ${s.phase}, ${s.losses.length} steps)`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Pixels of a canvas that differ from the scene's background colour. */
const objectPixels = (page: Page, id: string) => page.evaluate((canvasId) => {
  const c = document.getElementById(canvasId) as HTMLCanvasElement;
  const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
  const bg = [0.93, 0.94, 0.96].map((v) => v * 255);
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]! - bg[0]!) + Math.abs(d[i + 1]! - bg[1]!) + Math.abs(d[i + 2]! - bg[2]!) > 30) n++;
  return n;
}, id);

describe.skipIf(!haveBrowser)("the page in Chromium", () => {
  it("recovers the hidden mass on WebGPU and shows the object", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${url}?scene=rigid&truth=2.5&steps=20&autorun=1`);
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(errors).toEqual([]);
    expect(s.backend).toBe("webgpu");
    expect(await page.textContent("#backend")).toMatch(/WebGPU/);
    expect(Math.abs(s.estimate! - 2.5) / 2.5).toBeLessThan(0.01);
    expect(s.losses[s.losses.length - 1]!).toBeLessThan(s.losses[0]! / 100);
    expect(await objectPixels(page, "target")).toBeGreaterThan(10);
    expect(await objectPixels(page, "current")).toBeGreaterThan(10);
    await page.screenshot({ path: join(artefacts, "web-page.png"), fullPage: true });
    await page.close();
  }, 500_000);

  it("recovers a soft beam's stiffness, the second scene", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=soft-beam&truth=1000&steps=20&autorun=1`);
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(s.backend).toBe("webgpu");
    expect(Math.abs(s.estimate! - 1000) / 1000).toBeLessThan(0.01);
    expect(await objectPixels(page, "current")).toBeGreaterThan(10);
    await page.screenshot({ path: join(artefacts, "web-page-soft-beam.png"), fullPage: true });
    await page.close();
  }, 500_000);

  it("recovers a mass from a GIF dropped in as the target", async () => {
    // The target made outside the page: gradsim on the CPU in Node renders a 3.2 kg box, written as a GIF (256 colours).
    const gif = await sceneGif("rigid", 3.2);
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=20`);
    await page.waitForFunction(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase === "idle");
    await page.setInputFiles("#file", { name: "box.gif", mimeType: "image/gif", buffer: gif });
    // Not until the visitor says which scene the video shows.
    expect(await page.isDisabled("#run-file")).toBe(true);
    await page.selectOption("#file-scene", "rigid");
    await page.click("#run-file");
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(s.verdict).toBe("fits");
    // GIF's palette and the float32 GPU render differ slightly from the CPU's video.
    expect(Math.abs(s.estimate! - 3.2) / 3.2).toBeLessThan(0.03);
    await page.close();
  }, 500_000);

  it("gives no number for a video that is not the chosen scene: a poor-fit verdict", async () => {
    // The beam's video fitted as the box: nothing in it looks like the box's motion.
    const gif = await sceneGif("soft-beam", 1000);
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=10&fileScene=rigid`);
    await page.waitForFunction(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase === "idle");
    await page.setInputFiles("#file", { name: "beam.gif", mimeType: "image/gif", buffer: gif });
    await page.click("#run-file");
    const s = await finished(page);
    expect(s.verdict).toBe("poor");
    expect(await page.textContent("#estimate")).toMatch(/^no estimate: this video is not/);
    expect(await page.textContent("#verdict")).toMatch(/poor fit .* means nothing/);
    await page.close();
  }, 500_000);

  it("explains a wrong file instead of failing silently", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=5&fileScene=rigid`);
    await page.waitForFunction(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase === "idle");
    await page.setInputFiles("#file", { name: "notes.gif", mimeType: "image/gif", buffer: Buffer.from("this is not a GIF") });
    await page.click("#run-file");
    const s = await finished(page);
    expect(s.phase).toBe("error");
    expect(await page.textContent("#error")).toMatch(/GIF/);
    await page.close();
  }, 120_000);
});
