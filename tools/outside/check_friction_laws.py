"""How far do the engines' own friction laws move each case? (by hand; seconds per case)

Every case simulated from its truth by MuJoCo (elliptic cone, as the set is made, and MuJoCo's default
pyramidal cone) and by PyBullet (its default cone friction, and the per-direction clamp it uses with
enableConeFriction=0). A case whose final pose moves by centimetres between these laws is one whose
estimate rests on the friction law, not only on the video: gradsim's is the isotropic (elliptic) cone.

    python3 tools/outside/check_friction_laws.py                 # every case
    python3 tools/outside/check_friction_laws.py box-spun-pybullet
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines  # noqa: E402
from cases import CASES  # noqa: E402
from geometry import quat_xyzw_to_matrix  # noqa: E402
from make_cases import FPS, initial_state, shape_of  # noqa: E402

LAWS = [
    ("mujoco", "elliptic"),
    ("mujoco", "pyramidal"),
    ("pybullet", "cone"),
    ("pybullet", "per-direction"),
]


def heading(q):
    """The body's turn about the vertical (degrees), from its x axis in the floor plane."""
    R = quat_xyzw_to_matrix(q)
    return np.degrees(np.arctan2(-R[2, 0], R[0, 0]))


def main(names):
    print(f"{'case':26s} " + "  ".join(f"{e} {law:>13s}" for e, law in LAWS))
    print(f"{'':26s} " + "  ".join(f"{'final x, z (mm), turn (°)':>22s}" for _ in LAWS))
    for case in CASES:
        if names and case["name"] not in names:
            continue
        shape = shape_of(case)
        full = dict(case, fps=FPS, initialState=initial_state(case, shape), dropped="drop_height" in case)
        cells = []
        for engine, law in LAWS:
            xs, qs = engines.simulate(dict(full, engine=engine, cone=law), shape)
            turn = heading(qs[-1]) - heading(qs[0])
            cells.append(f"{xs[-1][0] * 1e3:+7.1f} {xs[-1][2] * 1e3:+7.1f} {turn:+6.1f}")
        print(f"{case['name']:26s} " + "  ".join(f"{c:>22s}" for c in cells), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
