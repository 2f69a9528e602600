/**
 * RISP's paper environments and their downstream problems as library scenes (risp.RISP_ENVS,
 * risp.paperProblem: src/risp/scenes/): states that encode what the meshes show, samplers whose
 * states are frames of the systems' own motions, and problems whose references, guesses and
 * gradients are sound. The experiments that train and fit on them (risp-state, risp-tasks) are
 * tested in experiments-risp.test.ts and experiments-risp-tasks.test.ts.
 */
import { describe, expect, it } from "vitest";
import { grad, init, jit, makeRng, models, np, render, risp, sysid, type Array } from "../src/index.js";

const {
  cubeEnv,
  HAND,
  handEnv,
  paperProblem: rispProblem,
  poseStates,
  quadrotorEnv,
  rigidPoseState,
  RISP_TASKS,
  ROD,
  rodEnv,
} = risp;

await init({ backend: "cpu" });

const f32 = (x: unknown) => np.array(x, { dtype: "float32" });

/** The motion samplers draw 4 distinct frames per rollout: no state of a rollout's 4 repeats another. */
function expectDistinctFramesPerRollout(states: readonly (readonly number[])[]) {
  for (let i = 0; i < states.length; i++) {
    for (let j = i + 1; j < states.length && Math.floor(j / 4) === Math.floor(i / 4); j++) {
      expect(
        states[i]!.some((x, k) => x !== states[j]![k]),
        `states ${i} and ${j}`,
      ).toBe(true);
    }
  }
}

describe("RISP environments", () => {
  it("a pose state (Eq. 18) determines the quadrotor's and the cube's vertices", () => {
    for (const env of [quadrotorEnv(), cubeEnv()]) {
      const { states, vertices } = env.sample(makeRng(3), 20);
      for (const [i, s] of states.entries()) {
        expect(s.length).toBe(9);
        for (let k = 0; k < 3; k++) expect(s[3 + k]! ** 2 + s[6 + k]! ** 2).toBeCloseTo(1, 12);
        const v = vertices[i]!,
          posed = env.pose!(s);
        v.forEach((x, j) => expect(posed[j]!).toBeCloseTo(x, 9));
      }
    }
  });

  // Above the ground but for the soft contact's millimetres; as high as system identification's drop reaches.
  it("cube states are frames of its drops: above the ground, some at impact, as high as sysid's drop reaches", () => {
    const { states, vertices } = cubeEnv().sample(makeRng(5), 192);
    expectDistinctFramesPerRollout(states);
    // A flat drop falls straight: a rollout's 4 frames share x, z and yaw, untilted.
    for (const [i, st] of states.entries()) {
      const first = states[i - (i % 4)]!;
      for (const k of [0, 2, 3, 6])
        expect(Math.abs(st[k]! - first[k]!), `state ${i}, component ${k}`).toBeLessThan(1e-3);
      expect(Math.abs(st[4]!) + Math.abs(st[5]!)).toBeLessThan(1e-3);
    }
    const lowest = vertices.map((v) => Math.min(...globalThis.Array.from(v).filter((_, k) => k % 3 === 1)));
    expect(Math.min(...lowest)).toBeGreaterThan(-0.005);
    expect(lowest.filter((y) => y < 0.01).length).toBeGreaterThan(3); // some frames at the impact
    // Up to the sysid reference's highest frame over its box (the release; then the stiffest bounce).
    const sysid = rispProblem("cube", "sysid"),
      start = np.array(sysid.start, { dtype: "float32" });
    const heights = [0, 1].flatMap((u) =>
      (sysid.rollout(np.array([u], { dtype: "float32" }), start).states.toList() as number[][]).map((s) => s[1]!),
    );
    expect(Math.max(...states.map((s) => s[1]!))).toBeGreaterThan(Math.max(...heights));
  }, 120_000);

  it("a quadrotor rollout of models.rigid maps to pose states whose vertices are the simulated body's", () => {
    const env = quadrotorEnv();
    const { quad, state } = models.rigid.quadrotor({ position: [0.1, 1, -0.1], angularVelocity: [0.4, 1.2, -0.7] });
    // Uneven thrusts: it rolls, pitches and yaws as it climbs.
    const thrusts = np.array(
      globalThis.Array.from({ length: 20 }, () => [3.2, 2.2, 2.6, 2.0]),
      { dtype: "float32" },
    );
    const s = models.rigid.simulateQuadrotor(quad, state, { dt: 1 / 60, frames: 20, controls: thrusts });
    const x = s.x.dataSync(),
      q = s.q.dataSync();
    const body = env.pose!([0, 0, 0, 0, 0, 0, 1, 1, 1]);
    for (const t of [0, 10, 19]) {
      const pose = rigidPoseState(
        [x[3 * t]!, x[3 * t + 1]!, x[3 * t + 2]!],
        [q[4 * t]!, q[4 * t + 1]!, q[4 * t + 2]!, q[4 * t + 3]!],
      );
      const [qx, qy, qz, qw] = [q[4 * t]!, q[4 * t + 1]!, q[4 * t + 2]!, q[4 * t + 3]!];
      const posed = env.pose!(pose);
      for (let j = 0; j < body.length; j += 3) {
        // v' = v + 2w(q×v) + 2q×(q×v), then translate.
        const v = [body[j]!, body[j + 1]!, body[j + 2]!];
        const c1 = [qy * v[2]! - qz * v[1]!, qz * v[0]! - qx * v[2]!, qx * v[1]! - qy * v[0]!];
        const c2 = [qy * c1[2]! - qz * c1[1]!, qz * c1[0]! - qx * c1[2]!, qx * c1[1]! - qy * c1[0]!];
        for (let d = 0; d < 3; d++)
          expect(posed[j + d]!).toBeCloseTo(x[3 * t + d]! + v[d]! + 2 * qw * c1[d]! + 2 * c2[d]!, 4);
      }
    }
    // It did roll.
    expect(Math.abs(rigidPoseState([0, 0, 0], [q[76]!, q[77]!, q[78]!, q[79]!])[5]!)).toBeGreaterThan(0.05);
  });

  // The rollouts: ends fixed, sag under gravity, bent by the central force.
  it("rod states are the spine sensors' vertical displacements in FEM rollouts", () => {
    const env = rodEnv();
    const { states, vertices } = env.sample(makeRng(5), 40);
    expect(env.stateNames.length).toBe(10);
    const V = vertices[0]!.length / 3;
    for (const [i, s] of states.entries()) {
      const v = vertices[i]!;
      // Sensors are on the spine (y = ROD.height at rest): each state component is one vertex's y − height.
      const ys = globalThis.Array.from({ length: V }, (_, j) => v[3 * j + 1]! - ROD.height);
      for (const x of s) expect(ys.some((y) => Math.abs(y - x) < 1e-12)).toBe(true);
      // The fixed ends stay where they were.
      for (let j = 0; j < V; j++)
        if (Math.abs(Math.abs(v[3 * j]!) - ROD.length / 2) < 1e-9)
          expect(Math.abs(v[3 * j + 1]! - ROD.height) <= ROD.thickness / 2 + 1e-6).toBe(true);
      // Symmetric loads: the sensor profile is nearly mirror-symmetric.
      for (let k = 0; k < 5; k++) expect(Math.abs(s[k]! - s[9 - k]!)).toBeLessThan(0.01 + 0.05 * Math.abs(s[k]!));
    }
    expectDistinctFramesPerRollout(states);
    const centre = states.map((s) => (s[4]! + s[5]!) / 2);
    expect(Math.min(...centre)).toBeLessThan(-0.05);
    expect(Math.max(...centre) - Math.min(...centre)).toBeGreaterThan(0.05);
  }, 120_000);

  // They cover system identification's climbs at both ends of the mass box.
  it("quadrotor states are frames of its motions: posed by the states, covering sysid's climbs at both bounds", () => {
    const env = quadrotorEnv();
    const { states, vertices } = env.sample(makeRng(5), 192);
    expectDistinctFramesPerRollout(states);
    for (const i of [0, 77, 191]) {
      const posed = env.pose!(states[i]!);
      expect(Math.max(...vertices[i]!.map((x, k) => Math.abs(x - posed[k]!)))).toBeLessThan(1e-5);
    }
    // The lightest quadrotor of the sysid task climbs to 1.47 m and the heaviest sinks to 0.77 m
    // (independent poses with y in [0.8, 1.2] cover neither); the samples reach past both.
    const sysid = rispProblem("quadrotor", "sysid"),
      start = np.array(sysid.start, { dtype: "float32" });
    const heights = [0, 1].flatMap((u) =>
      (sysid.rollout(np.array([u], { dtype: "float32" }), start).states.toList() as number[][]).map((s) => s[1]!),
    );
    const y = states.map((s) => s[1]!);
    expect(Math.max(...y)).toBeGreaterThan(Math.max(...heights) - 0.05);
    expect(Math.min(...y)).toBeLessThan(Math.min(...heights));
    // Upright-ish and turned as the tasks' starts (0.3 ± 0.3 rad): no pose flipped over.
    expect(Math.min(...states.map((s) => s[7]! * s[8]!))).toBeGreaterThan(0.5);
  }, 120_000);

  it("hand states are frames of its motions: the mesh posed by the angles; a finger's joints bend together", () => {
    const env = handEnv(),
      J = models.articulated.HAND_JOINTS;
    const { states, vertices } = env.sample(makeRng(5), 96);
    expectDistinctFramesPerRollout(states);
    const { hand } = models.articulated.hand({ dtype: "float64" });
    const mesh = models.articulated.handMesh(hand);
    for (const i of [0, 37, 95]) {
      const posed = mesh.vertices(np.array(states[i]!, { dtype: "float64" })).dataSync();
      expect(Math.max(...vertices[i]!.map((x, k) => Math.abs(x - posed[k]!)))).toBeLessThan(1e-9);
    }
    // A finger's outer two joints (shared stiffness and torque) are correlated over the samples
    // (0.69–0.84 here); independent random angles would give ~0.
    const corr = (a: number, b: number) => {
      const x = states.map((s) => s[a]!),
        y = states.map((s) => s[b]!),
        mx = x.reduce((p, q) => p + q) / x.length,
        my = y.reduce((p, q) => p + q) / y.length;
      const sxy = x.reduce((p, q, k) => p + (q - mx) * (y[k]! - my), 0),
        sxx = x.reduce((p, q) => p + (q - mx) ** 2, 0),
        syy = y.reduce((p, q) => p + (q - my) ** 2, 0);
      return sxy / Math.sqrt(sxx * syy);
    };
    for (let f = 0; f < 4; f++) expect(corr(3 * f + 1, 3 * f + 2), `finger ${f + 1}`).toBeGreaterThan(0.5);
    // They move: the fingers swing across tenths of a radian, beyond the starts' ±HAND.start.
    const all = states.flat();
    expect(all.every(Number.isFinite)).toBe(true);
    expect(states.length * J).toBe(all.length);
    expect(Math.max(...all.map(Math.abs))).toBeGreaterThan(HAND.start + 0.2);
  }, 120_000);
});

describe("RISP's downstream problems", () => {
  it("the pose state of a quaternion in array ops is the host's (Eq. 18), for tilted and turned bodies", () => {
    const rng = makeRng(4);
    for (let i = 0; i < 20; i++) {
      const q = [rng.normal(), rng.normal(), rng.normal(), rng.normal()];
      const n = Math.hypot(...q),
        unit = q.map((c) => c / n);
      const x = [rng.normal(), rng.normal(), rng.normal()];
      const host = rigidPoseState(x, unit);
      // Away from pitch = ±90° (where yaw and roll are not defined), the two agree.
      if (Math.abs(host[4]!) > 0.99) continue;
      const ours = poseStates(f32([x]), f32([unit])).dataSync();
      host.forEach((h, k) => expect(ours[k]!).toBeCloseTo(h, 4));
    }
  });

  it("each problem's reference is its own truth, its random guesses worse, its unknowns move the oracle's loss", () => {
    for (const [task, envs] of Object.entries(RISP_TASKS)) {
      for (const env of envs.filter((e) => e !== "hand")) {
        const p = rispProblem(env, task as keyof typeof RISP_TASKS);
        // Imitation's curriculum is for actions in time: the quadrotor's thrusts and the rod's forces (not the hand's,
        // below).
        expect(p.timedActions, `${task} ${env}`).toBe(task !== "sysid" && env !== "cube");
        const start = p.randomStart(makeRng(1));
        if (task !== "control") expect(p.error(p.truth, p.start), `${task} ${env}`).toBeLessThan(1e-6);
        const guess = p.guess(makeRng(2));
        expect(p.error(guess, start), `${task} ${env}`).toBeGreaterThan(0);
        guess.forEach((g, i) => {
          expect(g).toBeGreaterThanOrEqual(p.lower[i]!);
          expect(g).toBeLessThanOrEqual(p.upper[i]!);
        });
        const states = f32(p.reference.states);
        const g = jit(grad((u: Array) => np.mean(np.abs(np.sub(p.rollout(u, f32(start)).states, states)))))(
          f32(guess),
        ) as Array;
        const values = globalThis.Array.from(g.dataSync());
        expect(values.every(Number.isFinite), `${task} ${env}`).toBe(true);
        expect(Math.max(...values.map(Math.abs)), `${task} ${env}`).toBeGreaterThan(1e-4);
      }
    }
  }, 240_000);

  // Control's target image is the imitation's last frame.
  it("the quadrotor's and the cube's reference videos keep the whole body in view", () => {
    for (const [env, task] of [
      ["quadrotor", "sysid"],
      ["quadrotor", "imitation"],
      ["cube", "sysid"],
    ] as const) {
      const p = rispProblem(env, task),
        camera = sysid.renderCamera(p.env.camera, 32, 32);
      for (const [t, v] of p.reference.vertices.entries()) {
        // The renderer's own projection: NDC coordinates in [−1, 1] are in the image.
        const { xy, depth } = render.projectPoints(camera, np.reshape(np.array(v, { dtype: "float64" }), [-1, 3]));
        expect(np.min(depth).item(), `${env} ${task} frame ${t + 1}`).toBeGreaterThan(0);
        expect(np.max(np.abs(xy)).item(), `${env} ${task} frame ${t + 1}`).toBeLessThan(0.95);
      }
    }
  });

  it("the cube's contact stiffness sets its bounce: a stiffer contact gives back more of the impact", () => {
    const p = rispProblem("cube", "sysid");
    const peak = (u: number) => {
      const y = p.rollout(f32([u]), f32(p.start)).states.dataSync();
      return Math.max(...globalThis.Array.from({ length: p.observed.length }, (_, t) => y[9 * t + 1]!).slice(5));
    };
    const [soft, mid, stiff] = [peak(0), peak(0.5), peak(1)];
    expect(mid - soft).toBeGreaterThan(0.02);
    expect(stiff - mid).toBeGreaterThan(0.02);
  });

  // A softer finger swings further.
  it("the hand's joint stiffness is identifiable from motion; its imitation and control rollouts stay finite", () => {
    const p = rispProblem("hand", "sysid");
    // The mean |joint angle| over the video's frames and joints.
    const swing = (u: number[]) => {
      const q = globalThis.Array.from(p.rollout(f32(u), f32(p.start)).states.dataSync());
      return q.reduce((a, x) => a + Math.abs(x), 0) / q.length;
    };
    expect(swing([0.5, 0.5, 0.5, 0.5, 0.5])).toBeGreaterThan(1.2 * swing([1, 1, 1, 1, 1]));
    for (const task of ["imitation", "control"] as const) {
      const q = rispProblem("hand", task),
        rng = makeRng(3);
      // Each finger's torque magnitude and delay shape its whole motion: fitted on the whole video at once.
      expect(q.timedActions).toBe(false);
      const states = globalThis.Array.from(q.rollout(f32(q.guess(rng)), f32(q.randomStart(rng))).states.dataSync());
      expect(states.length).toBe(13 * q.observed.length);
      expect(states.every(Number.isFinite), task).toBe(true);
    }
  }, 120_000);

  it("an environment without the task is a clear error", () => {
    expect(() => rispProblem("cube", "imitation")).toThrow(/cube has no imitation task/);
  });
});
