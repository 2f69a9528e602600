/**
 * pytorch3d's camera names: lookAtViewTransform's (R, T) and orthographicCamera's projection
 * against numbers written out from pytorch3d's formulas (look_at_view_transform,
 * FoVOrthographicCameras.transform_points, transcribed in numpy); (R, T) cameras equal look-at
 * ones; an orthographic render does not shrink with distance, a perspective one does.
 */
import { describe, expect, it } from "vitest";
import { grad, np, render, type Array } from "../src/index.js";

const f64 = { dtype: "float64" as const };
function close(a: Array, want: number[][] | number[], tol = 1e-12): void {
  const got = [...a.dataSync()],
    w = (want as (number | number[])[]).flat() as number[];
  expect(got.length).toBe(w.length);
  got.forEach((g, i) => expect(Math.abs(g - w[i]!)).toBeLessThan(tol));
}

// pytorch3d look_at_view_transform(dist=3, elev=30, azim=45)
const R1 = [
  [-0.7071067811865477, -0.3535533905932737, -0.6123724356957945],
  [0, 0.8660254037844387, -0.49999999999999994],
  [0.7071067811865475, -0.3535533905932738, -0.6123724356957946],
];
const T1 = [1.7395477645044287e-16, 1.2602541090058312e-16, 3];
// look_at_view_transform(dist=2, elev=-20, azim=200, at=((0.5, 0.2, -0.3),))
const R2 = [
  [0.7886919516188061, -0.2640462759788678, 0.5551977752057463],
  [0, 0.9030710521738463, 0.42949118119656676],
  [-0.6147885859803506, -0.3387362379009865, 0.7122448705894394],
];
const T2 = [-0.5787825516035082, -0.15021194381563144, 1.9085196173721823];
// FoVOrthographicCameras(znear=1, zfar=10, min_x=-1, max_x=2, min_y=-0.5, max_y=1.5, scale_xyz=((1.5, 0.8, 1),),
//                        R=R1, T=T1)
//   .transform_points(P)[:, :2] and the view-space z of P
const P = [
  [0, 0, 0],
  [0.3, -0.7, 1.1],
  [-1.2, 0.4, 0.25],
];
const NDC = [
  [-0.33333333333333315, -0.4999999999999999],
  [0.23235209161590492, -1.380954023583752],
  [0.6919714993871611, 0.04582870606190848],
];
const VIEW_Z = [3, 2.4926785900258874, 3.3817538139110046];

describe("lookAtViewTransform (pytorch3d's look_at_view_transform)", () => {
  it("R and T equal pytorch3d's, from angles and with an `at`", () => {
    const a = render.lookAtViewTransform({ dist: 3, elev: 30, azim: 45, dtype: "float64" });
    expect(a.R.shape).toEqual([1, 3, 3]);
    close(a.R, R1);
    close(a.T, T1);
    const b = render.lookAtViewTransform({ dist: 2, elev: -20, azim: 200, at: [0.5, 0.2, -0.3], dtype: "float64" });
    close(b.R, R2);
    close(b.T, T2);
    const rad = render.lookAtViewTransform({
      dist: 3,
      elev: Math.PI / 6,
      azim: Math.PI / 4,
      degrees: false,
      dtype: "float64",
    });
    close(rad.R, R1);
  });

  it("batches over angle lists and eyes; X_view = X·R + T puts the eye at the origin looking down +z", () => {
    const { R, T } = render.lookAtViewTransform({ dist: [3, 2], elev: 30, azim: [45, -10], dtype: "float64" });
    expect(R.shape).toEqual([2, 3, 3]);
    close(np.take(R, 0, 0), R1);
    close(np.take(T, 0, 0), T1);
    const eye = np.array([1, 2, 3], f64);
    const v = render.lookAtViewTransform({ eye, dtype: "float64" });
    close(np.add(np.matmul(eye.reshape([1, 3]), np.take(v.R, 0, 0)), v.T), [[0, 0, 0]], 1e-12);
    close(np.add(np.matmul(np.zeros([1, 3], f64), np.take(v.R, 0, 0)), v.T), [[0, 0, Math.hypot(1, 2, 3)]], 1e-12);
    expect(() => render.lookAtViewTransform({ dist: [1, 2], elev: [1, 2, 3] })).toThrow(
      /elev has 3 values but the batch has 3|dist has 2 values but the batch has 3/,
    );
  });
});

describe("orthographicCamera (pytorch3d's FoVOrthographicCameras)", () => {
  const opts = {
    minX: -1,
    maxX: 2,
    minY: -0.5,
    maxY: 1.5,
    scale: [1.5, 0.8, 1],
    near: 1,
    far: 10,
    dtype: "float64" as const,
  };
  it("projects to pytorch3d's NDC, from a look-at and from (R, T)", () => {
    for (const cam of [
      render.orthographicCamera({ ...opts, dist: 3, elev: 30, azim: 45 }),
      render.orthographicCamera({ ...opts, R: R1, T: T1 }),
    ]) {
      const p = render.projectPoints(cam, np.array(P, f64));
      close(p.xy, NDC);
      close(p.depth, VIEW_Z);
    }
  });

  it("parallel projection: no division by depth, gradients of the projection are constant in depth", () => {
    const cam = render.orthographicCamera({ dist: 4, dtype: "float64" }); // on +z looking at the origin
    const near = render.projectPoints(cam, np.array([[0.5, 0.25, 3]], f64)).xy,
      far = render.projectPoints(cam, np.array([[0.5, 0.25, -3]], f64)).xy;
    close(near, [...far.dataSync()]);
    const g = grad((p: Array) => np.sum(render.projectPoints(cam, p).xy))(np.array([[0.1, 0.2, -5]], f64));
    close(g, [[-1, 1, 0]]); // camera x = −world x for a camera on +z (pytorch3d's +X left)
  });

  it("an orthographic render keeps its size with distance; a perspective one shrinks", () => {
    const cube = render.meshFromData(render.boxData([0.3, 0.3, 0.3]));
    const coverage = (cam: render.Camera) =>
      np.sum(np.take(render.render(cube, cam, { width: 32, height: 32 }), 3, -1)).item() as number;
    const o1 = coverage(render.orthographicCamera({ dist: 3, elev: 20, azim: 30 })),
      o2 = coverage(render.orthographicCamera({ dist: 6, elev: 20, azim: 30 }));
    expect(o1).toBeGreaterThan(30);
    expect(Math.abs(o1 - o2) / o1).toBeLessThan(0.02);
    const vt = (d: number) => render.lookAtViewTransform({ dist: d, elev: 20, azim: 30 });
    const p1 = coverage(render.cameraFromViewTransform(vt(3))),
      p2 = coverage(render.cameraFromViewTransform(vt(6)));
    expect(p2).toBeLessThan(0.4 * p1); // ≈ (3/6)² of the area
  });

  it("cameraFromViewTransform equals the look-at perspective camera; bad input is refused", () => {
    const a = render.cameraFromViewTransform({ R: R1, T: T1 }, { fovY: 50, dtype: "float64" });
    const eye = render.lookAtViewTransform({ dist: 3, elev: 30, azim: 45, dtype: "float64" });
    const b = render.perspectiveCamera({
      eye: [...np.neg(np.matmul(np.take(eye.R, 0, 0), np.take(eye.T, 0, 0))).dataSync()],
      fovY: 50,
      dtype: "float64",
    });
    const pts = np.array(P, f64);
    close(render.projectPoints(a, pts).xy, [...render.projectPoints(b, pts).xy.dataSync()], 1e-12);
    expect(() => render.orthographicCamera({ minX: 1, maxX: 1 })).toThrow(/minX < maxX/);
    expect(() => render.orthographicCamera({ R: R1 })).toThrow(/give both R and T/);
    expect(() => render.intrinsics(render.orthographicCamera(), 8, 8)).toThrow(
      /orthographic camera has no pinhole matrix/,
    );
  });
});
