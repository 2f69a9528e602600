/**
 * Rigid-body ground contact (`contact.rigidGround`, mass-normalised): a body placed at its
 * geometric rest height stays there for any mass and any coefficients in the documented ranges,
 * friction acts from the first substep (closed-form Coulomb sliding distance), and the rollout's
 * gradients agree with float64 central differences on sliding, bouncing and tipping scenes at the
 * documented defaults.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, np, type Array } from "../src/index.js";
import { contact, meshes, rigid } from "../src/models/index.js";

type Vec3 = [number, number, number];
const G = 9.8;

/** A box of half-extents h and the given mass, COM at `position`. */
function boxBody(h: Vec3, mass: number, o: rigid.MeshBodyOptions = {}): rigid.BodySpec {
  const b = rigid.meshBody(meshes.box(...h), o);
  return { ...b, mass, inertia: b.inertia.map((x) => (x * mass) / b.mass) };
}

/** Fixed weights [frames, 1, 3] that make a trajectory's positions a scalar loss. */
const sineWeights = (frames: number): Array =>
  np
    .array(
      globalThis.Array.from({ length: frames * 3 }, (_, i) => Math.sin(1.7 * i + 0.3)),
      { dtype: "float64" },
    )
    .reshape([frames, 1, 3]);

const stepFor = (c: { ke: number; kd: number; kf: number }) => Math.min(1 / 480, contact.rigidContactStepLimit(c));

function heights(
  body: rigid.BodySpec,
  g: contact.GroundContact,
  dt: number,
  steps: number,
): { y: number[]; x: number[] } {
  const { system, state } = rigid.rigidSystem([body], { ground: g, dtype: "float64" });
  const s = rigid.simulate(system, state, { dt, substeps: 1, frames: steps });
  const x = globalThis.Array.from(s.x.dataSync());
  return { y: x.filter((_, i) => i % 3 === 1), x: x.filter((_, i) => i % 3 === 0) };
}

describe("rigid contact: a body at rest is at rest", () => {
  const settings = [
    { ke: 1e4, kd: 0, kf: 0, smoothing: 1e-3 },
    { ke: 3e4, kd: 150, kf: 200, smoothing: 5e-3 },
    { ke: 1e5, kd: 600, kf: 600, smoothing: 2e-2 },
    { ke: 1e4, kd: 600, kf: 50, smoothing: 2e-2 },
    { ke: 3e4, kd: 2000, kf: 5000, smoothing: 5e-3 },
  ];
  it.each(settings)("boxes of 0.3–10 kg stay within 1 mm of their rest height for 1 s (%o)", (c) => {
    const dt = stepFor(c);
    for (const mass of [0.3, 0.7, 2.5, 6, 10]) {
      for (const h of [
        [0.2, 0.2, 0.2],
        [0.3, 0.05, 0.1],
      ] as Vec3[]) {
        const { y } = heights(
          boxBody(h, mass, { position: [0, h[1], 0] }),
          contact.rigidGround({ ...c, mu: 0.5, dtype: "float64" }),
          dt,
          Math.round(1 / dt),
        );
        const worst = Math.max(...y.map((v) => Math.abs(v - h[1])));
        expect(worst, `mass ${mass}, box ${h}`).toBeLessThan(1e-3);
      }
    }
  });

  it("a sphere resting on its contact radius stays put", () => {
    const ball = { ...rigid.sphereBody(0.1, { position: [0, 0.1, 0] }) };
    const { y } = heights(ball, contact.rigidGround({ dtype: "float64" }), 1 / 480, 480);
    expect(Math.max(...y.map((v) => Math.abs(v - 0.1)))).toBeLessThan(1e-3);
  });

  it("a resting body carries exactly its weight at t = 0 (friction acts from the first substep)", () => {
    const body = boxBody([0.2, 0.1, 0.15], 2.5, { position: [0, 0.1, 0] });
    const { system, state } = rigid.rigidSystem([body], {
      ground: contact.rigidGround({ dtype: "float64" }),
      dtype: "float64",
    });
    const f = rigid.wrench(system, state).force.dataSync();
    expect(Math.abs(f[1]!)).toBeLessThan(1e-9 * 2.5 * G);
  });
});

describe("rigid contact: Coulomb sliding", () => {
  it.each([
    [0.1, 1.5],
    [0.3, 2],
    [0.5, 2.5],
    [0.8, 3],
  ])("μ = %f, v0 = %f m/s: the box slides v0²/(2μg) to within 1%", (mu, v0) => {
    for (const mass of [0.3, 2.5, 10]) {
      const c = { ...contact.RIGID_GROUND_DEFAULTS };
      const dt = 1 / 960;
      const expected = (v0 * v0) / (2 * mu * G);
      const steps = Math.ceil((v0 / (mu * G) + 0.3) / dt);
      const { x } = heights(
        boxBody([0.1, 0.1, 0.1], mass, { position: [0, 0.1, 0], velocity: [v0, 0, 0] }),
        contact.rigidGround({ ...c, mu, dtype: "float64" }),
        dt,
        steps,
      );
      expect(
        Math.abs(x[x.length - 1]! / expected - 1),
        `mass ${mass}: ${x[x.length - 1]} m vs ${expected} m`,
      ).toBeLessThan(0.01);
    }
  });
});

describe('rigid contact: the friction\'s load shared over the touching points (frictionLoad: "shared")', () => {
  it("a pitched box's corners carry unequal normal forces but bound friction by equal shares of the sum", () => {
    const f64 = (x: unknown) => np.array(x, { dtype: "float64" });
    // Four bottom corners of one 2 kg box at rest, the front pair 1 mm deeper (a box pitched by its push), and a fifth
    // point above the floor; per point its normal force and the load that bounds its friction.
    const at = (frictionLoad: "point" | "shared") => {
      const r = contact.rigidGroundNormal(
        contact.rigidGround({ frictionLoad, dtype: "float64" }),
        f64([
          [0.1, -0.0015, 0.1],
          [0.1, -0.0015, -0.1],
          [-0.1, -0.0005, 0.1],
          [-0.1, -0.0005, -0.1],
          [0, 0.05, 0],
        ]),
        np.zeros([5, 3], { dtype: "float64" }),
        np.zeros([5], { dtype: "float64" }),
        np.array([0, 0, 0, 0, 0], { dtype: "int32" }),
        f64([2]),
        f64([0, -G, 0]),
      );
      return { fn: globalThis.Array.from(r.fn.dataSync()), load: globalThis.Array.from(r.load.dataSync()) };
    };
    const { fn, load } = at("shared");
    expect(fn[0]! / fn[2]!).toBeGreaterThan(1.2);
    const sum = fn.reduce((a, b) => a + b, 0);
    for (const i of [0, 1, 2, 3]) expect(load[i]! / (sum / 4)).toBeCloseTo(1, 9);
    expect(load[4]).toBe(0);
    const own = at("point");
    expect(own.fn).toEqual(fn);
    expect(own.load).toEqual(fn);
  });

  it("a box launched straight still slides Coulomb's v0²/(2μg) to within 1%", () => {
    const [mu, v0, dt] = [0.4, 2, 1 / 960];
    const expected = (v0 * v0) / (2 * mu * G);
    const { x } = heights(
      boxBody([0.1, 0.1, 0.1], 1.5, { position: [0, 0.1, 0], velocity: [v0, 0, 0] }),
      contact.rigidGround({ mu, frictionLoad: "shared", dtype: "float64" }),
      dt,
      Math.ceil((v0 / (mu * G) + 0.3) / dt),
    );
    expect(Math.abs(x[x.length - 1]! / expected - 1)).toBeLessThan(0.01);
  });

  it("refuses an unknown load rule", () => {
    expect(() => contact.rigidGround({ frictionLoad: "even" as "shared" })).toThrow(/frictionLoad must be/);
  });
});

describe("rigid contact: a sphere rolls (friction at its lowest point)", () => {
  const r = 0.1;
  const simulateBall = (mu: number, mass: number, o: rigid.MeshBodyOptions, push?: rigid.ForceWindow) => {
    const b = rigid.sphereBody(r, { position: [0, r, 0], ...o });
    const { system, state } = rigid.rigidSystem([{ ...b, mass, inertia: b.inertia.map((x) => (x * mass) / b.mass) }], {
      ground: contact.rigidGround({ mu, dtype: "float64" }),
      dtype: "float64",
      ...(push ? { forceWindows: [push] } : {}),
    });
    const dt = 1 / 480;
    const at = (t: number) => Math.round(t / dt) - 1;
    const out = rigid.simulate(system, state, { dt, substeps: 1, frames: Math.round(1.2 / dt) });
    const v = (t: number) => np.take(out.v, at(t), 0).dataSync()[0]!;
    const w = (t: number) => np.take(out.w, at(t), 0).dataSync()[2]!;
    const x = (t: number) => np.take(out.x, at(t), 0).dataSync()[0]!;
    return { v, w, x };
  };

  it.each([
    [0.2, 2],
    [0.5, 3],
  ])(
    "μ = %f, launched sliding at %f m/s without spin: rolls on at 5/7 of it once friction has spun it up",
    (mu, v0) => {
      for (const mass of [0.3, 5]) {
        const ball = simulateBall(mu, mass, { velocity: [v0, 0, 0] });
        const slip = (2 * v0) / (7 * mu * G);
        // While it slides, friction μmg decelerates it; after the slip ends it rolls without slipping: v = −ω·r.
        expect(Math.abs(ball.v(slip / 2) / (v0 - (mu * G * slip) / 2) - 1), `mass ${mass} sliding`).toBeLessThan(0.01);
        expect(Math.abs(ball.v(slip + 0.3) / ((5 * v0) / 7) - 1), `mass ${mass} rolling`).toBeLessThan(0.01);
        expect(Math.abs(-ball.w(slip + 0.3) * r - ball.v(slip + 0.3))).toBeLessThan(1e-3 * v0);
      }
    },
  );

  it("pushed at its centre, it rolls without slipping: a = 5F/(7m)", () => {
    const [F, m, T] = [1.5, 1, 0.6];
    const ball = simulateBall(0.5, m, {}, { body: 0, force: [F, 0, 0], start: 0, end: T });
    const a = (5 * F) / (7 * m);
    expect(Math.abs(ball.x(T) / (0.5 * a * T * T) - 1), `${ball.x(T)} m`).toBeLessThan(0.01);
    // No rolling resistance: it keeps its speed after the push.
    expect(Math.abs(ball.v(T + 0.5) / (a * T) - 1)).toBeLessThan(0.01);
  });
});

describe("rigid contact: restitution", () => {
  it.each([0.3, 0.6, 0.85])(
    "a ball dropped with the damping for restitution %f rebounds at that ratio (±0.03)",
    (e) => {
      const ke = contact.RIGID_GROUND_DEFAULTS.ke;
      const kd = contact.rigidGroundDamping(e, { ke });
      expect(contact.rigidGroundRestitution({ ke, kd })).toBeCloseTo(e, 9);
      for (const height of [0.15, 0.5]) {
        const b = rigid.sphereBody(0.08, { position: [0, 0.08 + height, 0] });
        const { system, state } = rigid.rigidSystem([b], {
          ground: contact.rigidGround({ ke, kd, mu: 0.4, dtype: "float64" }),
          dtype: "float64",
          gravity: [0, -9.81, 0],
        });
        // The scenes' step: 30 substeps per frame at 30 fps.
        const dt = 1 / 900;
        const out = rigid.simulate(system, state, {
          dt,
          substeps: 1,
          frames: Math.round((Math.sqrt(height / 4.9) + 0.1) / dt),
        });
        const vy = globalThis.Array.from(out.v.dataSync()).filter((_, i) => i % 3 === 1);
        const impact = Math.min(...vy);
        const rebound = Math.max(...vy.slice(vy.indexOf(impact)));
        expect(Math.abs(rebound / -impact - e), `dropped from ${height} m: ${rebound / -impact}`).toBeLessThan(0.03);
      }
    },
  );

  it("refuses a restitution it cannot give", () => {
    expect(() => contact.rigidGroundDamping(0.05, { ke: 3e4 })).toThrow(/restitution must be in \[0.15, 0.95\]/);
  });
});

describe("rigid contact: stiff friction and damping at the scenes' step (implicit in the step)", () => {
  // 15 substeps per frame at 30 fps: the explicit law needed dt < 0.8/(3·kf), i.e. 113 substeps for kf 5000.
  it.each([1500, 5000])(
    "kf = %i, kd 600: a box pushed from rest slides the closed-form distance to within 0.5%",
    (kf) => {
      const [mu, F, m, T] = [0.4, 20, 2.5, 0.3];
      const a = F / m - mu * G;
      const expected = 0.5 * a * T * T + (a * T) ** 2 / (2 * mu * G);
      const dt = 1 / 450;
      const b = rigid.meshBody(meshes.box(0.1, 0.1, 0.1), { position: [0, 0.1, 0] });
      const { system, state } = rigid.rigidSystem(
        [{ ...b, mass: m, inertia: b.inertia.map((x) => (x * m) / b.mass) }],
        {
          ground: contact.rigidGround({ mu, kf, kd: 600, dtype: "float64" }),
          dtype: "float64",
          forceWindows: [{ body: 0, force: [F, 0, 0], start: 0, end: T }],
        },
      );
      const steps = Math.ceil((T + (a * T) / (mu * G) + 0.2) / dt);
      const x = rigid.simulate(system, state, { dt, substeps: 1, frames: steps }).x.dataSync();
      const travel = x[x.length - 3]!;
      expect(Math.abs(travel / expected - 1), `${travel} m vs ${expected} m`).toBeLessThan(5e-3);
      // At rest afterwards: no creep, no jitter from the stiff friction.
      expect(Math.abs(x[x.length - 3]! - x[x.length - 3 - 30]!)).toBeLessThan(1e-5);
    },
  );

  it("a spinning box dropped on the ground comes to rest at the default step (no energy from friction)", () => {
    const b = rigid.meshBody(meshes.box(0.35, 0.15, 0.3), {
      position: [0, 0.5, 0],
      velocity: [0.3, 0, 0.1],
      angularVelocity: [0, 4, 0],
    });
    const g = contact.rigidGround({ mu: 0.6, dtype: "float64" });
    const { system, state } = rigid.rigidSystem([b], { ground: g, dtype: "float64" });
    const dt = 1 / (30 * Math.ceil(1 / (30 * contact.rigidContactStepLimit(contact.RIGID_GROUND_DEFAULTS))));
    const out = rigid.simulate(system, state, { dt, substeps: 1, frames: Math.round(1.5 / dt) });
    const n = out.w.shape[0]!;
    const ke = (k: number) =>
      rigid.kineticEnergy(system, { ...state, v: np.take(out.v, k, 0), w: np.take(out.w, k, 0) });
    expect(ke(n - 1).item()).toBeLessThan(1e-6);
    const y = np.take(out.x, n - 1, 0).dataSync()[1]!;
    expect(Math.abs(y - 0.15)).toBeLessThan(1e-3);
  });
});

describe("rigid contact: gradients agree with central differences at the defaults (float64)", () => {
  type P = Record<string, Array>;
  const scenes: Record<string, { options: rigid.MeshBodyOptions; window: rigid.ForceWindow }> = {
    sliding: {
      options: { position: [0, 0.1, 0], velocity: [0.3, 0, 0.05] },
      window: { body: 0, force: [6, 0, 0], start: 0, end: 0.1 },
    },
    bouncing: {
      options: {
        position: [0, 0.45, 0],
        rotation: rigid.quatFromAxisAngle([1, 0, 1], 0.3),
        velocity: [0.4, 0, 0],
        angularVelocity: [0.5, 1, 0],
      },
      window: { body: 0, force: [6, 0, 0], start: 0, end: 0.1 },
    },
    tipping: {
      options: { position: [0, 0.1, 0], angularVelocity: [0, 0, -1] },
      window: { body: 0, force: [8, 0, 0], point: [0, 0.08, 0], start: 0, end: 0.1 },
    },
  };
  // Each scene with each corner's friction bounded by its own load; the tipping box also with the load shared.
  const cases = [...Object.keys(scenes).map((n) => [n, "point"] as const), ["tipping", "shared"] as const];
  it.each(cases)("%s, friction load %s: mass, ke, kd, kf, μ and the initial velocity", (name, frictionLoad) => {
    const sc = scenes[name]!;
    const g = contact.rigidGround({ mu: 0.4, frictionLoad, dtype: "float64" });
    const { system, state } = rigid.rigidSystem([boxBody([0.15, 0.1, 0.1], 2.4, sc.options)], {
      ground: g,
      dtype: "float64",
      forceWindows: [sc.window],
    });
    const unitI = np.div(system.inertia, np.reshape(system.mass, [1, 1, 1]));
    const frames = 30;
    const w = sineWeights(frames);
    const loss = (p: P) => {
      const sys = {
        ...system,
        mass: p.mass!,
        inertia: np.mul(np.reshape(p.mass!, [1, 1, 1]), unitI),
        ground: { ...g, ke: p.ke!, kd: p.kd!, kf: p.kf!, mu: p.mu! },
      };
      const out = rigid.simulate(sys, { ...state, v: p.v0! }, { dt: 1 / 480, substeps: 16, frames });
      return np.add(np.sum(np.mul(out.x, w)), np.mul(0.3, np.sum(out.q)));
    };
    const theta: P = { mass: system.mass, ke: g.ke, kd: g.kd, kf: g.kf, mu: g.mu, v0: state.v };
    const L = jit(loss);
    const gr = jit(grad(loss))(theta) as P;
    const eps = 1e-5;
    for (const k of Object.keys(theta)) {
      const x = theta[k]!;
      const d = np.add(np.abs(x), 0.1);
      const ad = np.sum(np.mul(gr[k]!, d)).item();
      const fd =
        (L({ ...theta, [k]: np.add(x, np.mul(d, eps)) }).item() -
          L({ ...theta, [k]: np.sub(x, np.mul(d, eps)) }).item()) /
        (2 * eps);
      // A sliding box's path barely depends on kf once friction saturates (kf 1500): there both must be negligible.
      if (name === "sliding" && k === "kf")
        expect(Math.max(Math.abs(fd), Math.abs(ad)), `${name}: ∂L/∂kf`).toBeLessThan(1e-5);
      else {
        expect(Math.abs(fd), `${name}: ∂L/∂${k} is not negligible`).toBeGreaterThan(1e-6);
        expect(Math.abs(ad - fd), `${name}: ∂L/∂${k} AD ${ad} vs FD ${fd}`).toBeLessThan(2e-3 * Math.abs(fd));
      }
    }
  });
});

describe("rigid contact: a tumbling box's loss is smooth in μ at the default step (float64)", () => {
  // Dropped on a corner at 480 Hz: with the contact's damping linearised only at the step's start, central
  // differences at ±1e-4 were 95% from the gradient (the damping's turn-off as a corner lifts, times the step's
  // whole velocity change); the Newton pass at the first solve's end velocities brings them within 0.2%.
  it("the gradient agrees with central differences at ±1e-4", () => {
    const g = contact.rigidGround({ mu: 0.4, dtype: "float64" });
    const body = boxBody([0.15, 0.1, 0.1], 2.4, {
      position: [0, 0.45, 0],
      rotation: rigid.quatFromAxisAngle([1, 0, 1], 0.3),
      velocity: [0.4, 0, 0],
      angularVelocity: [0.5, 1, 0],
    });
    const { system, state } = rigid.rigidSystem([body], {
      ground: g,
      dtype: "float64",
      forceWindows: [{ body: 0, force: [6, 0, 0], start: 0, end: 0.1 }],
    });
    const frames = 30;
    const w = sineWeights(frames);
    const loss = (mu: Array) => {
      const out = rigid.simulate({ ...system, ground: { ...g, mu } }, state, { dt: 1 / 480, substeps: 16, frames });
      return np.add(np.sum(np.mul(out.x, w)), np.mul(0.3, np.sum(out.q)));
    };
    const L = jit(loss);
    const ad = (jit(grad(loss))(g.mu) as Array).item();
    const eps = 1e-4;
    const fd = (L(np.add(g.mu, eps)).item() - L(np.sub(g.mu, eps)).item()) / (2 * eps);
    expect(Math.abs(ad - fd), `AD ${ad} vs FD ${fd}`).toBeLessThan(1e-2 * Math.abs(ad));
  });
});

describe("rigid contact in float32", () => {
  // No overflow where a point does not touch.
  it("has finite gradients for a body in the air, landing, resting and sliding", () => {
    type P = Record<string, Array>;
    const g = contact.rigidGround({ mu: 0.4 });
    const { system, state } = rigid.rigidSystem(
      [boxBody([0.15, 0.1, 0.12], 0.7, { position: [0, 0.3, 0], velocity: [1, 0, 0] })],
      { ground: g, forceWindows: [{ body: 0, force: [5, 0, 0], start: 0.1, end: 0.4 }] },
    );
    const unitI = np.div(system.inertia, np.reshape(system.mass, [1, 1, 1]));
    const loss = (p: P) => {
      const sys = {
        ...system,
        mass: p.mass!,
        inertia: np.mul(np.reshape(p.mass!, [1, 1, 1]), unitI),
        ground: { ...g, mu: p.mu! },
      };
      return np.sum(np.square(rigid.simulate(sys, state, { dt: 1 / 570, substeps: 19, frames: 30 }).x));
    };
    const gr = jit(grad(loss))({ mass: system.mass, mu: g.mu }) as P;
    for (const k of ["mass", "mu"]) expect(Number.isFinite(np.sum(np.abs(gr[k]!)).item()), k).toBe(true);
  });
});
