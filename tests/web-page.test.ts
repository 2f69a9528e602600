/**
 * The page in a real browser: Debian's Chromium (through playwright-core) with WebGPU on its
 * bundled SwiftShader loads the page from `npm run web`'s server. SwiftShader is a software adapter,
 * so the page computes on the CPU unless the address insists (?backend=webgpu): the CPU path and
 * its message; on WebGPU, the hidden mass and a soft beam's stiffness recovered from the rendered
 * video; progress from the first moment and both videos playing in step while the fit runs; a GIF
 * given as the target (file chooser and drag and drop) after the visitor names its scene, a poor
 * fit, bad files explained in words. Screenshots are written to test-artifacts/. With CI=true a
 * missing browser fails instead of skipping.
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
if (!haveBrowser && process.env.CI === "true")
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does) to run the browser tests.`);

interface PageState {
  phase: string;
  backend: string;
  adapter: string;
  backendNote: string;
  estimate: number | null;
  losses: number[];
  error: string | null;
  verdict: string | null;
  progress: string;
  longestPauseMs: number | null;
}

const artefacts = join(import.meta.dirname, "..", "test-artifacts");

/**
 * A demo scene's video with its parameter at `value`, rendered by gradsim on the CPU in Node and written as a GIF (256
 * colours): a target made outside the page.
 */
async function sceneGif(scene: string, value: number): Promise<Buffer> {
  await init({ backend: "cpu" });
  const video = await renderVideo(sceneById(scene), DEFAULT_SETTINGS, value).data();
  const { frames, size } = DEFAULT_SETTINGS;
  const rasters = Array.from({ length: frames }, (_, k) => {
    const rgba = new Uint8ClampedArray(size * size * 4);
    for (let i = 0; i < size * size; i++) {
      for (let c = 0; c < 3; c++)
        rgba[4 * i + c] = Math.round(Math.min(1, Math.max(0, video[(k * size * size + i) * 3 + c]!)) * 255);
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
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-angle=swiftshader", "--no-sandbox"],
  });
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
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`the page did not finish in ${timeoutMs / 1000} s (phase ${s.phase}, ${s.losses.length} steps)`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const idle = (page: Page) =>
  page.waitForFunction(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase === "idle");

/** A hash of a canvas's pixels (to tell whether what it shows changed). */
const pixelHash = (page: Page, id: string) =>
  page.evaluate((canvasId) => {
    const c = document.getElementById(canvasId) as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    let h = 2166136261;
    for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i]!, 16777619);
    return h >>> 0;
  }, id);

/** Drop files on the page as a visitor drags them from their desktop (a drop event carrying a DataTransfer). */
async function dropFiles(page: Page, files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
  const transfer = await page.evaluateHandle(
    (fs) => {
      const d = new DataTransfer();
      for (const f of fs) d.items.add(new File([new Uint8Array(f.bytes)], f.name, { type: f.mimeType }));
      return d;
    },
    files.map((f) => ({ name: f.name, mimeType: f.mimeType, bytes: [...f.buffer] })),
  );
  await page.dispatchEvent("body", "drop", { dataTransfer: transfer });
}

/** Pixels of a canvas that differ from the scene's background colour. */
const objectPixels = (page: Page, id: string) =>
  page.evaluate((canvasId) => {
    const c = document.getElementById(canvasId) as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    const bg = [0.93, 0.94, 0.96].map((v) => v * 255);
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i]! - bg[0]!) + Math.abs(d[i + 1]! - bg[1]!) + Math.abs(d[i + 2]! - bg[2]!) > 30) n++;
    return n;
  }, id);

describe.skipIf(!haveBrowser)("the page in Chromium", () => {
  it("recovers the hidden mass on WebGPU and shows the object", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${url}?scene=rigid&truth=2.5&steps=20&autorun=1&backend=webgpu`);
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(errors).toEqual([]);
    expect(s.backend).toBe("webgpu");
    expect(await page.textContent("#backend")).toMatch(
      /^Computing on WebGPU \(google swiftshader\), as this page's address asks/,
    );
    expect(Math.abs(s.estimate! - 2.5) / 2.5).toBeLessThan(0.01);
    expect(s.losses[s.losses.length - 1]!).toBeLessThan(s.losses[0]! / 100);
    expect(await objectPixels(page, "target")).toBeGreaterThan(10);
    expect(await objectPixels(page, "current")).toBeGreaterThan(10);
    await page.screenshot({ path: join(artefacts, "web-page.png"), fullPage: true });
    await page.close();
  }, 500_000);

  it("recovers a soft beam's stiffness, the second scene", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=soft-beam&truth=1000&steps=20&autorun=1&backend=webgpu`);
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(s.backend).toBe("webgpu");
    expect(Math.abs(s.estimate! - 1000) / 1000).toBeLessThan(0.01);
    expect(await objectPixels(page, "current")).toBeGreaterThan(10);
    await page.screenshot({ path: join(artefacts, "web-page-soft-beam.png"), fullPage: true });
    await page.close();
  }, 500_000);

  it("computes on the CPU when the only adapter is a software one, and says so", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${url}?scene=rigid&truth=2.5&steps=20&autorun=1`);
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(errors).toEqual([]);
    expect(s.backend).toBe("cpu");
    expect(s.adapter).toBe("google swiftshader");
    expect(await page.textContent("#backend")).toMatch(
      /^Computing on the CPU: this browser's only WebGPU adapter \(google swiftshader\) is a software one/,
    );
    // The way to insist, as a link that keeps the rest of the address.
    const insist = new URL((await page.getAttribute("#backend a", "href"))!, url);
    expect(Object.fromEntries(insist.searchParams)).toEqual({
      scene: "rigid",
      truth: "2.5",
      steps: "20",
      autorun: "1",
      backend: "webgpu",
    });
    expect(Math.abs(s.estimate! - 2.5) / 2.5).toBeLessThan(0.01);
    expect(await page.textContent("#status")).toMatch(/^Done: 20 steps in [\d.]+ s on the CPU\.$/);
    await page.screenshot({ path: join(artefacts, "web-page-cpu.png"), fullPage: true });
    await page.close();
  }, 200_000);

  it("shows progress from the start and plays the target and the estimate's video side by side, in step", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&truth=2.5&steps=120`);
    await idle(page);
    // What the visitor sees: the status line's text at every animation frame, from the click on.
    await page.evaluate(() => {
      const w = window as unknown as { seen: [number, string][]; clicked: number };
      w.seen = [];
      document.getElementById("run")!.addEventListener(
        "click",
        () => {
          w.clicked = performance.now();
        },
        { capture: true },
      );
      // Stamped when read, not with the frame's start time, which can precede a click handled within that frame.
      const frame = () => {
        w.seen.push([performance.now(), document.getElementById("status")!.textContent!]);
        if (w.seen.length < 5000) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    await page.click("#run");
    expect(await page.isVisible("#progress")).toBe(true);
    await page.waitForFunction(
      () => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.losses.length > 0,
    );
    // While it fits: both canvases play (their pixels change between reads), the estimate's video is re-rendered as the
    // estimate moves.
    const target = new Set<number>(),
      current = new Set<number>(),
      captions = new Set<string>(),
      statuses = new Set<string>();
    for (let k = 0; k < 8 && (await stateOf(page)).phase === "recovering"; k++) {
      target.add(await pixelHash(page, "target"));
      current.add(await pixelHash(page, "current"));
      // The status line and the caption with the phase read at the same moment: the fit may end between two reads
      // ("Done: …", the final estimate's caption).
      const [phase, status, caption] = await page.evaluate(() => [
        (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase,
        document.getElementById("status")!.textContent!,
        document.getElementById("current-caption")!.textContent!,
      ]);
      if (phase === "recovering") {
        statuses.add(status!);
        captions.add(caption!);
      }
      if (k === 2) await page.screenshot({ path: join(artefacts, "web-page-running.png"), fullPage: true });
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(target.size).toBeGreaterThan(1);
    expect(current.size).toBeGreaterThan(1);
    // Until the first estimate is rendered the caption is the page's placeholder; once the fit has ended the last
    // estimate's video is captioned without a step (both may be read while the phase still says "recovering").
    const stepCaptions = [...captions].filter((c) => /^gradsim's video at mass ≈ [\d.]+ kg \(step \d+\)$/.test(c));
    expect(
      [...captions].filter(
        (c) =>
          !stepCaptions.includes(c) &&
          c !== "gradsim's video at the current estimate" &&
          !/^gradsim's video at mass ≈ [\d.]+ kg$/.test(c),
      ),
    ).toEqual([]);
    expect(stepCaptions.length).toBeGreaterThan(1);
    // (The ones that do not read as a step, listed on failure.)
    expect(
      [...statuses].filter((t) => !/^Step \d+ of 120 · loss [\d.e+-]+ · mass ≈ [\d.]+ kg · [\d.]+ s$/.test(t)),
    ).toEqual([]);
    const s = await finished(page);
    expect(s.phase).toBe("done");
    expect(await page.getAttribute("#progress", "value")).toBe("1");
    // The status line spoke at once — rendering the target, then compiling with a clock — not only once compilation was
    // over.
    const { seen, clicked } = await page.evaluate(() => {
      const w = window as unknown as { seen: [number, string][]; clicked: number };
      return { seen: w.seen, clicked: w.clicked };
    });
    const kinds = seen
      .filter(([t]) => t >= clicked)
      .map(
        ([t, text]) =>
          [
            t - clicked,
            text.replace(/^(Rendering the target video|Compiling the simulation|Step|Done).*$/, "$1"),
          ] as const,
      );
    const firstOf = (kind: string) => kinds.findIndex(([, k]) => k === kind);
    expect(firstOf("Rendering the target video")).toBeGreaterThanOrEqual(0);
    expect(kinds[firstOf("Rendering the target video")]![0]).toBeLessThan(2000);
    expect(firstOf("Compiling the simulation")).toBeGreaterThan(firstOf("Rendering the target video"));
    expect(firstOf("Step")).toBeGreaterThan(firstOf("Compiling the simulation"));
    // Converged, the two videos are the same video: read in one go, both canvases show the same frame.
    const same = await page.evaluate(() => {
      const px = (id: string) => {
        const c = document.getElementById(id) as HTMLCanvasElement;
        return c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      };
      const a = px("target"),
        b = px("current");
      let worst = 0;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      return worst;
    });
    expect(same).toBeLessThanOrEqual(2);
    await page.close();
  }, 200_000);

  it("stops a fit when the visitor asks, announcing no result", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&truth=2.5&steps=200&autorun=1`);
    await page.waitForFunction(
      () => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.losses.length > 3,
    );
    await page.click("#stop");
    await page.waitForFunction(
      () => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.phase === "stopped",
    );
    const s = await stateOf(page);
    expect(s.losses.length).toBeLessThan(150);
    expect(await page.textContent("#status")).toMatch(
      /^Stopped after \d+ of 200 steps at mass ≈ [\d.]+ kg — not a result: the fit had not converged\.$/,
    );
    expect(await page.textContent("#estimate")).toBe("");
    expect(await page.textContent("#error")).toBe("");
    expect(await page.isHidden("#stop")).toBe(true);
    expect(await page.isEnabled("#run")).toBe(true);
    await page.close();
  }, 120_000);

  it("recovers a mass from a GIF chosen as the target once the visitor names its scene", async () => {
    // The target made outside the page: gradsim on the CPU in Node renders a 3.2 kg box, written as a GIF (256
    // colours).
    const gif = await sceneGif("rigid", 3.2);
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=20`);
    await idle(page);
    await page.setInputFiles("#file", { name: "box.gif", mimeType: "image/gif", buffer: gif });
    await page.waitForFunction(() => /now choose the scene/.test(document.getElementById("status")!.textContent!));
    // Shown at once, as gradsim will see it; not fitted until the visitor says which scene it shows.
    expect(await page.textContent("#target-caption")).toBe("your video (30 frames, 32×32), as gradsim sees it");
    expect(await objectPixels(page, "target")).toBeGreaterThan(10);
    expect(await page.isDisabled("#run-file")).toBe(true);
    await page.selectOption("#file-scene", "rigid");
    // The chosen scene's own video plays beside it, to compare.
    await page.waitForFunction(() =>
      /your video should look like this$/.test(document.getElementById("current-caption")!.textContent!),
    );
    expect(await page.textContent("#current-caption")).toMatch(
      /^“rigid body: mass from a known push” as gradsim films it \(mass 2.5 kg\)/,
    );
    expect(await objectPixels(page, "current")).toBeGreaterThan(10);
    await page.screenshot({ path: join(artefacts, "web-page-scene-choice.png"), fullPage: true });
    await page.click("#run-file");
    const s = await finished(page);
    expect(s.error).toBeNull();
    expect(s.verdict).toBe("fits");
    // GIF's palette: the target differs slightly from the render.
    expect(Math.abs(s.estimate! - 3.2) / 3.2).toBeLessThan(0.03);
    expect(await page.textContent("#estimate")).toMatch(/^Recovered mass = 3\.\d+ kg$/);
    await page.close();
  }, 200_000);

  it("gives no number for a video dropped on the page that is not the chosen scene: a poor-fit verdict", async () => {
    // The beam's video fitted as the box: nothing in it looks like the box's motion.
    const gif = await sceneGif("soft-beam", 1000);
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=10&fileScene=rigid`);
    await idle(page);
    await dropFiles(page, [{ name: "beam.gif", mimeType: "image/gif", buffer: gif }]);
    await page.click("#run-file");
    const s = await finished(page);
    expect(s.verdict).toBe("poor");
    expect(await page.textContent("#estimate")).toMatch(/^No estimate: this video is not/);
    expect(await page.textContent("#verdict")).toMatch(
      /poor fit .* means nothing\. Check that you chose the scene your video shows/,
    );
    await page.screenshot({ path: join(artefacts, "web-page-poor-fit.png"), fullPage: true });
    await page.close();
  }, 200_000);

  it("explains a bad file in words, with what to do, as soon as it arrives", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=rigid&steps=5&fileScene=rigid`);
    await idle(page);
    const explained = async () => {
      await page.waitForFunction(() => (globalThis as unknown as { gradsimDemo: PageState }).gradsimDemo.error);
      const text = (await page.textContent("#error"))!;
      // Written for a visitor: no stack frames, source files, function names or command lines.
      expect(text).not.toMatch(/\bat \S+:\d+|\.ts\b|\.js\b|decodeGif|Error:|--\w/);
      expect(await page.isDisabled("#run-file")).toBe(true);
      return text;
    };
    await dropFiles(page, [{ name: "notes.gif", mimeType: "image/gif", buffer: Buffer.from("this is not a GIF") }]);
    expect(await explained()).toMatch(
      new RegExp(
        /^“notes\.gif” could not be read as an animated GIF \(not a GIF file .*\)\. /.source +
          /Check that the file opens in an image viewer, or export the video again as a GIF or as PNG frames\.$/.source,
      ),
    );
    await dropFiles(page, [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") }]);
    expect(await explained()).toMatch(
      /^“notes\.txt” is not a GIF or PNG image\. Give one animated GIF, or the video's frames as PNG files/,
    );
    await page.close();
  }, 120_000);

  it("says in words what it does with an address it does not understand", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?scene=nope&backend=gpu`);
    await idle(page);
    expect(await page.textContent("#backend")).toMatch(
      new RegExp(
        /^The address asks for backend “gpu”, which this page does not know \(it knows cpu and webgpu\); /.source +
          /choosing for you\. Computing on the CPU/.source,
      ),
    );
    expect(await page.textContent("#error")).toBe(
      "The address names a scene “nope” that this page does not have (it has rigid, soft-beam).",
    );
    expect(await page.inputValue("#scene")).toBe("rigid");
    await page.close();
  }, 60_000);
});
