/**
 * The last silent non-finite values: an infinite state passes no divergence check any more, rigid
 * and articulated inputs are validated where they enter, int32 arrays refuse values they cannot
 * hold, and jit's opt-in checkFinite names a NaN output of a user's own function.
 */
import { describe, expect, it } from "vitest";
import { assertFinite, init, jit, lax, models, np, NonFiniteError, type Array } from "../src/index.js";
import { findDivergence } from "../src/models/common/divergence.js";

await init({ backend: "cpu" });

describe("non-finite values", () => {
  it("the divergence check catches ±Infinity, not only NaN", () => {
    expect(
      findDivergence(
        {
          x: np.array([
            [0, 1],
            [Infinity, 2],
          ]),
        },
        2,
      ),
    ).toMatchObject({ frame: 1, leaf: "x", index: 0, value: Infinity });
    expect(
      findDivergence(
        {
          x: np.array([
            [0, 1],
            [-Infinity, 2],
          ]),
        },
        2,
      ),
    ).toMatchObject({ frame: 1, value: -Infinity });
    expect(
      findDivergence(
        {
          x: np.array([
            [0, 1],
            [3, 2],
          ]),
        },
        2,
      ),
    ).toBeNull();
    // A rigid rollout whose state became infinite (built past rigidSystem's checks) is a DivergenceError, not infinite
    // positions.
    const { system, state } = models.rigid.rigidSystem([models.rigid.sphereBody(0.1)], { dtype: "float64" });
    const v = np.array([[Infinity, 0, 0]], { dtype: "float64" });
    expect(() => models.rigid.simulate(system, { ...state, v }, { dt: 0.01, frames: 3 })).toThrow(
      /diverged — the state stopped being finite \(Infinity\) at frame 0/,
    );
  });

  it("rigidSystem names a non-finite initial state, gravity or force window, and a window with end < start", () => {
    const ball = models.rigid.sphereBody(0.1);
    const sys = models.rigid.rigidSystem;
    expect(() => sys([{ ...ball, velocity: [Infinity, 0, 0] }])).toThrow(
      /bodies\[0\]\.velocity\[0\] must be a finite number \(m\/s\), got Infinity/,
    );
    expect(() => sys([{ ...ball, position: [0, NaN, 0] }])).toThrow(
      /bodies\[0\]\.position\[1\] must be a finite number/,
    );
    expect(() => sys([{ ...ball, angularVelocity: [0, 0, -Infinity] }])).toThrow(/angularVelocity\[2\]/);
    expect(() => sys([{ ...ball, rotation: [0, 0, 0, 0] }])).toThrow(/zero quaternion/);
    expect(() => sys([ball], { gravity: [0, -Infinity, 0] })).toThrow(/gravity\[1\] must be a finite number \(m\/s²\)/);
    const w = { body: 0, force: [1, 0, 0] as [number, number, number], start: 0.1, end: 0.2 };
    expect(() => sys([ball], { forceWindows: [{ ...w, force: [NaN, 0, 0] }] })).toThrow(
      /forceWindows\[0\]\.force\[0\] must be a finite number \(N\)/,
    );
    expect(() => sys([ball], { forceWindows: [{ ...w, end: Infinity }] })).toThrow(
      /forceWindows\[0\]\.end must be a finite number/,
    );
    expect(() => sys([ball], { forceWindows: [{ ...w, start: 0.3 }] })).toThrow(
      /forceWindows\[0\] ends \(end = 0\.2 s\) before it starts \(start = 0\.3 s\).*never be applied/,
    );
    expect(sys([ball], { forceWindows: [w] }).system.forceWindows).toBeDefined();
  });

  it("articulatedSystem names an infinite offset, axis or point", () => {
    const joint = {
      parent: -1,
      offset: [0, 0, 0] as [number, number, number],
      axis: [0, 0, 1] as [number, number, number],
      points: [{ at: [0.1, 0, 0] as [number, number, number], mass: 1 }],
    };
    const art = models.articulated.articulatedSystem;
    expect(() => art([{ ...joint, offset: [Infinity, 0, 0] }])).toThrow(
      /joint 0 offset\[0\] must be a finite number \(m\), got Infinity/,
    );
    expect(() => art([{ ...joint, axis: [0, Infinity, 1] }])).toThrow(/joint 0 axis\[1\] must be a finite number/);
    expect(() => art([{ ...joint, points: [{ at: [0, NaN, 0], mass: 1 }] }])).toThrow(/joint 0 point 0 position\[1\]/);
    expect(() => art([joint], { gravity: [0, NaN, 0] })).toThrow(/gravity\[1\]/);
    expect(art([joint]).system.offset.shape).toEqual([1, 3]);
  });

  it("np.array refuses values int32 cannot hold instead of wrapping them or turning NaN into 0", () => {
    expect(() => np.array([3e9, 1], { dtype: "int32" })).toThrow(
      /element \[0\] is 3000000000, which int32 cannot hold \(its range is -2147483648…2147483647\)/,
    );
    expect(() =>
      np.array(
        [
          [1, 2],
          [NaN, 3],
        ],
        { dtype: "int32" },
      ),
    ).toThrow(/element \[1, 0\] is NaN, which int32 cannot hold \(it has no NaN or infinity\)/);
    expect(() => np.array(Float64Array.from([1, -Infinity]), { dtype: "int32" })).toThrow(/element \[1\] is -Infinity/);
    expect([...np.array([2.7, -2.7, 2147483647, -2147483648], { dtype: "int32" }).dataSync()]).toEqual([
      2, -2, 2147483647, -2147483648,
    ]);
  });

  it("jit's checkFinite names a NaN or infinite output of a rollout; off, the NaN comes back as before", async () => {
    // An unstable explicit rollout: x ← x·(1 + 10) a hundred times overflows float32, then inf − inf is NaN.
    const unstable = (x: Array) => {
      const [last] = lax.scan((s: Array) => [np.mul(s, 11), null], x, null, { length: 100 });
      return { last, gap: np.sub(last, last) };
    };
    const x = np.array([1, 0], { dtype: "float32" });
    const plain = jit(unstable)(x);
    expect(Number.isNaN(plain.gap.dataSync()[0]!)).toBe(true);
    expect(() => jit(unstable, { checkFinite: true })(x)).toThrow(NonFiniteError);
    expect(() => jit(unstable, { checkFinite: true })(x)).toThrow(
      /jit\(unstable\) with checkFinite: output 0 of 2 \(float32\[2\]\) holds NaN at flat index 0.*setDebugNans/,
    );
    expect(jit(unstable, { checkFinite: true })(np.array([0, 0], { dtype: "float32" })).last.shape).toEqual([2]);
    await expect(assertFinite(plain, "my rollout")).rejects.toThrow(/my rollout: output 0 of 2 .* holds NaN/);
    await expect(assertFinite({ a: np.array([1, 2]) })).resolves.toBeUndefined();
  });
});
