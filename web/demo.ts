/**
 * The page's experiment, free of the DOM (so Node can run it too): a scene with one hidden
 * parameter renders its "observed" video (or takes a visitor's frames), and sysid.estimate
 * recovers the parameter from the pixels, reporting every iterate.
 */
import { np, sysid, type Array, resizeInto, type Frame } from "gradsim";
const { beamProblem, buildTwistBeam, defaultTwistBeam } = sysid;

export interface DemoSettings {
  /** Image side in pixels. */
  readonly size: number;
  /** Frames of the video (at 30 fps). */
  readonly frames: number;
  /** Adam steps. */
  readonly steps: number;
}

export const DEFAULT_SETTINGS: DemoSettings = { size: 32, frames: 30, steps: 30 };

export interface DemoScene {
  readonly id: string;
  readonly title: string;
  /** The hidden parameter: name, unit, slider range, default truth and the estimator's first guess. */
  readonly unknown: {
    readonly name: string;
    readonly unit: string;
    readonly range: readonly [number, number];
    readonly truth: number;
    readonly initial: number;
  };
  /** The estimation problem at these settings (simulate + render). */
  problem(s: DemoSettings): sysid.Problem<Array>;
  /** Adam's learning rate (log-space units) and its end value. */
  readonly lr: readonly [number, number];
}

const BACKGROUND = [0.93, 0.94, 0.96] as const;

/**
 * A box gets a known push in free flight: how far it drifts and how fast it tumbles depends on its
 * mass (paper §4.1.1).
 */
const rigidMass: DemoScene = {
  id: "rigid",
  title: "rigid body: mass from a known push",
  unknown: { name: "mass", unit: "kg", range: [0.5, 6], truth: 2.5, initial: 4.5 },
  lr: [0.15, 0.005],
  problem: (s) => {
    // The demo's scene (examples/rigid-mass.ts), shorter, on a light background, as a camera sees it.
    const scene = sysid.buildRigidScene({
      ...sysid.defaultMassScene(s.size),
      frames: s.frames,
      background: [...BACKGROUND],
      channels: "rgb",
    });
    return sysid.rigidProblem(scene);
  },
};

/**
 * A soft beam (stable Neo-Hookean tets), clamped at one end and set twisting: how fast it
 * untwists and oscillates depends on its stiffness, the Lamé μ (λ = μ here), paper §4.1.2.
 */
const softBeam: DemoScene = {
  id: "soft-beam",
  title: "soft body: stiffness μ of a twisting beam",
  unknown: { name: "mu", unit: "Pa", range: [500, 2500], truth: 1000, initial: 1600 },
  lr: [0.1, 0.005],
  problem: (s) => {
    const beam = beamProblem(buildTwistBeam({ ...defaultTwistBeam(s.size), frames: s.frames }), (p) => ({
      mu: p.mu,
      lambda: p.mu,
    }));
    const bg = np.array([...BACKGROUND], { dtype: "float32" });
    return { ...beam, render: (x: Array) => sysid.overBackground(beam.render!(x), bg, "rgb") };
  },
};

export const SCENES: readonly DemoScene[] = [rigidMass, softBeam];

export const sceneById = (id: string): DemoScene => {
  const s = SCENES.find((x) => x.id === id);
  if (!s) throw new Error(`unknown scene ${JSON.stringify(id)}; the scenes are ${SCENES.map((x) => x.id).join(", ")}.`);
  return s;
};

const unknownsOf = (scene: DemoScene): sysid.Unknown[] => [
  { name: scene.unknown.name, transform: "log", unit: scene.unknown.unit, prior: scene.unknown.range },
];

/** The video of the scene with the parameter at `value`: [frames, H, W, 3] RGB in [0, 1]. */
export function renderVideo(scene: DemoScene, s: DemoSettings, value: number): Array {
  const problem = scene.problem(s);
  const params = sysid.paramsOf(unknownsOf(scene), { [scene.unknown.name]: value });
  return problem.render!(problem.simulate(params, problem.frames));
}

export interface DemoStep {
  readonly step: number;
  readonly loss: number;
  readonly estimate: number;
}

/**
 * How well the estimate explains the video: the loss over every frame against the loss of an empty
 * frame (the scene's background alone). A dropped video of something else — another object, another
 * camera — leaves most of its difference from the background unexplained, and its "estimate" means
 * nothing: the page says so instead of announcing a number.
 */
export interface DemoVerdict {
  readonly status: "fits" | "poor";
  readonly finalLoss: number;
  readonly emptyLoss: number;
  /** 1 − finalLoss / emptyLoss. */
  readonly explained: number;
}

/** A fit explains the video when it accounts for at least this share of the empty-frame loss. */
export const EXPLAINED_NEEDED = 0.9;

export interface DemoResult {
  readonly estimate: number;
  readonly losses: number[];
  readonly seconds: number;
  readonly verdict: DemoVerdict;
}

/** Recover the parameter from `observed` ([frames, H, W, 3]), calling `onStep` at every iterate. */
export async function recover(
  scene: DemoScene,
  s: DemoSettings,
  observed: Array,
  onStep: (st: DemoStep) => void | Promise<void>,
): Promise<DemoResult> {
  const problem = scene.problem(s);
  const want = [problem.frames, s.size, s.size, 3];
  if (observed.shape.join() !== want.join())
    throw new Error(`the target video has shape [${observed.shape}], the scene needs [${want}]`);
  const name = scene.unknown.name;
  const r = await sysid.estimate({
    ...problem,
    observed: { video: observed },
    unknowns: unknownsOf(scene),
    initial: { [name]: scene.unknown.initial },
    method: "pixels",
    settings: {
      optimizer: "adam",
      steps: s.steps,
      adam: { lr: scene.lr[0], lrEnd: scene.lr[1], b1: 0.5 },
      frames: "every5",
      progress: false,
      onStep: (i) => onStep({ step: i.step, loss: i.loss, estimate: i.estimate[name] as number }),
    },
    log: () => {},
  });
  const estimate = r.estimate[name] as number;
  const finalLoss = (await np.mean(np.square(np.sub(renderVideo(scene, s, estimate), observed))).data())[0]!;
  const emptyLoss = (
    await np.mean(np.square(np.sub(observed, np.array([...BACKGROUND], { dtype: "float32" })))).data()
  )[0]!;
  const explained = emptyLoss > 0 ? 1 - finalLoss / emptyLoss : 0;
  return {
    estimate,
    losses: r.losses,
    seconds: r.seconds,
    verdict: { status: explained >= EXPLAINED_NEEDED ? "fits" : "poor", finalLoss, emptyLoss, explained },
  };
}

/**
 * Frames from a visitor (RGBA bytes per frame, any size) as the scene's target video: RGB, area-resampled to the
 * scene's size and spread over its length.
 */
export function videoFromFrames(frames: readonly Frame[], s: DemoSettings): Array {
  if (!frames.length) throw new Error("the target has no frames");
  const out = new Float32Array(s.frames * s.size * s.size * 3);
  for (let k = 0; k < s.frames; k++) {
    const f = frames[Math.min(frames.length - 1, Math.floor((k * frames.length) / s.frames))]!;
    resizeInto(f, [0, 0, f.width, f.height], s.size, s.size, out, k * s.size * s.size * 3);
  }
  return np.reshape(np.array(out, { dtype: "float32" }), [s.frames, s.size, s.size, 3]);
}
