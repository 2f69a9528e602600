"""Make the outside validation set: simulate each case with MuJoCo or PyBullet, render it with
POV-Ray, and write examples/data/outside/<case>/{video.mp4, plate.png, scene.json, truth.json}
plus examples/data/outside/cases.json. Run by hand (not in CI):

    python3 tools/outside/make_cases.py                 # every case
    python3 tools/outside/make_cases.py box-light-mujoco cylinder-pybullet   # some cases
    python3 tools/outside/make_cases.py --held-out      # the held-out cases (cases.HELD_OUT), into
                                                        # examples/data/outside-held-out/

Each case also gets tools/outside/checks/<case>.png: frame 0 and the last frame, magnified, with the
body's edges projected through the scene file's camera in numpy (green: the scene file's initial
state, the pose a user writes; red: the engine's true pose at that frame). Look at them.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import jsonfmt
from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES, FRUSTUM, HELD_OUT
from engines import simulate, G, DT, SETTLE
from geometry import lookat_to_opencv, opencv_from_view, project, quat_xyzw_to_matrix, yaw_quat
from render_povray import object_block, render, scene_text, sensor
from render_blender import render_frames
from shapes import Box, Cylinder, Sphere, ObjMesh, write_frustum_obj

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "examples", "data", "outside")
OUT_HELD_OUT = os.path.join(ROOT, "examples", "data", "outside-held-out")
CHECKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checks")
FPS = 30
CRF = 14
RENDERERS = {"povray": "POV-Ray 3.7 (area light, soft shadows, checkered floor)",
             "blender": "Blender 3.4 Cycles, 48 samples (area light, soft shadows, checkered floor)"}


def shape_of(case):
    s = case["shape"]
    if s[0] == "box":
        return Box(s[1])
    if s[0] == "cylinder":
        return Cylinder(s[1], s[2])
    if s[0] == "sphere":
        return Sphere(s[1])
    if not os.path.exists(FRUSTUM):
        write_frustum_obj(FRUSTUM)
    return ObjMesh(FRUSTUM, "frustum.obj")


def r9(a):
    return [round(float(x), 9) for x in np.ravel(a)]


def camera_for(case):
    """(scene-file camera, K, R, t). Both forms look at the floor from about 2.3 m, in front (−z) of the action."""
    W, H = case["size"]
    if case["camera"] == "eye/at":
        cam = {"eye": [0.35, 1.15, -2.0], "at": [0.05, 0.12, 0.0], "fovY": 36}
        K, R, t = lookat_to_opencv(cam["eye"], cam["at"], cam["fovY"], W, H)
        return cam, K, R, t
    fx = round((H / 2) / np.tan(np.radians(18)), 3)
    K, R, t = opencv_from_view([-0.7, 1.0, -1.9], [0.05, 0.1, 0.05], fx, W, H, cx=(W - 1) / 2 + 1.7, cy=(H - 1) / 2 - 1.3)
    R = np.array([r9(r) for r in R])  # what goes in the file is what renders
    t = np.array(r9(t))
    cam = {"intrinsics": {k: (round(float(v), 6) if isinstance(v, float) else v) for k, v in K.items()}, "pose": {"R": R.tolist(), "t": t.tolist()}}
    return cam, K, R, t


def initial_state(case, shape):
    x, z, yaw = case["start"]
    y = case.get("drop_height", shape.rest_height())
    st = {"position": r9([x, y, z]), "rotation": r9(yaw_quat(yaw)), "velocity": r9(case.get("velocity", [0, 0, 0])), "angularVelocity": [0, 0, 0]}
    return st


def guess(truth, options):
    return next(g for g in options if abs(g - truth) > 0.25 * truth)


def scene_file(case, shape, cam, st):
    unknowns = {"mass": {"initial": guess(case["mass"], (1.0, 3.0)), "prior": [0.1, 20]}}
    if "mu" in case["determines"] and "mu not" not in case["determines"] and "weakly" not in case["determines"]:
        unknowns["mu"] = {"initial": guess(case["mu"], (0.5, 0.3)), "prior": [0.05, 1.2]}
    if case["determines"] == "mu only":
        unknowns = {"mu": unknowns["mu"]}
    return {
        "mesh": shape.scene_mesh(),
        "camera": cam,
        "fps": FPS,
        "resolution": case["size"][1],  # the estimator at the video's own height: the smallest bodies are ~15 px across
        "initialState": st,
        "impulses": case["impulses"],
        "gravity": [0, -G, 0],
        "ground": {"mu": guess(case["mu"], (0.5, 0.3))},
        "background": {"image": "plate.png"},
        "compare": "silhouette",
        "mass": guess(case["mass"], (1.0, 3.0)),
        "unknowns": unknowns,
    }


def overlay(case, shape, K, R, t, frame0, frameN, st, xs, qs):
    """Frame 0 and the last frame, ×4, with the body's edges projected in numpy."""
    S = 4
    def draw(img, x, q, colour, canvas):
        pts = (quat_xyzw_to_matrix(q) @ shape.key_points().T).T + x
        uv, z = project(K, R, t, pts)
        d = ImageDraw.Draw(canvas)
        for i, j in shape.key_edges():
            d.line([tuple((uv[i] + 0.5) * S - 0.5), tuple((uv[j] + 0.5) * S - 0.5)], fill=colour, width=1)
    panels = []
    for img, poses in ((frame0, [(np.array(st["position"]), np.array(st["rotation"]), (0, 255, 0))]),
                       (frameN, [(xs[-1], qs[-1], (255, 40, 40))])):
        big = img.resize((img.width * S, img.height * S), Image.NEAREST)
        for x, q, c in poses:
            draw(img, x, q, c, big)
        panels.append(big)
    out = Image.new("RGB", (panels[0].width * 2 + 8, panels[0].height), (255, 255, 255))
    out.paste(panels[0], (0, 0))
    out.paste(panels[1], (panels[0].width + 8, 0))
    return out


def engine_name(engine):
    from importlib.metadata import version
    return {"mujoco": "MuJoCo " + version("mujoco"), "pybullet": "PyBullet " + version("pybullet") + " (Bullet)"}[engine]


def make(case, out):
    name = case["name"]
    shape = shape_of(case)
    W, H = case["size"]
    cam, K, R, t = camera_for(case)
    st = initial_state(case, shape)
    sim_case = dict(case, fps=FPS, initialState=st, dropped="drop_height" in case)
    xs, qs = simulate(sim_case, shape)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    renderer = case.get("renderer", "povray")
    with tempfile.TemporaryDirectory() as tmp:
        if renderer == "blender":
            render_frames(K, R, t, shape, case["colour"], [(quat_xyzw_to_matrix(q), x) for x, q in zip(xs, qs)], os.path.join(tmp, "raw%03d.png"))
            render_frames(K, R, t, None, None, [(None, None)], os.path.join(tmp, "plate%03d.png"))
            for k in range(len(xs)):
                sensor(os.path.join(tmp, "raw%03d.png" % k), os.path.join(tmp, "f%03d.png" % k), seed + k)
            sensor(os.path.join(tmp, "plate000.png"), os.path.join(d, "plate.png"), seed + 100000)
        else:
            for k, (x, q) in enumerate(zip(xs, qs)):
                raw = os.path.join(tmp, "raw.png")
                render(scene_text(K, R, t, object_block(shape, case["colour"], quat_xyzw_to_matrix(q), x)), K, raw)
                sensor(raw, os.path.join(tmp, "f%03d.png" % k), seed + k)
            raw = os.path.join(tmp, "raw.png")
            render(scene_text(K, R, t), K, raw)
            sensor(raw, os.path.join(d, "plate.png"), seed + 100000)
        video = os.path.join(d, "video.mp4")
        subprocess.run(["ffmpeg", "-y", "-v", "error", "-framerate", str(FPS), "-i", os.path.join(tmp, "f%03d.png"),
                        "-c:v", "libx264", "-preset", "veryslow", "-crf", str(CRF), "-pix_fmt", "yuv420p", "-movflags", "+faststart", video], check=True)
        frame0 = Image.open(os.path.join(tmp, "f000.png")).convert("RGB")
        frameN = Image.open(os.path.join(tmp, "f%03d.png" % (len(xs) - 1))).convert("RGB")
    n = int(subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                            "-of", "csv=p=0", video], capture_output=True, text=True, check=True).stdout.strip())
    assert n == len(xs), f"{name}: the video has {n} frames, the simulation {len(xs)}"
    if shape.kind == "mesh":
        shutil.copy(FRUSTUM, os.path.join(d, "frustum.obj"))
    scene = scene_file(case, shape, cam, st)
    jsonfmt.dump(scene, os.path.join(d, "scene.json"))
    sink = float(st["position"][1] - xs[0, 1]) if "drop_height" not in case else 0.0
    push_text = "; ".join(f"{p['force']} N at body point {p['point']} m for [{p['start']}, {p['start'] + p['duration']:.3g}] s" for p in case["impulses"]) or "none"
    truth = {
        "mass": case["mass"], "mu": case["mu"],
        **({"restitution": case["restitution"]} if "restitution" in case else {}),
        "engine": engine_name(case["engine"]),
        "renderer": RENDERERS[renderer] + ", vignetting and sensor noise, H.264 CRF %d" % CRF,
        "determines": case["determines"],
        "notes": case["notes"],
        "shape": case["shape"][0], "push": push_text, "camera": case["camera"],
        "frames": len(xs), "fps": FPS, "width": W, "height": H,
        "engineSettings": {"timestep": DT, "settle": SETTLE if "drop_height" not in case else 0, "gravity": G,
                           "friction": "MuJoCo: both geoms μ (combined: max), elliptic cone, condim 3" if case["engine"] == "mujoco" else "Bullet: body μ × floor 1.0 (combined: product)"},
        "frame0Sink_mm": round(1000 * sink, 4),
        "trajectory": {"t": [round(k / FPS, 6) for k in range(len(xs))],
                       "position": [[round(float(v), 6) for v in x] for x in xs],
                       "rotation": [[round(float(v), 6) for v in q] for q in qs]},
    }
    jsonfmt.dump(truth, os.path.join(d, "truth.json"))
    os.makedirs(CHECKS, exist_ok=True)
    overlay(case, shape, K, R, t, frame0, frameN, st, xs, qs).save(os.path.join(CHECKS, name + ".png"))
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    travel = float(np.linalg.norm(xs[-1] - xs[0]))
    print(f"{name}: {len(xs)} frames {W}x{H}, {size / 1024:.0f} KB, travel {travel:.3f} m, frame-0 sink {1000 * sink:.3f} mm, "
          f"final height {xs[-1, 1]:.3f} m", flush=True)
    return {"case": name, "dir": name, "video": f"{name}/video.mp4", "scene": f"{name}/scene.json", "truth": f"{name}/truth.json",
            "plate": f"{name}/plate.png", "shape": case["shape"][0], "engine": case["engine"], "renderer": renderer,
            "mass": case["mass"], "mu": case["mu"], "push": push_text, "camera": case["camera"], "determines": case["determines"],
            "unknowns": list(scene["unknowns"]), "frames": len(xs), "fps": FPS, "width": W, "height": H}


def main(args):
    held_out = "--held-out" in args
    names = [a for a in args if a != "--held-out"]
    cases, out = (HELD_OUT, OUT_HELD_OUT) if held_out else (CASES, OUT)
    chosen = [c for c in cases if not names or c["name"] in names]
    missing = set(names) - {c["name"] for c in chosen}
    if missing:
        sys.exit(f"unknown case(s): {', '.join(sorted(missing))}; the cases are {', '.join(c['name'] for c in cases)}")
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, "cases.json")
    old = {e["case"]: e for e in json.load(open(manifest_path))["cases"]} if os.path.exists(manifest_path) else {}
    for c in chosen:
        old[c["name"]] = make(c, out)
    order = [c["name"] for c in cases if c["name"] in old]
    about = ("Held-out cases of gradsim's outside validation set, made after the fit's defaults and the verdict's method were "
             "settled on the set's other cases (tools/outside/cases.py, HELD_OUT)" if held_out else
             "Outside validation set for gradsim (issue 60 item 7)")
    manifest = {
        "about": about + ": videos simulated by MuJoCo or PyBullet and rendered by POV-Ray or Blender Cycles; "
                 "made by tools/outside/make_cases.py (see tools/outside/README.md). Paths are relative to this file.",
        "conventions": {"world": "y up, ground plane y = 0, gravity [0, -9.81, 0]", "frames": "video frame k shows the state at t = k/fps; frame 0 is the scene file's initial state",
                        "push": "constant force (N, world) at a body point (m, from the COM, body frame) over [start, start + duration]",
                        "camera": "physical pinhole; OpenCV x_cam = R x_world + t (x right, y down, z forward, pixel centres at integers); eye/at: image right = forward x up"},
        "cases": [old[n] for n in order],
    }
    jsonfmt.dump(manifest, manifest_path)


if __name__ == "__main__":
    main(sys.argv[1:])
