/**
 * Imperfect dynamics and rendering models (gradSim §4.3: Table 4 left, Fig. 7).
 *
 * A dataset of objects, a third each rigid bodies, deformable solids and cloths, is dropped onto
 * the ground and pushed sideways by a known force (the library's scene: sysid's objectModel and
 * objectLook, src/sysid/scenes/imperfect.ts). Their mass is estimated from a video made with the
 * *correct* model, by an estimator whose model is wrong in one way per row: frictionless contact,
 * perfectly elastic contact (no contact damping), rigid objects simulated as stiff FEM solids,
 * deformable ones as rigid bodies, or — with the right physics — a target video from another image
 * formation (ray-traced with supersampling, shadows, Blinn–Phong highlights, sensor noise; the
 * estimator compares its soft silhouettes with the traced object masks, as the paper did with its
 * photorealistic renderer's masks).
 *
 * Fig. 7: on the rigid objects, mass accuracy vs iteration for three looks of the same scene
 * (target and estimator alike): one flat colour, Phong shading, and a texture.
 *
 *   npm run gradsim -- imperfect-models                    # 30 objects (10 per kind)
 *   npm run gradsim -- imperfect-models --dataset 90 --workers 2    # the paper's 90
 *   npm run gradsim -- imperfect-models --quick            # 3 objects, small images (the test)
 *
 * Writes result.json (rows, per kind), table.md (ours beside the paper's), objects.json (every
 * object's estimates per row), fig7.png/fig7.csv, and per kind a looks.png (the rasterized
 * target, the traced target and its mask) and traced.gif.
 */
import { join } from "node:path";
import {
  writeAtomic,
  writeGif,
  writeLinePlot,
  writePng,
  makeRng,
  np,
  render,
  sysid,
  type Array,
  labelledGrid,
  InputFileError,
  DivergenceError,
} from "gradsim/node";
import { displayFrames, fileRecordStore, stripIndices } from "gradsim/sysid/node";
import { runKey } from "./lib/experiment.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { mean, median, std } from "./lib/stats.js";

const {
  IMPERFECT_CAMERA,
  OBJECT_KINDS,
  OBJECT_LOOKS: LOOKS,
  OBJECT_MASS_RANGE: MASS_RANGE,
  TRACED_LIGHT,
  TRACED_SHADING,
  TRUE_MODEL,
  objectGeometry,
  objectLook,
  objectModel,
  objectVideo,
  sampleObject,
  tracedAlbedo,
} = sysid;
type Look = sysid.ObjectLookName;
type ModelChoice = sysid.ModelChoice;
type ObjectKind = sysid.ObjectKind;
type ObjectSpec = sysid.ObjectSpec;
type SceneSettings = sysid.ObjectSceneSettings;

export interface ImperfectSettings {
  readonly objects: number;
  readonly frames: number;
  readonly resolution: number;
  /** Adam steps then L-BFGS steps of each table fit; Adam steps of each Fig. 7 fit. */
  readonly steps: number;
  readonly lr: number;
  readonly lrEnd: number;
  readonly refine: number;
  readonly figSteps: number;
}

export const IMPERFECT_SETTINGS: Readonly<Record<"full" | "quick", ImperfectSettings>> = {
  full: { objects: 30, frames: 24, resolution: 48, steps: 40, lr: 0.15, lrEnd: 2e-3, refine: 8, figSteps: 40 },
  quick: { objects: 3, frames: 12, resolution: 32, steps: 16, lr: 0.2, lrEnd: 5e-3, refine: 4, figSteps: 12 },
};

const FPS = 30;
/** Initial guesses are drawn log-uniformly within this factor of the true mass. */
export const GUESS_FACTOR = 2.5;

export interface Row {
  readonly name: string;
  /** Mean relative absolute error of the mass in the paper's Table 4 (left); null for a row the paper has not. */
  readonly paper: number | null;
  readonly kinds: readonly ObjectKind[];
  model(spec: ObjectSpec): ModelChoice;
  /**
   * "raster": the estimator's own image formation with the true model; "traced": the ray tracer's masks (silhouettes);
   * "traced-colour": the ray tracer's colour frames, against the estimator's nearest look (tracedLook) over the traced
   * clean plate — shading, highlights, shadows and noise all enter the loss.
   */
  readonly target: "raster" | "traced" | "traced-colour";
}

export const ROWS: readonly Row[] = [
  { name: "perfect model", paper: 0.1071, kinds: OBJECT_KINDS, model: TRUE_MODEL, target: "raster" },
  {
    name: "unmodelled friction",
    paper: 0.1866,
    kinds: OBJECT_KINDS,
    model: (s) => ({ ...TRUE_MODEL(s), friction: false }),
    target: "raster",
  },
  {
    name: "unmodelled elasticity",
    paper: 0.2281,
    kinds: OBJECT_KINDS,
    model: (s) => ({ ...TRUE_MODEL(s), damping: false }),
    target: "raster",
  },
  {
    name: "rigid-as-deformable",
    paper: 0.3462,
    kinds: ["rigid"],
    model: (s) => ({ ...TRUE_MODEL(s), body: "deformable" }),
    target: "raster",
  },
  {
    name: "deformable-as-rigid",
    paper: 0.4974,
    kinds: ["deformable"],
    model: (s) => ({ ...TRUE_MODEL(s), body: "rigid" }),
    target: "raster",
  },
  { name: "photorealistic render", paper: 0.1793, kinds: OBJECT_KINDS, model: TRUE_MODEL, target: "traced" },
  {
    name: "photorealistic render, colour",
    paper: null,
    kinds: OBJECT_KINDS,
    model: TRUE_MODEL,
    target: "traced-colour",
  },
];

/** One object's record (kept on disk per object, so a run resumes and shards merge). */
export interface ObjectRecord extends sysid.InstanceRecord {
  readonly kind: ObjectKind;
  /** The object: shape, size, true mass, pose, push, contact coefficients, material. */
  readonly object: ObjectSpec;
  /**
   * Rows whose descent left the model's stable range (their estimate: the lowest-loss iterate before that), with the
   * message.
   */
  readonly diverged?: Record<string, string>;
  /** Fig. 7 (rigid objects): relative mass error at each Adam iterate (the initial guess first), per look. */
  readonly fig7?: Partial<Record<Look, number[]>>;
}

export interface RowResult {
  readonly name: string;
  readonly paper: number | null;
  readonly objects: number;
  /** Over the row's objects (null: none fitted yet). */
  readonly mean: number | null;
  readonly std: number | null;
  readonly median: number | null;
  readonly perKind: Partial<Record<ObjectKind, number>>;
  /** Fits that left their model's stable range (estimate: the best iterate before). */
  readonly diverged: number;
  readonly seconds: number;
}

export interface ImperfectResult {
  readonly objects: number;
  readonly perKind: Record<ObjectKind, number>;
  readonly settings: ImperfectSettings;
  readonly rows: RowResult[];
  readonly fig7: Record<Look, { readonly mean: number[]; readonly std: number[] }> | null;
  readonly table: string;
  readonly files: string[];
}

const MASS: sysid.Unknown = { name: "mass", transform: "log", unit: "kg" };

/** Each object's draws depend only on the seed and its index (shards see the same objects). */
const objectRng = (seed: number, index: number) => makeRng((seed * 7919 + index * 104729 + 17) >>> 0);

interface PreparedObject {
  readonly index: number;
  readonly kind: ObjectKind;
  readonly spec: ObjectSpec;
  readonly initial: number;
  readonly geometry: ReturnType<typeof objectGeometry>;
  readonly scene: SceneSettings;
  readonly background: Array;
  readonly truePositions: Array;
}

function prepare(seed: number, index: number, cfg: ImperfectSettings): PreparedObject {
  const rng = objectRng(seed, index);
  const kind = OBJECT_KINDS[index % OBJECT_KINDS.length]!;
  const spec = sampleObject(rng, kind);
  // Initial guesses up to 2.5× off: much further, a pushed object leaves the view within a few frames.
  const initial = spec.mass * Math.exp(rng.uniform(-1, 1) * Math.log(GUESS_FACTOR));
  const geometry = objectGeometry(spec);
  const scene = { frames: cfg.frames, fps: FPS, resolution: cfg.resolution };
  const truePositions = objectModel(spec, geometry, TRUE_MODEL(spec), scene).positions(
    np.array(spec.mass, { dtype: "float32" }),
    cfg.frames,
  );
  return {
    index,
    kind,
    spec,
    initial,
    geometry,
    scene,
    truePositions,
    background: sysid.groundImage(IMPERFECT_CAMERA, cfg.resolution, cfg.resolution),
  };
}

/** The traced ("photorealistic") target of an object's true motion; with `plate`, one more frame without it. */
function tracedTarget(o: PreparedObject, plate = false): render.TracedVideo {
  const [T, N] = o.truePositions.shape as [number, number, number];
  const V = o.geometry.surface.vertices.length / 3,
    x = o.truePositions.dataSync();
  const frames = globalThis.Array.from({ length: T }, (_, t) => x.subarray(3 * N * t, 3 * N * t + 3 * V));
  const r = o.scene.resolution;
  return render.traceVideo(
    {
      frames,
      faces: o.geometry.surface.faces,
      albedo: tracedAlbedo(o.geometry),
      specular: TRACED_SHADING.specular,
      shininess: TRACED_SHADING.shininess,
    },
    {
      camera: sysid.hostCamera(IMPERFECT_CAMERA, r, r),
      width: r,
      height: r,
      light: TRACED_LIGHT,
      ambient: TRACED_SHADING.ambient,
      intensity: TRACED_SHADING.intensity,
      samples: 4,
      noise: 0.015,
      seed: o.index,
    },
    plate,
  );
}

const tracedMasks = (t: render.TracedVideo, T: number): Array =>
  np.reshape(np.array(t.masks, { dtype: "float32" }), [T, t.height, t.width, 1]);

interface FitOutcome {
  readonly mass: number;
  readonly steps: number;
  readonly seconds: number;
  /** The Adam iterates' masses (the initial guess first). */
  readonly trace: number[];
  /**
   * The descent left the range where the estimator's model is stable; `mass` is its lowest-loss iterate before that.
   */
  readonly diverged?: string;
}

/** What the estimator is compared with: the observed video, in which channels, over which background. */
interface Target {
  readonly observed: Array;
  readonly channels: "rgba" | "rgb" | "alpha";
  readonly look: sysid.ObjectLook;
  readonly background: Array;
}

/** The estimator's own video of the object's true motion: the default look, RGBA over the ground. */
const rasterVideo = (o: PreparedObject): Array =>
  objectVideo(o.truePositions, o.geometry, objectLook(o.geometry, o.spec, "default"), o.scene, o.background, "rgba");

/** A row's target for an object: the estimator's own video, the traced masks, or the traced colour frames. */
function rowTarget(o: PreparedObject, target: Row["target"]): Target {
  const look = objectLook(o.geometry, o.spec, "default");
  if (target === "raster") return { observed: rasterVideo(o), channels: "rgba", look, background: o.background };
  if (target === "traced")
    return {
      observed: tracedMasks(tracedTarget(o), o.scene.frames),
      channels: "alpha",
      look,
      background: o.background,
    };
  const traced = tracedTarget(o, true);
  const [T, r] = [o.scene.frames, o.scene.resolution];
  const frames = np.reshape(np.array(traced.images, { dtype: "float32" }), [T + 1, r, r, 3]);
  const [observed, plate] = np.split(frames, [T], 0) as [Array, Array];
  return { observed, channels: "rgb", look: sysid.tracedLook(o.geometry), background: np.reshape(plate, [r, r, 3]) };
}

async function fitMass(
  ctx: ExperimentContext,
  o: PreparedObject,
  choice: ModelChoice,
  target: Target,
  opt: { steps: number; lr: number; lrEnd: number; refine: number },
  label: string,
): Promise<FitOutcome> {
  const model = objectModel(o.spec, o.geometry, choice, o.scene);
  const { observed, channels, look: appearance, background } = target;
  const trace: number[] = [],
    losses: number[] = [];
  const t0 = performance.now();
  try {
    const r = await sysid.estimate({
      frames: o.scene.frames,
      simulate: (p, frames) => model.positions(p.mass!, frames),
      render: (x) => objectVideo(x, o.geometry, appearance, o.scene, background, channels),
      observed: { video: observed },
      unknowns: [{ ...MASS, prior: MASS_RANGE[o.kind] }],
      initial: { mass: o.initial },
      method: "pixels",
      settings: {
        optimizer: "adam",
        steps: opt.steps,
        adam: { lr: opt.lr, lrEnd: opt.lrEnd },
        refine: opt.refine,
        label,
        progress: ctx.flags.json ? false : "auto",
        // The Adam phase reports under the fit's own label (L-BFGS under "<label> L-BFGS"), from the initial guess on.
        onStep: (s) => {
          if (s.label === label) {
            trace.push(s.estimate.mass as number);
            losses.push(s.loss);
          }
        },
      },
      log: ctx.log,
    });
    return { mass: r.estimate.mass as number, steps: r.steps, seconds: r.seconds, trace };
  } catch (e) {
    // A wrong model can pull the mass where its explicit rollout is unstable (a cloth 5× lighter
    // than the truth): the row's estimate is then its best iterate before that, flagged.
    if (!(e instanceof DivergenceError) || !losses.length) throw e;
    const best = losses.reduce((b, l, i) => (Number.isFinite(l) && l < losses[b]! ? i : b), 0);
    ctx.log(
      `[imperfect-models] ${label}: diverged (${e.message.split(".")[0]}); ` +
        `keeping its lowest-loss iterate, ${trace[best]!.toPrecision(5)} kg`,
    );
    return {
      mass: trace[best]!,
      steps: trace.length,
      seconds: (performance.now() - t0) / 1000,
      trace,
      diverged: e.message,
    };
  }
}

/**
 * Fit an object's rows and Fig. 7's looks; with `kept`, a record made before some rows existed, only the rows it lacks
 * (the rest, and its Fig. 7 curves, are kept as they are).
 */
async function fitObject(
  ctx: ExperimentContext,
  o: PreparedObject,
  cfg: ImperfectSettings,
  kept?: ObjectRecord,
): Promise<ObjectRecord> {
  const truth = o.spec.mass;
  const rel = (m: number) => Math.abs(m - truth) / truth;
  const describe =
    `${o.kind} ${o.spec.shape} ${o.spec.size.map((x) => x.toFixed(2)).join("×")} m, ` +
    `mass ${truth.toFixed(3)} kg, μ ${o.spec.contact.mu.toFixed(2)}, ` +
    `initial guess ${o.initial.toFixed(3)} kg`;
  ctx.log(`[imperfect-models] object ${o.index}: ${describe}${kept ? " (the rows its record lacks)" : ""}`);
  const estimates: Record<string, sysid.Values> = { ...kept?.estimates },
    relMae: Record<string, sysid.ColumnErrors> = { ...kept?.relMae },
    mae: Record<string, sysid.ColumnErrors> = { ...kept?.meanAbsError };
  const iterations: Record<string, number> = { ...kept?.iterations },
    seconds: Record<string, number> = { ...kept?.seconds },
    diverged: Record<string, string> = { ...kept?.diverged };
  for (const row of ROWS.filter((r) => r.kinds.includes(o.kind) && !kept?.relMae[r.name])) {
    const f = await fitMass(ctx, o, row.model(o.spec), rowTarget(o, row.target), cfg, `${o.index} ${row.name}`);
    estimates[row.name] = { mass: f.mass };
    relMae[row.name] = { mass: rel(f.mass) };
    mae[row.name] = { mass: Math.abs(f.mass - truth) };
    iterations[row.name] = f.steps;
    seconds[row.name] = Number(f.seconds.toFixed(2));
    if (f.diverged) diverged[row.name] = f.diverged;
    ctx.log(
      `[imperfect-models] object ${o.index} ${row.name}: mass ${f.mass.toPrecision(5)} kg ` +
        `(truth ${truth.toPrecision(5)}), ` +
        `relative error ${rel(f.mass).toExponential(2)}`,
    );
  }
  let fig7: ObjectRecord["fig7"] = kept?.fig7;
  if (o.kind === "rigid" && !kept) {
    fig7 = {};
    for (const l of LOOKS) {
      const look = objectLook(o.geometry, o.spec, l);
      const target = objectVideo(o.truePositions, o.geometry, look, o.scene, o.background, "rgba");
      const f = await fitMass(
        ctx,
        o,
        TRUE_MODEL(o.spec),
        { observed: target, channels: "rgba", look, background: o.background },
        { ...cfg, steps: cfg.figSteps, refine: 0 },
        `${o.index} fig7 ${l}`,
      );
      fig7[l] = f.trace.map(rel);
    }
  }
  return {
    index: o.index,
    kind: o.kind,
    object: o.spec,
    describe,
    truth: { mass: truth },
    initial: { mass: o.initial },
    estimates,
    initialRelMae: { mass: rel(o.initial) },
    relMae,
    meanAbsError: mae,
    iterations,
    seconds,
    ...(fig7 ? { fig7 } : {}),
    ...(Object.keys(diverged).length ? { diverged } : {}),
  };
}

export function summarise(records: readonly ObjectRecord[]): RowResult[] {
  return ROWS.map((row) => {
    const having = records.filter((r) => r.relMae[row.name]);
    const errs = having.map((r) => r.relMae[row.name]!.mass!);
    const perKind = Object.fromEntries(
      row.kinds.flatMap((k) => {
        const of = having.filter((r) => r.kind === k);
        return of.length ? [[k, mean(of.map((r) => r.relMae[row.name]!.mass!))]] : [];
      }),
    );
    return {
      name: row.name,
      paper: row.paper,
      objects: having.length,
      perKind,
      mean: errs.length ? mean(errs) : null,
      std: errs.length ? std(errs) : null,
      median: errs.length ? median(errs) : null,
      diverged: having.filter((r) => r.diverged?.[row.name]).length,
      seconds: Number(mean(having.map((r) => r.seconds[row.name]!)).toFixed(2)),
    };
  });
}

const fmt = (x: number | null | undefined) =>
  x !== null && x !== undefined && Number.isFinite(x) ? (x >= 0.01 ? x.toFixed(4) : x.toExponential(2)) : "—";

/** Table 4 (left) in the paper's layout, ours beside the paper's. */
export function tableMarkdown(rows: readonly RowResult[]): string {
  return [
    "| model | paper (mean rel. abs. err.) | ours: mean ± std | median " +
      "| rigid | deformable | cloth | objects | diverged | s / fit |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.paper ?? "— (not in the paper)"} | ${fmt(r.mean)} ± ${fmt(r.std)} | ${fmt(r.median)} | ` +
        `${OBJECT_KINDS.map((k) => fmt(r.perKind[k])).join(" | ")} | ` +
        `${r.objects} | ${r.diverged} | ${r.seconds} |`,
    ),
  ].join("\n");
}

function fig7Summary(records: readonly ObjectRecord[]): ImperfectResult["fig7"] {
  const rigid = records.filter((r) => r.fig7);
  if (!rigid.length) return null;
  return Object.fromEntries(
    LOOKS.map((l) => {
      const curves = rigid.map((r) => r.fig7![l]!);
      const n = Math.max(...curves.map((c) => c.length));
      const at = (c: number[], i: number) => c[Math.min(i, c.length - 1)]!;
      const cols = globalThis.Array.from({ length: n }, (_, i) => curves.map((c) => at(c, i)));
      return [l, { mean: cols.map(mean), std: cols.map(std) }];
    }),
  ) as ImperfectResult["fig7"];
}

function writeFig7(out: string, fig7: NonNullable<ImperfectResult["fig7"]>, objects: number): string[] {
  const names: Record<Look, string> = {
    default: "default",
    colour: "only colour",
    shading: "shading (Phong)",
    texture: "texture",
  };
  writeLinePlot(
    join(out, "fig7.png"),
    LOOKS.map((l) => ({
      label: names[l],
      y: fig7[l].mean,
      band: {
        lower: fig7[l].mean.map((m, i) => Math.max(1e-6, m - fig7[l].std[i]!)),
        upper: fig7[l].mean.map((m, i) => m + fig7[l].std[i]!),
      },
    })),
    {
      title: `Fig. 7: mass estimation, mean ± std over ${objects} rigid objects`,
      xLabel: "iteration (Adam)",
      yLabel: "relative mass error",
      logY: true,
      width: 640,
      height: 400,
    },
  );
  const n = fig7.colour.mean.length;
  const csv = [
    "iteration," + LOOKS.flatMap((l) => [`${l}_mean`, `${l}_std`]).join(","),
    ...globalThis.Array.from({ length: n }, (_, i) =>
      [i, ...LOOKS.flatMap((l) => [fig7[l].mean[i], fig7[l].std[i]])].join(","),
    ),
  ];
  writeAtomic(join(out, "fig7.csv"), csv.join("\n") + "\n");
  return ["fig7.png", "fig7.csv"];
}

/**
 * For the first object of each kind: the rasterized target, the traced one, its mask and the colour row's nearest
 * look.
 */
async function writeLooks(out: string, o: PreparedObject): Promise<string[]> {
  const T = o.scene.frames,
    r = o.scene.resolution;
  const raster = rasterVideo(o);
  const traced = tracedTarget(o);
  const rgb = np.reshape(np.array(traced.images, { dtype: "float32" }), [T, r, r, 3]);
  const mask = np.broadcastTo(tracedMasks(traced, T), [T, r, r, 3]);
  const colour = rowTarget(o, "traced-colour");
  const nearest = objectVideo(o.truePositions, o.geometry, colour.look, o.scene, colour.background, "rgb");
  const show = { zoom: 4, composited: true };
  const rows = [
    { label: "estimator's image formation", frames: await displayFrames(raster, show) },
    { label: "traced target", frames: await displayFrames(rgb, show) },
    { label: "traced mask", frames: await displayFrames(mask, show) },
    { label: "estimator's nearest look (colour row)", frames: await displayFrames(nearest, show) },
  ];
  const pick = stripIndices(T);
  const name = `looks-${o.kind}`;
  writePng(
    join(out, `${name}.png`),
    labelledGrid(
      rows.map((x) => ({ label: x.label, images: pick.map((i) => x.frames[i]!) })),
      pick.map((i) => `${(i / FPS).toFixed(2)} s`),
      "time:",
    ),
  );
  writeGif(join(out, `traced-${o.kind}.gif`), rows[1]!.frames, { fps: FPS });
  return [`${name}.png`, `traced-${o.kind}.gif`];
}

/**
 * A kept record must hold finite errors for the rows it names (null would average as 0, a string as NaN) and at least
 * the first six rows of its kind; a row it lacks (added since it was written) is fitted on resuming.
 */
export function validObjectRecord(r: ObjectRecord, index: number, where: string): ObjectRecord {
  if (!OBJECT_KINDS.includes(r.kind))
    throw new InputFileError(
      where,
      `dataset: ${where} (object ${index}) has kind ${JSON.stringify(r.kind)}, ` +
        `not one of ${OBJECT_KINDS.join(", ")}; ` +
        `delete it to refit that object.`,
    );
  const named = r.relMae && typeof r.relMae === "object" ? Object.keys(r.relMae) : [];
  sysid.validateRecord(
    r,
    index,
    ROWS.filter((row, k) => row.kinds.includes(r.kind) && (k < ORIGINAL_ROWS || named.includes(row.name))).map(
      (row) => row.name,
    ),
    ["mass"],
    where,
  );
  return r;
}

/** The rows every record has held since the table's first runs; those after them may be fitted into kept records. */
const ORIGINAL_ROWS = 6;

/** The rows of its kind a kept record lacks. */
const missingRows = (r: ObjectRecord): Row[] => ROWS.filter((row) => row.kinds.includes(r.kind) && !r.relMae[row.name]);

async function run(ctx: ExperimentContext): Promise<ImperfectResult> {
  const mode = ctx.flags.quick ? "quick" : "full";
  const cfg = IMPERFECT_SETTINGS[mode];
  const objects = ctx.flags.dataset ?? cfg.objects;
  const steps = ctx.flags.iters ?? cfg.steps;
  const settings = { ...cfg, objects, steps };
  const shard = ctx.flags.shard;
  const store = fileRecordStore<ObjectRecord>(ctx.out, "imperfect-models", runKey(ctx), { shard });
  // Without --shard over shards' records: a merge, refused while a shard's objects are unfinished.
  if (!shard) {
    const present = globalThis.Array.from({ length: objects }, (_, i) => i).filter((i) => store.load(i) !== null);
    sysid.refuseIncompleteMerge(
      "imperfect-models",
      globalThis.Array.from({ length: objects }, (_, i) => i).filter((i) => !present.includes(i)),
      present.map((i) => store.origin!(i)),
    );
  }
  const records: ObjectRecord[] = [];
  const files: string[] = [];
  for (let i = 0; i < objects; i++) {
    const mine = !shard || i % shard.count === shard.index;
    const stored = store.load(i);
    const kept = stored ? validObjectRecord(stored, i, store.where!(i)) : undefined;
    // A kept record is complete, or another shard's (which fits the rows it lacks).
    if (kept && !(mine && missingRows(kept).length)) {
      records.push(kept);
      continue;
    }
    if (!mine) continue;
    const o = prepare(ctx.flags.seed, i, settings);
    const record = await fitObject(ctx, o, settings, kept);
    store.save(record);
    records.push(record);
  }
  // The pictures of each kind's first object (cheap: no fitting).
  if (!shard)
    for (let k = 0; k < Math.min(objects, OBJECT_KINDS.length); k++)
      files.push(...(await writeLooks(ctx.out, prepare(ctx.flags.seed, k, settings))));
  const missing = objects - records.length;
  if (missing > 0)
    ctx.log(
      `[imperfect-models] ${missing} of ${objects} objects are fitted by other shards; ` +
        `rerun without --shard once they are done to merge`,
    );
  const rows = summarise(records);
  const fig7 = fig7Summary(records);
  const table = tableMarkdown(rows);
  // A shard's part (1/N of the objects) is never written where the merged table goes: its records are on disk, its
  // summary in its own result file.
  if (!shard) {
    writeAtomic(join(ctx.out, "objects.json"), JSON.stringify(records, null, 1) + "\n");
    writeAtomic(join(ctx.out, "table.md"), table + "\n");
    files.push("objects.json", "table.md");
    if (fig7) files.push(...writeFig7(ctx.out, fig7, records.filter((r) => r.fig7).length));
  }
  ctx.log(`\nTable 4 (left), ${records.length} objects:\n${table}`);
  const perKind = Object.fromEntries(
    OBJECT_KINDS.map((k) => [k, records.filter((r) => r.kind === k).length]),
  ) as Record<ObjectKind, number>;
  return { objects: records.length, perKind, settings, rows, fig7, table, files };
}

export const experiment: Experiment<ImperfectResult> = {
  name: "imperfect-models",
  description:
    "mass of rigid, deformable and cloth objects with deliberately wrong dynamics or rendering models " +
    "(paper Table 4 left) and Fig. 7 (colour vs shading vs texture); " +
    "--dataset N objects",
  run,
};

await mainIfEntry(experiment, import.meta.url);
