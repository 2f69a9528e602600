"""Where the engines tip the held-out light cylinder over (by hand; seconds): MuJoCo and PyBullet simulate it at its
truth but for μ, over a range of μ, and print each run's largest tilt and final height. A rigid body pushed at its
centre of mass and sliding tips once μ > r/(h/2) (0.78 here). gradsim's side: tools/outside/tip-threshold.ts.

    python3 tools/outside/tip_threshold.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import HELD_OUT  # noqa: E402
from engines import simulate  # noqa: E402
from geometry import quat_xyzw_to_matrix  # noqa: E402
from make_cases import FPS, initial_state, shape_of  # noqa: E402

MUS = (0.6, 0.65, 0.7, 0.75, 0.78, 0.8, 0.85)


def main():
    case = next(c for c in HELD_OUT if c["name"] == "cylinder-light-mujoco")
    shape = shape_of(case)
    for engine in ("mujoco", "pybullet"):
        for mu in MUS:
            full = dict(case, engine=engine, mu=mu, fps=FPS, initialState=initial_state(case, shape), dropped=False)
            xs, qs = simulate(full, shape)
            tilt = max(np.degrees(np.arccos(np.clip(quat_xyzw_to_matrix(q)[1, 1], -1, 1))) for q in qs)
            print(f"{engine:8s} mu {mu:.2f}: largest tilt {tilt:6.2f}°, final height {xs[-1][1] * 1e3:6.1f} mm", flush=True)


if __name__ == "__main__":
    main()
