/**
 * System identification on your own video:
 *
 *   npm run gradsim -- fit --video clip.mp4 --scene scene.json --unknowns mass,mu
 *
 * The video is a directory of PNG frames, a GIF, or anything ffmpeg reads; the scene file says
 * what is in it (mesh, camera, initial state, known pushes, frame rate, background, priors; see
 * src/sysid/README.md). Writes result.json (the unknowns with their units, from which video),
 * loss.png/loss.csv, and the video beside the estimate (GIFs and a labelled frame strip).
 * `--iters N` sets the Adam steps (default 60, then up to 40 L-BFGS steps); `--restarts N` the starts drawn
 * from the prior first (default 12) and `--scan N` the grid points per unknown scanned after the
 * descent (default 12; 0: no scan). Without --video, fits the
 * example shipped in examples/data/fit-example/. It ends with a verdict (the loss against the
 * video's floor and an empty frame, coverage, a 95% interval per unknown) and exits 0 when the
 * fit explains the video and determines every unknown to the precision asked (`--precision 2%`;
 * default ±25%), 3 when it does not explain the video, 4 when an unknown is not determined by it,
 * 5 when one is determined only more loosely than asked.
 */
import { fileURLToPath } from "node:url";
import { fitVideo, verdictExitCode, type FitVideoResult } from "gradsim/sysid/node";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { CliError } from "./lib/flags.js";

/** The shipped example: a video rendered by another image formation than gradsim's rasterizer, with its scene file. */
export const EXAMPLE = {
  video: fileURLToPath(new URL("./data/fit-example/clip.gif", import.meta.url)),
  scene: fileURLToPath(new URL("./data/fit-example/scene.json", import.meta.url)),
};

async function run(ctx: ExperimentContext): Promise<Omit<FitVideoResult, "fit">> {
  const { video, scene } =
    ctx.flags.video || ctx.flags.scene ? { video: ctx.flags.video, scene: ctx.flags.scene } : EXAMPLE;
  if (!video)
    throw new CliError(
      "--video is missing: give a directory of PNG frames, a .gif or a video file (.mp4, .mov, .webm), " +
        "with --scene scene.json.",
    );
  if (!scene)
    throw new CliError(
      "--scene is missing: give the scene file describing the video " +
        "(mesh, camera, initial state, fps; see src/sysid/README.md).",
    );
  const unknowns = ctx.flags.unknowns
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    const { fit: _fit, ...r } = await fitVideo({
      video,
      scene,
      ...(unknowns ? { unknowns } : {}),
      out: ctx.out,
      log: ctx.log,
      ...(ctx.flags.precision !== null ? { precision: ctx.flags.precision } : {}),
      settings: {
        progress: ctx.flags.json ? false : "auto",
        ...(ctx.flags.iters ? { steps: ctx.flags.iters } : {}),
        ...(ctx.flags.restarts !== null ? { restarts: ctx.flags.restarts } : {}),
        ...(ctx.flags.scan !== null ? { scan: ctx.flags.scan ? { points: ctx.flags.scan } : undefined } : {}),
      },
    });
    return { ...r, files: [...r.files, "result.json"] };
  } catch (e) {
    // Problems with the user's files are input errors (exit code 2), with the message as written.
    const m = (e as Error).message;
    if (/^(scene|video|--unknowns)/.test(m)) throw new CliError(m);
    throw e;
  }
}

export const experiment: Experiment<Omit<FitVideoResult, "fit">> = {
  name: "fit",
  description:
    "estimate a rigid object's mass and contact parameters from your own video: " +
    "--video FILE --scene scene.json [--unknowns mass,mu] [--restarts N] [--scan N] [--precision 2%]",
  takes: ["video", "scene", "unknowns", "restarts", "scan", "precision"],
  run,
  // A poor fit (3), an unknown the video does not determine (4) or determines more loosely than asked (5) is an
  // answer, not a success.
  exitCode: (r) => verdictExitCode(r.verdict),
};

await mainIfEntry(experiment, import.meta.url);
