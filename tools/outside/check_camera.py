"""The renderers' cameras against the scene file's cameras (run by hand: python3 tools/outside/check_camera.py).

For POV-Ray, and for Blender Cycles when `blender` is installed: renders small glowing balls at known world points (nothing else in the scene) through the POV-Ray
camera built by geometry.povray_camera, for both scene-file camera forms, and compares each ball's
pixel centroid with the OpenCV projection of its centre (numpy, geometry.project). It also checks
the handedness: for an eye/at camera on −z looking at the origin with up +y, world +x must land on
the image's LEFT (a physical camera facing +z has −x on its right). Exits non-zero on a mismatch.
"""
import os, shutil, sys, tempfile
import numpy as np
from PIL import Image
sys.path.insert(0, os.path.dirname(__file__))
from geometry import lookat_to_opencv, opencv_from_view, project, povray_camera
from render_povray import render
from render_blender import render_balls

POINTS = np.array([[0, 0, 0], [0.4, 0, 0], [0, 0.3, 0], [-0.3, 0, 0.45], [-0.35, 0.1, -0.2], [0.25, 0.35, 0.3]])
R_BALL = 0.012


def povray_balls(K, R, t, out):
    balls = "".join("sphere { <%g, %g, %g>, %g pigment { color rgb 1 } finish { emission 1 diffuse 0 ambient 0 } }\n" % (*p, R_BALL) for p in POINTS)
    render("#version 3.7;\nglobal_settings { assumed_gamma 1.0 }\nbackground { color rgb 0 }\n" + povray_camera(K, R, t) + "\n" + balls, K, out)


def blender_balls(K, R, t, out):
    render_balls(K, R, t, POINTS, R_BALL, out)


def check(name, K, R, t, draw):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "c.png")
        draw(K, R, t, out)
        img = np.asarray(Image.open(out).convert("L"), float) / 255
    uv, _ = project(K, R, t, POINTS)
    worst = 0.0
    for (u, v), p in zip(uv, POINTS):
        r = 6
        y0, y1, x0, x1 = int(v) - r, int(v) + r + 2, int(u) - r, int(u) + r + 2
        win = img[max(y0, 0):y1, max(x0, 0):x1]
        yy, xx = np.mgrid[max(y0, 0):y1, max(x0, 0):x1]
        w = win.sum()
        cu, cv = (xx * win).sum() / w, (yy * win).sum() / w
        e = np.hypot(cu - u, cv - v)
        worst = max(worst, e)
        print(f"  {name:15s} point {p}: projected ({u:7.2f}, {v:7.2f}), rendered ({cu:7.2f}, {cv:7.2f}), {e:.3f} px")
    return worst, uv


ok = True
W, H = 160, 120
renderers = [("povray", povray_balls)] + ([("blender", blender_balls)] if shutil.which("blender") else [])
for rname, draw in renderers:
    K, R, t = lookat_to_opencv([0.2, 1.1, -1.8], [0, 0.1, 0], 42, W, H)
    e1, uv = check(rname + " eye/at", K, R, t, draw)
    ok &= e1 < 0.25
    ok &= uv[1, 0] < uv[0, 0]  # +x on the image's left for a camera on −z facing +z
    K, R, t = opencv_from_view([1.2, 0.9, -1.5], [0.1, 0.1, 0.1], 190.0, W, H, cx=83.3, cy=57.1)
    e2, _ = check(rname + " opencv", K, R, t, draw)
    ok &= e2 < 0.25
    print(f"{rname}: worst centroid error: eye/at {e1:.3f} px, OpenCV {e2:.3f} px; +x lands on the image's left of the origin for the camera on -z: {uv[1,0] < uv[0,0]}")
print("camera check passed" if ok else "CAMERA CHECK FAILED")
sys.exit(0 if ok else 1)
