/**
 * The page: pick a scene and its hidden value, render the "observed" video, and watch gradsim
 * recover the value from the pixels — loss curve, target and current frames, the estimate — on
 * navigator.gpu (the CPU backend where the browser has no WebGPU, said on the page). A visitor can
 * drop a GIF or PNG frames as the target instead.
 *
 * A dropped video is fitted only to the scene the visitor says it shows, and the page ends with a
 * verdict: a video the estimate does not explain gets no number announced.
 *
 * URL parameters (used by the end-to-end test): ?scene=rigid&truth=2.5&steps=30&autorun=1&backend=cpu|webgpu&fileScene=rigid.
 * The page's state is mirrored on window.gradsimDemo for scripts.
 */
import { decodeGif, devices, init, linePlot, type Array, type Frame } from "gradsim";
import { DEFAULT_SETTINGS, EXPLAINED_NEEDED, recover, renderVideo, SCENES, sceneById, videoFromFrames, type DemoScene, type DemoSettings } from "./demo.js";

interface PageState {
  phase: "starting" | "idle" | "rendering" | "recovering" | "done" | "error";
  backend: string;
  adapter: string;
  truth: number | null;
  estimate: number | null;
  losses: number[];
  seconds: number | null;
  error: string | null;
  /** "fits" or "poor": whether the estimate explains the video (see DemoVerdict). */
  verdict: string | null;
}
const state: PageState = { phase: "starting", backend: "", adapter: "", truth: null, estimate: null, losses: [], seconds: null, error: null, verdict: null };
(globalThis as { gradsimDemo?: PageState }).gradsimDemo = state;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const query = new URLSearchParams(location.search);

/** Draw the last frame of a [frames, H, W, 3] video into a canvas. */
async function showLastFrame(canvas: HTMLCanvasElement, video: Array): Promise<void> {
  const [frames, h, w] = video.shape as [number, number, number, number];
  const data = await video.data();
  const img = new ImageData(w, h), o = (frames - 1) * h * w * 3;
  for (let i = 0; i < w * h; i++) {
    for (let c = 0; c < 3; c++) img.data[4 * i + c] = Math.round(Math.min(1, Math.max(0, data[o + 3 * i + c]!)) * 255);
    img.data[4 * i + 3] = 255;
  }
  canvas.width = w; canvas.height = h;
  canvas.getContext("2d")!.putImageData(img, 0, 0);
}

function showLosses(losses: readonly number[]): void {
  const canvas = $<HTMLCanvasElement>("plot");
  const r = linePlot([{ y: [...losses], label: "image MSE" }], { width: canvas.width, height: canvas.height, logY: true, xLabel: "step", yLabel: "loss" });
  canvas.getContext("2d")!.putImageData(new ImageData(new Uint8ClampedArray(r.rgba), r.width, r.height), 0, 0);
}

const fmt = (x: number) => x.toPrecision(4);

function settings(): DemoSettings {
  const steps = Number($<HTMLInputElement>("steps").value);
  if (!(Number.isInteger(steps) && steps >= 1 && steps <= 200)) throw new Error(`steps must be a whole number from 1 to 200, got ${$<HTMLInputElement>("steps").value}`);
  return { ...DEFAULT_SETTINGS, steps };
}

/** A dropped video can be fitted only once the visitor has said which scene it shows. */
const canRunFile = () => picked.length > 0 && $<HTMLSelectElement>("file-scene").value !== "";
const busy = (on: boolean) => { for (const id of ["run", "run-file", "scene", "file-scene", "truth", "steps"]) $<HTMLInputElement>(id).disabled = on || (id === "run-file" && !canRunFile()); };

async function run(scene: DemoScene, s: DemoSettings, target: () => Promise<Array>, truth: number | null): Promise<void> {
  busy(true);
  Object.assign(state, { phase: "rendering", truth, estimate: null, losses: [], seconds: null, error: null, verdict: null });
  $("error").textContent = "";
  const u = scene.unknown;
  try {
    $("status").textContent = "rendering the target video (the first run compiles the GPU kernels)…";
    const video = await target();
    await showLastFrame($("target"), video);
    state.phase = "recovering";
    $("status").textContent = `recovering ${u.name} from ${s.frames} frames at ${s.size}² pixels, starting from ${u.initial} ${u.unit}…`;
    const r = await recover(scene, s, video, async (st) => {
      state.losses.push(st.loss);
      state.estimate = st.estimate;
      $("estimate").textContent = `step ${st.step}: ${u.name} ≈ ${fmt(st.estimate)} ${u.unit}${truth !== null ? ` (hidden: ${fmt(truth)} ${u.unit})` : ""}`;
      showLosses(state.losses);
      if (st.step % 5 === 0) await showLastFrame($("current"), renderVideo(scene, s, st.estimate));
      await new Promise((resolve) => setTimeout(resolve, 0)); // let the page repaint
    });
    await showLastFrame($("current"), renderVideo(scene, s, r.estimate));
    Object.assign(state, { phase: "done", estimate: r.estimate, seconds: r.seconds, verdict: r.verdict.status });
    const err = truth !== null ? `, error ${(100 * Math.abs(r.estimate - truth) / truth).toFixed(2)}%` : "";
    const explained = `the estimate's video explains ${(100 * r.verdict.explained).toFixed(1)}% of the target's difference from an empty background`;
    if (r.verdict.status === "fits") {
      $("estimate").textContent = `recovered ${u.name} = ${fmt(r.estimate)} ${u.unit}${truth !== null ? ` (hidden: ${fmt(truth)} ${u.unit}${err})` : ""}`;
      $("verdict").textContent = `Verdict: fits — ${explained}.`;
    } else {
      $("estimate").textContent = `no estimate: this video is not "${scene.title}" as gradsim simulates it`;
      $("verdict").textContent = `Verdict: poor fit — ${explained} (a fit needs ${100 * EXPLAINED_NEEDED}%). The best ${u.name} found, ${fmt(r.estimate)} ${u.unit}, means nothing: ` +
        "the video must show the chosen scene's object, filmed as the scene's camera films it. For your own footage, describe it in a scene file and run gradsim fit in Node.";
    }
    $("verdict").className = r.verdict.status;
    $("status").textContent = `${r.losses.length - 1} steps in ${r.seconds.toFixed(1)} s on ${state.backend}`;
  } catch (e) {
    Object.assign(state, { phase: "error", error: (e as Error).message });
    $("error").textContent = `error: ${(e as Error).message}`;
  } finally { busy(false); }
}

/** The visitor's files as RGBA frames: a GIF's frames, or PNGs in name order. */
async function framesOf(files: readonly File[]): Promise<Frame[]> {
  if (files.length === 1 && files[0]!.type === "image/gif") {
    const g = decodeGif(new Uint8Array(await files[0]!.arrayBuffer()));
    return g.frames.map((rgba) => ({ width: g.width, height: g.height, rgba }));
  }
  const bad = files.filter((f) => f.type !== "image/png");
  if (bad.length) throw new Error(`${bad.map((f) => f.name).join(", ")}: not a PNG; give one GIF or PNG frames`);
  const out = [];
  for (const f of [...files].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))) {
    const bitmap = await createImageBitmap(f);
    const c = new OffscreenCanvas(bitmap.width, bitmap.height), ctx = c.getContext("2d")!;
    ctx.drawImage(bitmap, 0, 0);
    out.push({ width: bitmap.width, height: bitmap.height, rgba: ctx.getImageData(0, 0, bitmap.width, bitmap.height).data });
  }
  return out;
}

let picked: File[] = [];

async function main(): Promise<void> {
  const want = query.get("backend");
  let backend: string;
  try {
    backend = await init({ backend: want === "cpu" ? "cpu" : "webgpu" });
  } catch (e) {
    backend = await init({ backend: "cpu" });
    state.adapter = `no WebGPU here (${(e as Error).message}); computing on the CPU backend instead`;
  }
  state.backend = backend;
  const info = devices().find((d) => d.name === backend) ?? {};
  if (backend === "webgpu") state.adapter = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unnamed adapter";
  const el = $("backend");
  el.textContent = backend === "webgpu" ? `computing on WebGPU (navigator.gpu: ${state.adapter})` : `computing on the CPU: ${state.adapter || "as asked in the URL"}`;
  el.className = backend;

  const select = $<HTMLSelectElement>("scene");
  for (const s of SCENES) select.add(new Option(s.title, s.id));
  const fileScene = $<HTMLSelectElement>("file-scene");
  fileScene.add(new Option("— which scene does your video show? —", ""));
  for (const s of SCENES) fileScene.add(new Option(s.title, s.id));
  if (query.get("fileScene")) fileScene.value = query.get("fileScene")!;
  fileScene.onchange = () => busy(false);
  const truthInput = $<HTMLInputElement>("truth");
  const sync = () => {
    const sc = sceneById(select.value);
    $("unknown-label").textContent = `hidden ${sc.unknown.name} (${sc.unknown.unit})`;
    $("truth-value").textContent = truthInput.value;
  };
  const setScene = (id: string) => {
    select.value = id;
    const u = sceneById(id).unknown;
    Object.assign(truthInput, { min: String(u.range[0]), max: String(u.range[1]), value: String(u.truth) });
    sync();
  };
  setScene(query.get("scene") ?? SCENES[0]!.id);
  if (query.get("truth")) truthInput.value = query.get("truth")!;
  sync();
  $<HTMLInputElement>("steps").value = query.get("steps") ?? String(DEFAULT_SETTINGS.steps);
  select.onchange = () => setScene(select.value);
  truthInput.oninput = sync;

  const start = () => {
    const scene = sceneById(select.value), truth = Number(truthInput.value);
    let s: DemoSettings;
    try { s = settings(); } catch (e) { $("error").textContent = (e as Error).message; return; }
    void run(scene, s, async () => renderVideo(scene, s, truth), truth);
  };
  $("run").onclick = start;
  $<HTMLInputElement>("file").onchange = (ev) => { picked = [...((ev.target as HTMLInputElement).files ?? [])]; busy(false); };
  $("run-file").onclick = () => {
    if (!fileScene.value) { $("error").textContent = "say which scene your video shows first: gradsim fits it to that scene's object and camera"; return; }
    const scene = sceneById(fileScene.value);
    let s: DemoSettings;
    try { s = settings(); } catch (e) { $("error").textContent = (e as Error).message; return; }
    void run(scene, s, async () => videoFromFrames(await framesOf(picked), s), null);
  };
  state.phase = "idle";
  busy(false);
  $("status").textContent = "ready";
  if (query.get("autorun") === "1") start();
}

main().catch((e) => {
  Object.assign(state, { phase: "error", error: (e as Error).message });
  $("error").textContent = `error: ${(e as Error).message}`;
});
