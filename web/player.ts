/**
 * Videos on canvases, played in step on one clock (looping at the video's frame rate), so the
 * target and the estimate's video show the same instant side by side. Drawing runs on
 * requestAnimationFrame; the wall also records the longest pause between two animation frames —
 * how long the page froze, if it did.
 */

/** A video as the page draws it: [frames, height, width, 3] RGB in [0, 1]. */
export interface RgbVideo {
  readonly frames: number;
  readonly height: number;
  readonly width: number;
  readonly rgb: ArrayLike<number>;
}

export class VideoWall {
  private readonly videos = new Map<HTMLCanvasElement, ImageData[]>();
  private lastTick = 0;
  private shownFrame = -1;
  /** Longest gap between two animation frames since the last resetPause(), in ms. */
  longestPauseMs = 0;

  constructor(readonly fps = 30) {
    const tick = (now: number) => {
      if (this.lastTick) this.longestPauseMs = Math.max(this.longestPauseMs, now - this.lastTick);
      this.lastTick = now;
      const k = Math.floor((now / 1000) * this.fps);
      if (k !== this.shownFrame) {
        this.shownFrame = k;
        for (const c of this.videos.keys()) this.draw(c, k);
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  /** Play `video` on `canvas` (replacing what it played), starting at the wall's current frame. */
  show(canvas: HTMLCanvasElement, video: RgbVideo): void {
    const { frames, height: h, width: w, rgb } = video;
    const images = Array.from({ length: frames }, (_, k) => {
      const img = new ImageData(w, h),
        o = k * h * w * 3;
      for (let i = 0; i < w * h; i++) {
        for (let c = 0; c < 3; c++)
          img.data[4 * i + c] = Math.round(Math.min(1, Math.max(0, rgb[o + 3 * i + c]!)) * 255);
        img.data[4 * i + 3] = 255;
      }
      return img;
    });
    canvas.width = w;
    canvas.height = h;
    this.videos.set(canvas, images);
    this.draw(canvas, Math.max(0, this.shownFrame));
  }

  /** Stop playing on `canvas` and blank it. */
  clear(canvas: HTMLCanvasElement): void {
    this.videos.delete(canvas);
    canvas.getContext("2d")!.clearRect(0, 0, canvas.width, canvas.height);
  }

  resetPause(): void {
    this.longestPauseMs = 0;
  }

  private draw(canvas: HTMLCanvasElement, k: number): void {
    const images = this.videos.get(canvas)!;
    canvas.getContext("2d")!.putImageData(images[k % images.length]!, 0, 0);
  }
}
