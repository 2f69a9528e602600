/**
 * A hand (RISP's articulated environment): a fixed palm and 13 revolute joints — four fingers of
 * three flexion joints each and a one-joint thumb — every joint within [−π/4, π/4] (RISP B.1.3)
 * by a stiff one-sided spring, with joint stiffness and damping as differentiable parameters and
 * motor torques as actions. The palm faces −z (towards a camera on −z); positive angles curl the
 * fingers and swing the thumb towards it. Drawn as one box per link plus the palm.
 */
import type { Array } from "../../core/array.js";
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import { articulatedSystem, type JointSpec } from "./build.js";
import { linkFrames, pointsInWorld } from "./kinematics.js";
import type { ArticulatedState, ArticulatedSystem } from "./types.js";

type Vec3 = readonly [number, number, number];

export interface HandOptions {
  /**
   * Joint stiffness (N·m/rad, default 1: holds the fingers up against gravity) and damping (N·m·s/rad, default 2e-4:
   * explicit steps need dt < 2·I/b for the lightest link's inertia I), one value for all joints or one per joint (13).
   */
  readonly stiffness?: number | readonly number[];
  readonly damping?: number | readonly number[];
  /** Mass of each finger link (kg, default 0.05). */
  readonly linkMass?: number;
  /** Where the palm's centre is (m). */
  readonly base?: Vec3;
  readonly gravity?: Vec3;
  readonly q?: readonly number[];
  readonly qd?: readonly number[];
  readonly dtype?: DType;
}

export const HAND_JOINTS = 13;
/** Palm half-extents (m): width (x), height (y), thickness (z). */
const PALM: Vec3 = [0.09, 0.1, 0.025];
/**
 * Finger x positions along the palm's top edge and link lengths (m): a hand twice life size. On
 * RISP's joint stiffness 1 its fastest mode rings at ~600 rad/s (~1,200 against a limit): explicit
 * steps of ≲ 1 ms (30 fps × 32 substeps).
 */
const FINGERS: readonly { x: number; lengths: Vec3 }[] = [
  { x: -0.066, lengths: [0.084, 0.056, 0.044] },
  { x: -0.022, lengths: [0.094, 0.062, 0.048] },
  { x: 0.022, lengths: [0.088, 0.058, 0.046] },
  { x: 0.066, lengths: [0.07, 0.046, 0.038] },
];
const THUMB = { offset: [PALM[0], -0.02, 0] as Vec3, length: 0.09 };
const HALF_WIDTH = 0.016;

export interface Hand {
  readonly system: ArticulatedSystem;
  /** Each joint's link: its direction in its own frame (unit) and length. */
  readonly links: readonly { readonly direction: Vec3; readonly length: number }[];
}

export function hand(o: HandOptions = {}): { hand: Hand; state: ArticulatedState } {
  const per = (v: number | readonly number[] | undefined, fallback: number, i: number) =>
    v === undefined ? fallback : typeof v === "number" ? v : v[i]!;
  for (const [name, v] of [
    ["stiffness", o.stiffness],
    ["damping", o.damping],
  ] as const) {
    if (typeof v === "object" && v.length !== HAND_JOINTS)
      throw new Error(`hand: ${name} needs one value or one per joint (${HAND_JOINTS}), got ${v.length}.`);
  }
  const m = o.linkMass ?? 0.05;
  const joints: JointSpec[] = [],
    links: Hand["links"][number][] = [];
  const link = (parent: number, offset: Vec3, axis: Vec3, direction: Vec3, length: number) => {
    const i = joints.length;
    // Two point masses along the link: inertia about the joint as well as weight.
    const at = (f: number): Vec3 => [direction[0] * f * length, direction[1] * f * length, direction[2] * f * length];
    joints.push({
      parent,
      offset,
      axis,
      points: [
        { at: at(0.25), mass: m / 2 },
        { at: at(0.75), mass: m / 2 },
      ],
      stiffness: per(o.stiffness, 1, i),
      damping: per(o.damping, 2e-4, i),
    });
    links.push({ direction, length });
    return i;
  };
  for (const f of FINGERS) {
    let parent = -1,
      offset: Vec3 = [f.x, PALM[1], 0];
    for (const L of f.lengths) {
      parent = link(parent, offset, [-1, 0, 0], [0, 1, 0], L);
      offset = [0, L, 0];
    }
  }
  link(-1, THUMB.offset, [0, 1, 0], [1, 0, 0], THUMB.length);
  const { system, state } = articulatedSystem(joints, {
    base: o.base ?? [0, 1, 0],
    gravity: o.gravity,
    limits: [-Math.PI / 4, Math.PI / 4],
    limitStiffness: 3,
    ...(o.q ? { q: o.q } : {}),
    ...(o.qd ? { qd: o.qd } : {}),
    dtype: o.dtype,
  });
  return { hand: { system, links }, state };
}

/** Eight corners and twelve outward (CCW) triangles of a box between `lo` and `hi`. */
function box(lo: Vec3, hi: Vec3, first: number): { corners: number[][]; faces: number[][] } {
  const corners = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => [
    k & 1 ? hi[0] : lo[0],
    k & 2 ? hi[1] : lo[1],
    k & 4 ? hi[2] : lo[2],
  ]);
  const quads = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
  ];
  return {
    corners,
    faces: quads.flatMap(([a, b, c, d]) =>
      [
        [a!, b!, c!],
        [a!, c!, d!],
      ].map((t) => t.map((x) => x + first)),
    ),
  };
}

export interface HandMesh {
  /** Triangles [F, 3] over the palm's 8 vertices then 8 per link. */
  readonly faces: Array;
  /** Vertices of the pose q [J] as world positions [8·(J + 1), 3]. */
  vertices(q: Array): Array;
}

export function handMesh(h: Hand): HandMesh {
  const palm = box([-PALM[0], -PALM[1], -PALM[2]], PALM, 0);
  const parts = h.links.map((l, j) => {
    const end: Vec3 = [l.direction[0] * l.length, l.direction[1] * l.length, l.direction[2] * l.length];
    const lo: Vec3 = [
      Math.min(0, end[0]) - HALF_WIDTH * (1 - Math.abs(l.direction[0])),
      Math.min(0, end[1]) - HALF_WIDTH * (1 - Math.abs(l.direction[1])),
      -HALF_WIDTH,
    ];
    const hi: Vec3 = [
      Math.max(0, end[0]) + HALF_WIDTH * (1 - Math.abs(l.direction[0])),
      Math.max(0, end[1]) + HALF_WIDTH * (1 - Math.abs(l.direction[1])),
      HALF_WIDTH,
    ];
    return box(lo, hi, 8 * (j + 1));
  });
  const dtype = h.system.points.dtype;
  const palmLocal = np.array(palm.corners, { dtype });
  const linkLocal = np.array(
    parts.flatMap((p) => p.corners),
    { dtype },
  );
  const vertexLink = parts.flatMap((_, j) => [0, 1, 2, 3, 4, 5, 6, 7].map(() => j));
  return {
    faces: np.array([...palm.faces, ...parts.flatMap((p) => p.faces)], { dtype: "int32" }),
    vertices: (q) =>
      np.concatenate(
        [np.add(palmLocal, h.system.base), pointsInWorld(linkFrames(h.system, q), vertexLink, linkLocal)],
        0,
      ),
  };
}
