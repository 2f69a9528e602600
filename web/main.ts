/**
 * The page: pick a scene and its hidden value, render the "observed" video, and watch gradsim
 * recover the value from the pixels — the target video and gradsim's video at the current estimate
 * playing side by side, the loss curve, the estimate. A visitor can drop a GIF or PNG frames as the
 * target instead, naming the scene they show.
 *
 * The backend is chosen as init() chooses it: WebGPU on a hardware adapter; the CPU when the
 * browser has no WebGPU or only a software adapter (Chromium's SwiftShader runs the same kernels on
 * the CPU, slower than the CPU backend) — said on the page, with a link to insist on WebGPU.
 *
 * A dropped video is fitted only to the scene the visitor says it shows, and the page ends with a
 * verdict: a video the estimate does not explain gets no number announced.
 *
 * URL parameters: ?scene=rigid&truth=2.5&steps=30&autorun=1&fileScene=rigid&backend=cpu|webgpu|auto.
 * The page's state is mirrored on window.gradsimDemo for scripts (the end-to-end test reads it).
 */
import { decodeGif, devices, init, linePlot, type Array, type Frame } from "gradsim";
import {
  DEFAULT_SETTINGS,
  EXPLAINED_NEEDED,
  recover,
  renderVideo,
  SCENES,
  sceneById,
  videoFromFrames,
  type DemoScene,
  type DemoSettings,
} from "./demo.js";
import { failure, fileProblem } from "./messages.js";
import { VideoWall, type RgbVideo } from "./player.js";

interface PageState {
  phase: "starting" | "idle" | "rendering" | "recovering" | "done" | "stopped" | "error";
  backend: string;
  adapter: string;
  /** What the page says about where it computes (the line at the top). */
  backendNote: string;
  truth: number | null;
  estimate: number | null;
  losses: number[];
  seconds: number | null;
  error: string | null;
  /** "fits" or "poor": whether the estimate explains the video (see DemoVerdict). */
  verdict: string | null;
  /** The status line's text. */
  progress: string;
  /** Longest pause between two animation frames during the last run, in ms (how long the page froze). */
  longestPauseMs: number | null;
}
const state: PageState = {
  phase: "starting",
  backend: "",
  adapter: "",
  backendNote: "",
  truth: null,
  estimate: null,
  losses: [],
  seconds: null,
  error: null,
  verdict: null,
  progress: "",
  longestPauseMs: null,
};
(globalThis as { gradsimDemo?: PageState }).gradsimDemo = state;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const query = new URLSearchParams(location.search);
const wall = new VideoWall();

/** A [frames, H, W, 3] video's pixels, for the wall. */
async function rgbVideo(video: Array): Promise<RgbVideo> {
  const [frames, height, width] = video.shape as [number, number, number, number];
  return { frames, height, width, rgb: await video.data() };
}

function showLosses(losses: readonly number[]): void {
  const canvas = $<HTMLCanvasElement>("plot");
  const r = linePlot([{ y: [...losses], label: "image MSE" }], {
    width: canvas.width,
    height: canvas.height,
    logY: true,
    xLabel: "step",
    yLabel: "loss",
  });
  canvas.getContext("2d")!.putImageData(new ImageData(new Uint8ClampedArray(r.rgba), r.width, r.height), 0, 0);
}

const fmt = (x: number) => x.toPrecision(4);

/** The status line and its bar (done = null: no bar). */
function progress(text: string, done: number | null = null): void {
  state.progress = text;
  $("status").textContent = text;
  const bar = $<HTMLProgressElement>("progress");
  bar.hidden = done === null;
  if (done !== null) bar.value = done;
}

function showError(text: string): void {
  state.error = text;
  $("error").textContent = text;
}

/** Let the browser paint what was just written (in a background tab, where no frames come, just yield). */
const painted = () =>
  new Promise<void>((resolve) => {
    if (document.hidden) setTimeout(resolve, 0);
    else requestAnimationFrame(() => setTimeout(resolve, 0));
  });

function settings(): DemoSettings {
  const steps = Number($<HTMLInputElement>("steps").value);
  if (!(Number.isInteger(steps) && steps >= 1 && steps <= 200))
    throw new Error(
      `Steps: enter a whole number from 1 to 200 (the box says “${$<HTMLInputElement>("steps").value}”).`,
    );
  return { ...DEFAULT_SETTINGS, steps };
}

/** The visitor's video, decoded as soon as it arrives (null: none, or it could not be read). */
let dropped: { files: File[]; frames: Frame[] } | null = null;
/** A dropped video can be fitted only once the visitor has said which scene it shows. */
const canRunFile = () => dropped !== null && $<HTMLSelectElement>("file-scene").value !== "";
let running = false;
/** Set by the stop button; the next step ends the fit. */
let stopAsked = false;
class Stopped extends Error {}
const busy = (on: boolean) => {
  running = on;
  stopAsked = false;
  $("stop").hidden = !on;
  for (const id of ["run", "run-file", "scene", "file-scene", "truth", "steps", "file"])
    $<HTMLInputElement>(id).disabled = on || (id === "run-file" && !canRunFile());
};

/**
 * Fit `scene` to the video `target()` makes: status from the first moment (rendering, compiling,
 * then every step with its loss), the target and gradsim's video at the current estimate playing
 * side by side, yielding to the browser between steps.
 */
async function run(
  scene: DemoScene,
  s: DemoSettings,
  target: () => Promise<Array>,
  truth: number | null,
  preparing: string,
): Promise<void> {
  busy(true);
  Object.assign(state, {
    phase: "rendering",
    truth,
    estimate: null,
    losses: [],
    seconds: null,
    error: null,
    verdict: null,
    longestPauseMs: null,
  });
  for (const id of ["error", "estimate", "verdict"]) $(id).textContent = "";
  $("verdict").className = "";
  const u = scene.unknown,
    t0 = performance.now();
  const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  let doing = preparing.toLowerCase();
  // Until the first step, the status line says what is being waited for, with a clock that keeps
  // ticking while the work awaits the GPU.
  let waiting = preparing;
  const tick = () => {
    if (!state.losses.length) progress(`${waiting} (${elapsed()})…`, 0);
  };
  const ticker = setInterval(tick, 500);
  try {
    tick();
    await painted();
    wall.resetPause();
    const video = await target();
    wall.show($("target"), await rgbVideo(video));
    $("target-caption").textContent =
      truth !== null ? `target video (hidden ${u.name}: ${fmt(truth)} ${u.unit})` : "your video, as gradsim sees it";
    state.phase = "recovering";
    doing = `recovering the ${u.name}`;
    waiting = "Compiling the simulation, the renderer and their gradient — the first step takes the longest";
    tick();
    await painted();
    let lastRender = -Infinity;
    const showEstimate = async (value: number, step: number | null) => {
      wall.show($("current"), await rgbVideo(renderVideo(scene, s, value)));
      $("current-caption").textContent =
        `gradsim's video at ${u.name} ≈ ${fmt(value)} ${u.unit}${step !== null ? ` (step ${step})` : ""}`;
      lastRender = performance.now();
    };
    const r = await recover(scene, s, video, async (st) => {
      if (stopAsked) throw new Stopped();
      state.losses.push(st.loss);
      state.estimate = st.estimate;
      progress(
        `Step ${st.step} of ${s.steps} · loss ${st.loss.toExponential(2)} ` +
          `· ${u.name} ≈ ${fmt(st.estimate)} ${u.unit} · ${elapsed()}`,
        st.step / s.steps,
      );
      showLosses(state.losses);
      // Re-render the estimate's video a few times a second, not at every step (it costs a forward pass).
      if (performance.now() - lastRender > 400) await showEstimate(st.estimate, st.step);
      await new Promise((resolve) => setTimeout(resolve, 0)); // let the page repaint and answer clicks
    });
    clearInterval(ticker);
    await showEstimate(r.estimate, null);
    Object.assign(state, {
      phase: "done",
      estimate: r.estimate,
      seconds: r.seconds,
      verdict: r.verdict.status,
      longestPauseMs: wall.longestPauseMs,
    });
    const err = truth !== null ? `, off by ${((100 * Math.abs(r.estimate - truth)) / truth).toFixed(2)}%` : "";
    const explained =
      `gradsim's video explains ${(100 * r.verdict.explained).toFixed(1)}` +
      `% of the target's difference from an empty background`;
    if (r.verdict.status === "fits") {
      $("estimate").textContent =
        `Recovered ${u.name} = ${fmt(r.estimate)} ${u.unit}` +
        `${truth !== null ? ` (hidden: ${fmt(truth)} ${u.unit}${err})` : ""}`;
      $("verdict").textContent = `Verdict: fits — ${explained}.`;
    } else {
      $("estimate").textContent = `No estimate: this video is not “${scene.title}” as gradsim simulates it`;
      $("current-caption").textContent = "gradsim's closest video — not a match";
      $("verdict").textContent =
        `Verdict: poor fit — ${explained} (a fit needs ${100 * EXPLAINED_NEEDED}%). ` +
        `The best ${u.name} found, ${fmt(r.estimate)} ${u.unit}, means nothing. ` +
        "Check that you chose the scene your video shows and that it is filmed as that scene's video on the right; " +
        "for your own object or camera, describe the scene to gradsim's library (guide “Your own video”).";
    }
    $("verdict").className = r.verdict.status;
    progress(
      `Done: ${r.losses.length - 1} steps in ${r.seconds.toFixed(1)} s ` +
        `on ${state.backend === "webgpu" ? "WebGPU" : "the CPU"}.`,
      1,
    );
  } catch (e) {
    if (e instanceof Stopped) {
      Object.assign(state, { phase: "stopped", longestPauseMs: wall.longestPauseMs });
      const at =
        state.estimate !== null
          ? ` at ${u.name} ≈ ${fmt(state.estimate)} ${u.unit} — not a result: the fit had not converged`
          : "";
      progress(`Stopped after ${Math.max(0, state.losses.length - 1)} of ${s.steps} steps${at}.`);
      return;
    }
    console.error(e);
    Object.assign(state, { phase: "error", longestPauseMs: wall.longestPauseMs });
    showError(failure(doing, e, state.backend));
    progress("Stopped.");
  } finally {
    clearInterval(ticker);
    busy(false);
  }
}

/** The visitor's files as RGBA frames: a GIF's frames, or PNGs in name order. */
async function framesOf(files: readonly File[]): Promise<Frame[]> {
  if (files.length === 1 && files[0]!.type === "image/gif") {
    const g = decodeGif(new Uint8Array(await files[0]!.arrayBuffer()));
    return g.frames.map((rgba) => ({ width: g.width, height: g.height, rgba }));
  }
  if (!files.length || files.some((f) => f.type !== "image/png")) throw new Error("not one GIF or PNG frames");
  const out = [];
  for (const f of [...files].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))) {
    const bitmap = await createImageBitmap(f);
    const c = new OffscreenCanvas(bitmap.width, bitmap.height),
      ctx = c.getContext("2d")!;
    ctx.drawImage(bitmap, 0, 0);
    out.push({
      width: bitmap.width,
      height: bitmap.height,
      rgba: ctx.getImageData(0, 0, bitmap.width, bitmap.height).data,
    });
  }
  return out;
}

/** A link to this page with `backend` set (the other parameters kept). */
function withBackend(backend: string, text: string): HTMLAnchorElement {
  const q = new URLSearchParams(location.search);
  q.set("backend", backend);
  const a = document.createElement("a");
  a.href = `?${q}`;
  a.textContent = text;
  return a;
}

/**
 * Where to compute, as init() chooses (?backend=auto, the default) or as the address insists, and
 * the line at the top saying so in words, with a link to the other choice.
 */
async function chooseBackend(): Promise<void> {
  let asked = query.get("backend") ?? "auto";
  let note = "";
  if (asked !== "auto" && asked !== "cpu" && asked !== "webgpu") {
    note =
      `The address asks for backend “${asked}”, which this page does not know (it knows cpu and webgpu); ` +
      `choosing for you. `;
    asked = "auto";
  }
  const gpuInfo = () => devices().find((d) => d.name === "webgpu");
  const adapterName = (info: Record<string, unknown>) =>
    [info.vendor, info.architecture, info.description].filter((x) => typeof x === "string" && x).join(" ") ||
    "an unnamed adapter";
  let backend: string,
    link: HTMLAnchorElement | null = null;
  if (asked === "cpu") {
    backend = await init({ backend: "cpu" });
    note += "Computing on the CPU, as this page's address asks.";
    link = withBackend("auto", "choose automatically");
  } else if (asked === "webgpu") {
    try {
      backend = await init({ backend: "webgpu" });
      state.adapter = adapterName(gpuInfo()!);
      note +=
        `Computing on WebGPU (${state.adapter}), as this page's address asks.` +
        (gpuInfo()!.software === true
          ? " It is a software adapter: it runs on the CPU, where gradsim's own CPU code is usually faster."
          : "");
      link = withBackend("auto", "choose automatically");
    } catch (e) {
      console.warn(e);
      backend = await init({ backend: "cpu" });
      note +=
        "This page's address asks for WebGPU, but " +
        ("gpu" in navigator ? "the browser found no graphics adapter for it" : "this browser does not offer WebGPU") +
        ". Computing on the CPU instead: the same fit, slower for large scenes.";
    }
  } else {
    backend = await init({ backend: "auto" });
    const info = gpuInfo();
    if (info) state.adapter = adapterName(info);
    if (backend === "webgpu") {
      note += `Computing on WebGPU (${state.adapter}).`;
      link = withBackend("cpu", "compute on the CPU instead");
    } else if (info?.software === true) {
      note +=
        `Computing on the CPU: this browser's only WebGPU adapter (${state.adapter}) ` +
        "is a software one — it runs on the CPU too, and more slowly than gradsim's own CPU code.";
      link = withBackend("webgpu", "use WebGPU anyway");
    } else {
      note +=
        "Computing on the CPU: " +
        ("gpu" in navigator
          ? "the browser found no graphics adapter for WebGPU"
          : "this browser does not offer WebGPU") +
        ". The fit is the same, only slower for large scenes.";
    }
  }
  Object.assign(state, { backend, backendNote: note });
  const el = $("backend");
  el.textContent = note;
  if (link) el.append(" ", link);
  el.className = backend;
}

async function main(): Promise<void> {
  await chooseBackend();

  const select = $<HTMLSelectElement>("scene");
  for (const s of SCENES) select.add(new Option(s.title, s.id));
  const fileScene = $<HTMLSelectElement>("file-scene");
  fileScene.add(new Option("— choose the scene your video shows —", ""));
  for (const s of SCENES) fileScene.add(new Option(s.title, s.id));
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
  const known = (id: string | null) => id !== null && SCENES.some((s) => s.id === id);
  const notes: string[] = [];
  for (const key of ["scene", "fileScene"]) {
    const id = query.get(key);
    if (id !== null && !known(id))
      notes.push(
        `The address names a scene “${id}” that this page does not have ` +
          `(it has ${SCENES.map((s) => s.id).join(", ")}).`,
      );
  }
  setScene(known(query.get("scene")) ? query.get("scene")! : SCENES[0]!.id);
  if (known(query.get("fileScene"))) fileScene.value = query.get("fileScene")!;
  if (query.get("truth")) truthInput.value = query.get("truth")!;
  sync();
  $<HTMLInputElement>("steps").value = query.get("steps") ?? String(DEFAULT_SETTINGS.steps);
  select.onchange = () => setScene(select.value);
  truthInput.oninput = sync;

  const start = () => {
    const scene = sceneById(select.value),
      truth = Number(truthInput.value);
    let s: DemoSettings;
    try {
      s = settings();
    } catch (e) {
      showError((e as Error).message);
      return;
    }
    void run(scene, s, async () => renderVideo(scene, s, truth), truth, "Rendering the target video");
  };
  $("run").onclick = start;
  $("stop").onclick = () => {
    stopAsked = true;
    progress(`${state.progress} — stopping…`);
  };

  /** What the chosen scene looks like: its video (at its default value) plays beside the visitor's. */
  let preview = 0;
  const previewScene = async () => {
    if (running || !fileScene.value) return;
    const token = ++preview,
      scene = sceneById(fileScene.value),
      u = scene.unknown;
    const video = await rgbVideo(renderVideo(scene, DEFAULT_SETTINGS, u.truth));
    if (token !== preview || running) return;
    wall.show($("current"), video);
    $("current-caption").textContent =
      `“${scene.title}” as gradsim films it (${u.name} ${u.truth} ${u.unit}): your video should look like this`;
  };
  fileScene.onchange = () => {
    busy(false);
    if (dropped)
      progress(
        fileScene.value
          ? "Your video is ready: press “recover from my video”."
          : "Your video is ready: now choose the scene it shows.",
      );
    previewScene().catch((e) => {
      console.error(e);
      showError(failure("drawing the scene", e, state.backend));
    });
  };

  /** Files from the chooser or a drop: decoded now, so a bad file is explained before anything runs. */
  const take = async (files: File[]) => {
    if (running) return;
    dropped = null;
    busy(false);
    showError("");
    state.error = null;
    try {
      const frames = await framesOf(files);
      dropped = { files, frames };
      wall.show($("target"), await rgbVideo(videoFromFrames(frames, DEFAULT_SETTINGS)));
      const f = frames[0]!;
      $("target-caption").textContent =
        `your video (${frames.length} frame${frames.length > 1 ? "s" : ""}, ${f.width}×${f.height}), ` +
        `as gradsim sees it`;
      progress(
        fileScene.value
          ? "Your video is ready: press “recover from my video”."
          : "Your video is ready: now choose the scene it shows.",
      );
    } catch (e) {
      console.error(e);
      wall.clear($("target"));
      $("target-caption").textContent = "target video";
      showError(fileProblem(files, e));
      progress("Waiting for a video that can be read.");
    }
    busy(false);
  };
  $<HTMLInputElement>("file").onchange = (ev) => {
    void take([...((ev.target as HTMLInputElement).files ?? [])]);
  };
  const own = $("own");
  document.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    own.classList.add("dragging");
  });
  document.addEventListener("dragleave", (ev) => {
    if (!ev.relatedTarget) own.classList.remove("dragging");
  });
  document.addEventListener("drop", (ev) => {
    ev.preventDefault(); // the browser would open the file instead of the page
    own.classList.remove("dragging");
    if (running) {
      showError("A fit is running: drop your video again when it has finished.");
      return;
    }
    void take([...(ev.dataTransfer?.files ?? [])]);
  });
  $("run-file").onclick = () => {
    if (!dropped) {
      showError("Drop a GIF or PNG frames first, or choose them with the file button.");
      return;
    }
    if (!fileScene.value) {
      showError("Choose the scene your video shows first: gradsim fits it to that scene's object and camera.");
      return;
    }
    const scene = sceneById(fileScene.value),
      { frames } = dropped;
    let s: DemoSettings;
    try {
      s = settings();
    } catch (e) {
      showError((e as Error).message);
      return;
    }
    void run(scene, s, async () => videoFromFrames(frames, s), null, "Preparing your video");
  };
  state.phase = "idle";
  busy(false);
  progress("Ready: press “render the video and recover”, or drop your own video.");
  if (notes.length) showError(notes.join(" "));
  if (fileScene.value) void previewScene();
  if (query.get("autorun") === "1") start();
}

main().catch((e) => {
  console.error(e);
  state.phase = "error";
  showError(failure("starting the page", e, state.backend));
  progress("The page could not start.");
});
