"""Render outside-case frames with POV-Ray 3.7 (Debian `povray`), looking like real footage.

The look: a rectangular area light (soft shadows, 1.0 m × 0.6 m, 6×6 jittered samples), a dim
shadowless fill, a grey-blue sky, a two-tone checkered floor (10 cm squares) with a faint bump,
an object with a matte-plastic finish (spheres carry a stripe pattern so their roll shows), then,
in numpy, a little vignetting and sensor noise (Gaussian read noise + signal-dependent shot noise).
Geometry is placed in gradsim's world coordinates as they are (see geometry.povray_camera).
"""
import os
import subprocess
import tempfile
import numpy as np
from PIL import Image
from geometry import povray_camera

HEADER = """#version 3.7;
global_settings { assumed_gamma 1.0 max_trace_level 6 ambient_light rgb <0.35, 0.36, 0.4> }
sky_sphere { pigment { gradient y color_map { [0 color rgb <0.55, 0.56, 0.58>] [1 color rgb <0.32, 0.38, 0.48>] } } }
light_source { <1.6, 3.2, -1.2> color rgb <1.05, 1.0, 0.92>
  area_light <1.0, 0, 0>, <0, 0, 0.6>, 6, 6 adaptive 1 jitter circular orient }
light_source { <-3, 2.5, -2.5> color rgb <0.18, 0.19, 0.22> shadowless }
plane { y, 0
  texture { pigment { checker color rgb <0.62, 0.60, 0.56> color rgb <0.30, 0.30, 0.31> scale 0.1 }
            normal { bumps 0.04 scale 0.004 } finish { diffuse 0.75 ambient 0.08 specular 0.05 roughness 0.1 } } }
"""


def object_block(shape, colour, R, x):
    pig = "pigment { color rgb <%g, %g, %g> }" % tuple(colour)
    if shape.kind == "sphere":
        c2 = tuple(0.55 * np.asarray(colour))  # a darker stripe of the same hue: saturated, so it stands out from the grey floor
        pig = "pigment { gradient x color_map { [0.0 color rgb <%g,%g,%g>] [0.5 color rgb <%g,%g,%g>] [0.5 color rgb <%g,%g,%g>] [1.0 color rgb <%g,%g,%g>] } scale %g translate <%g,0,0> }" % (
            *colour, *colour, *c2, *c2, shape.r, -shape.r / 2)
    m = (R[0, 0], R[1, 0], R[2, 0], R[0, 1], R[1, 1], R[2, 1], R[0, 2], R[1, 2], R[2, 2], x[0], x[1], x[2])
    return "object { %s texture { %s finish { diffuse 0.8 ambient 0.1 specular 0.25 roughness 0.03 } } matrix <%s> }\n" % (
        shape.pov(), pig, ", ".join("%.9f" % v for v in m))


def render(pov_text, K, out_png, quality=True):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "f.pov")
        open(src, "w").write(pov_text)
        aa = ["+A0.05", "+AM2", "+R3", "+J0.8"] if quality else ["-A"]
        for attempt in range(4):  # on a loaded machine POV-Ray sometimes times out starting its worker threads
            r = subprocess.run(["povray", "-D", "-V", "+GA", "+Q9", *aa, "+FN", f"+W{K['width']}", f"+H{K['height']}",
                                f"+I{src}", f"+O{out_png}"], capture_output=True, text=True)
            if r.returncode == 0 and os.path.exists(out_png):
                break
        else:
            raise RuntimeError("povray failed:\n" + r.stderr[-2000:])


def scene_text(K, R, t, extra=""):
    return HEADER + povray_camera(K, R, t) + "\n" + extra


def sensor(png_in, png_out, seed, read_sigma=0.010, shot=0.012, vignette=0.12):
    """Vignetting and sensor noise on a rendered frame (linear-ish 8-bit in, 8-bit out)."""
    img = np.asarray(Image.open(png_in).convert("RGB"), float) / 255
    H, W, _ = img.shape
    yy, xx = np.mgrid[0:H, 0:W]
    r2 = ((xx - (W - 1) / 2) ** 2 + (yy - (H - 1) / 2) ** 2) / (((W - 1) / 2) ** 2 + ((H - 1) / 2) ** 2)
    img = img * (1 - vignette * r2)[..., None]
    rng = np.random.default_rng(seed)
    img = img + rng.normal(0, 1, img.shape) * np.sqrt(read_sigma ** 2 + shot ** 2 * np.clip(img, 0, 1))
    Image.fromarray(np.clip(np.round(img * 255), 0, 255).astype(np.uint8)).save(png_out)
