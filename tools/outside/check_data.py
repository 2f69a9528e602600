"""Check the committed cases from their files alone (run by hand: python3 tools/outside/check_data.py [case ...];
--held-out: the held-out cases of examples/data/outside-held-out/).

For each case in examples/data/outside/cases.json: decode video.mp4 with ffmpeg, count its frames,
take the foreground mask |frame − plate.png| (a per-pixel colour difference above the noise), project
the body (scene.json's mesh, its camera, and a pose) with numpy, fill the projected convex hull, and
report how much of that hull the video shows as foreground: at frame 0 with scene.json's initial
state (what the user wrote) and at the last frame with truth.json's trajectory. Both should be
close to 1 (the hull's 1-px rim is left out: anti-aliased edges). Shadows are foreground too, so
only coverage of the hull is checked, not the mask's extent. Exits non-zero below 0.95.
"""
import json, os, subprocess, sys
import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy.spatial import ConvexHull
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from geometry import camera_of_scene, project, quat_xyzw_to_matrix
from shapes import read_obj

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data", "outside")


def body_points(mesh, d):
    if "obj" in mesh:
        return read_obj(os.path.join(d, mesh["obj"]))[0] * mesh.get("scale", [1, 1, 1])
    s = np.asarray(mesh["scale"], float)
    if mesh["shape"] == "box":
        return np.array([[a, b, c] for a in (-.5, .5) for b in (-.5, .5) for c in (-.5, .5)]) * s
    a = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    if mesh["shape"] == "cylinder":
        ring = np.stack([0.45 * np.cos(a), np.zeros_like(a), 0.45 * np.sin(a)], 1)
        return np.concatenate([ring + [0, -.5, 0], ring + [0, .5, 0]]) * s
    if mesh["shape"] in ("sphere", "icosphere"):  # a true sphere of diameter = scale: sample it densely
        u, v = np.meshgrid(np.linspace(0, np.pi, 24), a)
        return 0.5 * np.stack([np.sin(u) * np.cos(v), np.cos(u), np.sin(u) * np.sin(v)], -1).reshape(-1, 3) * s
    raise ValueError(mesh["shape"])


def frames(video, W, H):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, H, W, 3).astype(float)


def coverage(img, plate, K, R, t, pts):
    fg = np.abs(img - plate).sum(-1) > 60  # noise: σ ≈ 3–5 per channel
    uv, _ = project(K, R, t, pts)
    hull = uv[ConvexHull(uv).vertices]
    m = Image.new("L", (img.shape[1], img.shape[0]), 0)
    ImageDraw.Draw(m).polygon([tuple(p) for p in hull], fill=255)
    inner = np.asarray(m.filter(ImageFilter.MinFilter(3))) > 0
    return fg[inner].mean(), int(inner.sum())


def main(args):
    names = [a for a in args if a != "--held-out"]
    out = OUT + "-held-out" if "--held-out" in args else OUT
    man = json.load(open(os.path.join(out, "cases.json")))
    ok = True
    for e in man["cases"]:
        if names and e["case"] not in names:
            continue
        d = os.path.join(out, e["dir"])
        scene, truth = json.load(open(os.path.join(d, "scene.json"))), json.load(open(os.path.join(d, "truth.json")))
        cam = dict(scene["camera"], _width=e["width"], _height=e["height"])
        K, R, t = camera_of_scene(cam)
        F = frames(os.path.join(d, "video.mp4"), e["width"], e["height"])
        plate = np.asarray(Image.open(os.path.join(d, scene["background"]["image"])).convert("RGB"), float)
        pts = body_points(scene["mesh"], d)
        st = scene["initialState"]
        c0, n0 = coverage(F[0], plate, K, R, t, (quat_xyzw_to_matrix(st["rotation"]) @ pts.T).T + st["position"])
        tr = truth["trajectory"]
        cN, nN = coverage(F[-1], plate, K, R, t, (quat_xyzw_to_matrix(tr["rotation"][-1]) @ pts.T).T + tr["position"][-1])
        good = len(F) == truth["frames"] == len(tr["t"]) and c0 > 0.95 and cN > 0.95
        ok &= good
        print(f"{e['case']:26s} {len(F)} frames; projected body covered by foreground: frame 0 {c0:.3f} ({n0} px), last {cN:.3f} ({nN} px) {'ok' if good else 'BAD'}")
    print("data check passed" if ok else "DATA CHECK FAILED")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:]) else 1)
