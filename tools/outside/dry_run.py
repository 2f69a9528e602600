"""Simulate every case without rendering and say whether the body stays in view (quick; by hand)."""
import sys, os
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES, HELD_OUT
from make_cases import shape_of, camera_for, initial_state, FPS
from engines import simulate
from geometry import project, quat_xyzw_to_matrix

# --held-out: the held-out cases (cases.HELD_OUT) instead of the set's.
names = [a for a in sys.argv[1:] if a != "--held-out"]
for case in HELD_OUT if "--held-out" in sys.argv[1:] else CASES:
    if names and case["name"] not in names:
        continue
    shape = shape_of(case)
    cam, K, R, t = camera_for(case)
    st = initial_state(case, shape)
    xs, qs = simulate(dict(case, fps=FPS, initialState=st, dropped="drop_height" in case), shape)
    lo, hi, zmin = np.inf, -np.inf, np.inf
    inside = True
    for x, q in zip(xs, qs):
        uv, z = project(K, R, t, (quat_xyzw_to_matrix(q) @ shape.key_points().T).T + x)
        inside &= bool((uv[:, 0] >= 0).all() and (uv[:, 0] <= K["width"] - 1).all() and (uv[:, 1] >= 0).all() and (uv[:, 1] <= K["height"] - 1).all())
        zmin = min(zmin, z.min())
    up = quat_xyzw_to_matrix(qs[-1]) @ [0, 1, 0]
    v = np.linalg.norm(xs[-1] - xs[-2]) * FPS
    print(f"{case['name']:26s} travel {np.linalg.norm(xs[-1]-xs[0]):.3f} m  final {np.round(xs[-1],3)}  body-y·world-y {up[1]:+.2f}  final speed {v:.3f} m/s  in view {inside}  nearest depth {zmin:.2f} m")
