"""Render outside-case frames with Blender Cycles (Debian `blender`, 3.x), the second renderer.

The host side: writes a job file (camera, body mesh, poses, all in gradsim's frame) and runs
`blender -b --factory-startup -P blender_job.py -- job.json` once for all frames of a case; then
the same vignetting and sensor noise as the POV-Ray frames (render_povray.sensor). The look:
a 1.0 m × 0.6 m area light (soft shadows), a dim shadowless sun, a grey-blue world, a checkered
floor, Principled BSDF plastic, 48 path-traced samples per pixel (its own Monte Carlo noise).
"""
import json, os, subprocess, tempfile
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def body_mesh(shape):
    """Vertices (gradsim body frame) and faces of a shape, for Blender."""
    if shape.kind == "box":
        h = shape.size / 2
        V = [[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
        # index = 4·ix + 2·iy + iz; outward quads
        F = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
        return V, F, False
    if shape.kind == "cylinder":
        n = 64
        a = np.linspace(0, 2 * np.pi, n, endpoint=False)
        V = [[shape.r * np.cos(x), y, shape.r * np.sin(x)] for y in (-shape.h / 2, shape.h / 2) for x in a]
        F = [[i, (i + 1) % n, n + (i + 1) % n, n + i] for i in range(n)] + [list(range(n))[::-1], list(range(n, 2 * n))]
        return V, F, False
    if shape.kind == "mesh":
        return shape.V.tolist(), shape.F.tolist(), False
    raise ValueError("the Blender cases use boxes, cylinders and meshes")


def render_frames(K, R, t, shape, colour, poses, out_pattern, samples=48, timeout=3000):
    """Render each (R_body, x) in `poses` (None: the plate) to out_pattern % k."""
    with tempfile.TemporaryDirectory() as d:
        frames = [{"index": k + 1, "out": out_pattern % k, **({"R": np.asarray(Rb).tolist(), "x": list(map(float, x))} if Rb is not None else {})}
                  for k, (Rb, x) in enumerate(poses)]
        job = {"K": K, "R": np.asarray(R).tolist(), "t": list(map(float, t)), "width": K["width"], "height": K["height"], "samples": samples, "frames": frames}
        if shape is not None:
            V, F, smooth = body_mesh(shape)
            job["body"] = {"vertices": V, "faces": F, "smooth": smooth, "colour": list(colour)}
        jp = os.path.join(d, "job.json")
        json.dump(job, open(jp, "w"))
        r = subprocess.run(["blender", "-b", "--factory-startup", "-noaudio", "-P", os.path.join(HERE, "blender_job.py"), "--", jp],
                           capture_output=True, text=True, timeout=timeout)
        missing = [f["out"] for f in frames if not os.path.exists(f["out"])]
        if r.returncode != 0 or missing:
            raise RuntimeError("blender failed:\n" + r.stdout[-1500:] + r.stderr[-1500:])


def render_balls(K, R, t, points, radius, out_png):
    with tempfile.TemporaryDirectory() as d:
        job = {"K": K, "R": np.asarray(R).tolist(), "t": list(map(float, t)), "width": K["width"], "height": K["height"], "samples": 64,
               "frames": [{"out": out_png}], "balls": {"points": np.asarray(points).tolist(), "radius": radius}}
        jp = os.path.join(d, "job.json")
        json.dump(job, open(jp, "w"))
        r = subprocess.run(["blender", "-b", "--factory-startup", "-noaudio", "-P", os.path.join(HERE, "blender_job.py"), "--", jp], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not os.path.exists(out_png):
            raise RuntimeError("blender failed:\n" + r.stdout[-1500:] + r.stderr[-1500:])
