/**
 * gradsim.control, Node-only parts: a target image read from a PNG, and the Fig. 6 curves and motion written to disk.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { writeAtomic } from "../io/atomic.js";
import { writeGif, writeLinePlot, writePng } from "../io/image.js";
import { InputFileError } from "../io/input-file-error.js";
import { readPng } from "../io/image.js";
import { labelledGrid, type Raster } from "../io/raster.js";
import { displayFrames, stripIndices } from "../sysid/node/report.js";
import { jit, vmap } from "../transforms/index.js";
import { CONTROL_METHODS, type ControlMethod, type ControlRuns, type MethodRun } from "./run.js";
import { targetImage, type ControlScene, type TargetBackground } from "./scene.js";

/**
 * A user's target image (PNG, any size) area-resampled to resolution² RGB over the scene's
 * background where it is transparent; a missing or unreadable file is an InputFileError naming
 * the flag (`what` says what the image should show).
 */
export function readTargetImage(
  path: string,
  resolution: number,
  what: string,
  background: TargetBackground,
  flag = "--target",
): Array {
  if (!existsSync(path))
    throw new InputFileError(
      path,
      `${flag} ${path}: no such file; give a PNG of ${what} ` +
        `(any size: it is resampled to ${resolution}², RGB over the scene's background).`,
    );
  let img: Array;
  try {
    img = readPng(path);
  } catch (e) {
    throw new InputFileError(path, `${flag}: ${(e as Error).message}`);
  }
  return targetImage(img, resolution, background);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const std = (xs: readonly number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

/** Frames [K, H, W, C] of the rollout at every `every`-th frame (and the last). */
function motion(scene: ControlScene, params: Array, every: number): Array {
  const x = jit((p: Array) => scene.positions(p))(params);
  const idx = [
    ...globalThis.Array.from({ length: Math.floor((scene.frames - 1) / every) }, (_, k) => k * every),
    scene.frames - 1,
  ];
  return vmap((v: Array) => scene.frame(v))(np.take(x, np.array(idx, { dtype: "int32" }), 0));
}

async function writeMotion(out: string, scene: ControlScene, before: Array, after: Array): Promise<string[]> {
  const every = Math.max(1, Math.round(scene.fps / 15));
  const show = { zoom: 3, composited: true };
  const a = await displayFrames(motion(scene, before, every), show),
    b = await displayFrames(motion(scene, after, every), show);
  const [target] = await displayFrames(np.expandDims(scene.target, 0), show);
  const cols = ["random policy", "gradsim (pixels only)", "target image"];
  const frames: Raster[] = a.map((f, i) => labelledGrid([{ label: "", images: [f, b[i]!, target!] }], cols, ""));
  writeGif(join(out, "motion.gif"), frames, { fps: scene.fps / every });
  const pick = stripIndices(a.length);
  const times = pick.map((i) => `${(Math.min(i * every, scene.frames - 1) / scene.fps).toFixed(2)} s`);
  writePng(
    join(out, "frames.png"),
    labelledGrid(
      [
        { label: "random policy", images: pick.map((i) => a[i]!) },
        { label: "gradsim", images: pick.map((i) => b[i]!) },
        { label: "target", images: pick.map(() => target!) },
      ],
      times,
      "time:",
    ),
  );
  return ["motion.gif", "frames.png"];
}

function writeCurves(
  out: string,
  scene: ControlScene,
  runs: Record<ControlMethod, MethodRun[]>,
  what: "imageLosses" | "distances" | "comDistances",
  file: string,
  label: string,
  logY: boolean,
): string[] {
  const colours: Record<ControlMethod, readonly [number, number, number]> = {
    random: [128, 128, 128],
    diffphysics: [31, 119, 180],
    gradsim: [214, 39, 40],
  };
  const n = runs.gradsim[0]!.imageLosses.length;
  const series = CONTROL_METHODS.map((m) => {
    const per = runs[m].map((r) =>
      m === "random" ? globalThis.Array.from({ length: n }, () => r[what][0]!) : r[what],
    );
    const mu = globalThis.Array.from({ length: n }, (_, i) => mean(per.map((c) => c[i]!))),
      sd = globalThis.Array.from({ length: n }, (_, i) => std(per.map((c) => c[i]!)));
    return { m, mu, sd };
  });
  writeLinePlot(
    join(out, `${file}.png`),
    series.map(({ m, mu, sd }) => ({
      label: m,
      color: colours[m],
      y: mu,
      band: {
        lower: mu.map((v, i) => (logY ? Math.max(v * 1e-3, v - sd[i]!) : v - sd[i]!)),
        upper: mu.map((v, i) => v + sd[i]!),
      },
    })),
    {
      title: `${scene.name}: ${label}, mean ± std over ${runs.gradsim.length} seeds`,
      xLabel: "iteration",
      yLabel: label,
      logY,
      width: 640,
      height: 400,
    },
  );
  const csv = [
    "iteration," + series.flatMap(({ m }) => [`${m}_mean`, `${m}_std`]).join(","),
    ...globalThis.Array.from({ length: n }, (_, i) => [i, ...series.flatMap(({ mu, sd }) => [mu[i], sd[i]])].join(",")),
  ];
  writeAtomic(join(out, `${file}.csv`), csv.join("\n") + "\n");
  return [`${file}.png`, `${file}.csv`];
}

/**
 * The Fig. 6 curves (image loss, distance and centre-of-mass distance per iteration, mean ± std over seeds, PNG and
 * CSV) and the first seed's motion before and after (motion.gif, frames.png) in `out`; returns the file names.
 */
export async function writeControlReport(out: string, r: ControlRuns): Promise<string[]> {
  const scene = r.first.scene;
  return [
    ...writeCurves(
      out,
      scene,
      r.runs,
      "imageLosses",
      "fig6-image-loss",
      "image loss (MSE of the last frame vs the target)",
      true,
    ),
    ...writeCurves(out, scene, r.runs, "distances", "fig6-distance", scene.goalDistanceMeaning, false),
    ...writeCurves(
      out,
      scene,
      r.runs,
      "comDistances",
      "fig6-com-distance",
      "centre-of-mass distance to the goal (m)",
      false,
    ),
    ...(await writeMotion(out, scene, r.first.before, r.first.after)),
  ];
}
