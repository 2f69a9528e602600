/**
 * Device memory: every element is one 32-bit word (float32, int32, and bool stored as u32), so
 * any buffer can be bound as array<f32|i32|u32> and copied with word offsets.
 *
 * A DeviceBuffer is reference counted: arrays hold it through a BufferHandle (one per
 * ConcreteArray; reshapes and jit outputs that alias an input share the DeviceBuffer), running
 * programs hold their intermediates. At zero references the GPUBuffer goes back to a pool keyed
 * by size class, so steady-state loops reuse the same GPU memory instead of allocating.
 * Handles free themselves when the array that owns them becomes unreachable (FinalizationRegistry).
 */

export const BUF_STORAGE = 0x80,
  BUF_COPY_SRC = 0x04,
  BUF_COPY_DST = 0x08,
  BUF_MAP_READ = 0x01,
  BUF_UNIFORM = 0x40;
export const MAP_MODE_READ = 0x1;
const DATA_USAGE = BUF_STORAGE | BUF_COPY_SRC | BUF_COPY_DST;

/** Derived data cached on a buffer (inverse incidence for scatter_add); released with it. */
export interface BufferDerived {
  release(): void;
}

let nextBufferId = 1;

export class DeviceBuffer {
  // @internal members stay out of the published declarations (stripInternal), which must
  // type-check in projects without WebGPU types (no DOM lib, no @webgpu/types).
  /** @internal The GPU buffer. */
  readonly gpu: GPUBuffer;
  /** Unique per allocation (a recycled GPUBuffer gets a new DeviceBuffer), so it can key caches. */
  readonly id = nextBufferId++;
  refs = 1;
  /**
   * Host copy of int32 data uploaded from the host (index arrays): lets scatter_add build its inverse incidence once.
   */
  host: Int32Array | null = null;
  readonly derived = new Map<string, BufferDerived>();
  /** @internal */
  constructor(
    gpu: GPUBuffer,
    readonly capacity: number,
    readonly words: number,
    private readonly pool: BufferPool,
  ) {
    this.gpu = gpu;
  }
  retain(): this {
    if (this.refs <= 0) throw new Error("internal: retain of a released device buffer.");
    this.refs++;
    return this;
  }
  release(): void {
    if (this.refs <= 0) throw new Error("internal: device buffer released twice.");
    if (--this.refs === 0) {
      for (const d of this.derived.values()) d.release();
      this.derived.clear();
      this.host = null;
      this.pool.recycle(this);
    }
  }
  get bytes(): number {
    return this.words * 4;
  }
}

/** Memory counters, for tests and the memory benchmark. */
export interface GpuMemoryStats {
  /** Bytes of GPUBuffers currently referenced (by arrays, caches or running programs). */
  readonly liveBytes: number;
  /** Bytes of GPUBuffers kept for reuse. */
  readonly pooledBytes: number;
  /** Bytes of all GPUBuffers that exist (live + pooled). */
  readonly allocatedBytes: number;
  readonly peakAllocatedBytes: number;
  /** GPUBuffers created / destroyed since start (a flat profile stops creating). */
  readonly created: number;
  readonly destroyed: number;
  readonly liveBuffers: number;
}

/** Size classes: 256-byte steps up to 4 KiB, then 8 steps per power of two (≤ 12.5% slack). */
export function sizeClass(bytes: number): number {
  const b = Math.max(16, bytes);
  if (b <= 4096) return Math.ceil(b / 256) * 256;
  const step = 2 ** (Math.floor(Math.log2(b)) - 3);
  return Math.ceil(b / step) * step;
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private pooled = 0;
  private live = 0;
  private liveCount = 0;
  private peak = 0;
  private created = 0;
  private destroyed = 0;
  /** Pooled bytes beyond this are destroyed (largest classes first). */
  maxPooledBytes = 512 * 1024 * 1024;
  /**
   * Runs the garbage collector (Node), so finalizers can free the buffers of dead arrays: V8 does
   * not see device memory, and a loop that drops its old arrays would otherwise grow it until the
   * JS heap alone triggers a collection.
   */
  onPressure: (() => void) | null = null;
  private liveAtLastPressure = 0;
  /** Allocation-time trigger (finalizers only run once the host yields, so this is a backstop). */
  pressureStepBytes = 256 * 1024 * 1024;

  /** @internal */
  constructor(
    private readonly device: GPUDevice,
    private readonly maxBufferSize: number,
  ) {}

  /** A buffer of `words` 32-bit elements (contents undefined), with one reference. */
  allocate(words: number): DeviceBuffer {
    const need = Math.max(1, words) * 4;
    if (need > this.maxBufferSize) {
      throw new Error(
        `webgpu: an array of ${words} elements (${need} bytes) exceeds ` +
          `this device's maxBufferSize (${this.maxBufferSize} bytes).`,
      );
    }
    const cap = Math.min(sizeClass(need), Math.max(need, Math.floor(this.maxBufferSize / 4) * 4));
    const list = this.free.get(cap);
    let gpu = list?.pop();
    if (gpu) this.pooled -= cap;
    else {
      gpu = this.device.createBuffer({ size: cap, usage: DATA_USAGE });
      this.created++;
    }
    this.live += cap;
    this.liveCount++;
    const total = this.live + this.pooled;
    if (total > this.peak) this.peak = total;
    if (this.onPressure && this.live - this.liveAtLastPressure > this.pressureStepBytes) {
      this.liveAtLastPressure = this.live;
      this.onPressure();
    }
    return new DeviceBuffer(gpu, cap, words, this);
  }

  /**
   * At host sync points (reads): collect when live device memory doubled (plus 1 MiB) since the
   * last collection; the finalizers then run while the caller awaits its data. (A full collection
   * costs milliseconds; it happens at most once per doubling of device memory.)
   */
  collectIfGrown(): void {
    if (this.onPressure && this.live > 2 * this.liveAtLastPressure + 1024 * 1024) {
      this.liveAtLastPressure = this.live;
      this.onPressure();
    }
  }

  recycle(b: DeviceBuffer): void {
    this.live -= b.capacity;
    this.liveCount--;
    if (this.live < this.liveAtLastPressure) this.liveAtLastPressure = this.live;
    let list = this.free.get(b.capacity);
    if (!list) this.free.set(b.capacity, (list = []));
    list.push(b.gpu);
    this.pooled += b.capacity;
    if (this.pooled > this.maxPooledBytes) this.trim(this.maxPooledBytes / 2);
  }

  /** Destroy pooled buffers until at most `keepBytes` remain pooled. */
  trim(keepBytes = 0): void {
    const classes = [...this.free.keys()].sort((a, b) => b - a);
    for (const c of classes) {
      const list = this.free.get(c)!;
      while (list.length && this.pooled > keepBytes) {
        list.pop()!.destroy();
        this.pooled -= c;
        this.destroyed++;
      }
      if (!list.length) this.free.delete(c);
    }
  }

  stats(): GpuMemoryStats {
    return {
      liveBytes: this.live,
      pooledBytes: this.pooled,
      allocatedBytes: this.live + this.pooled,
      peakAllocatedBytes: this.peak,
      created: this.created,
      destroyed: this.destroyed,
      liveBuffers: this.liveCount,
    };
  }
}

// ---------------------------------------------------------------- handles (one per array)

/**
 * What a webgpu ConcreteArray holds as its `buffer`. The handle, not the array, is registered
 * for finalization (the array only references it), so no core change is needed: when the array
 * dies the handle dies with it and the DeviceBuffer loses one reference.
 */
export class BufferHandle {
  private buf: DeviceBuffer | null;
  /** Takes over one reference of `buf` (the caller retains first if it keeps its own). */
  constructor(buf: DeviceBuffer) {
    this.buf = buf;
    finalizer.register(this, buf, this);
  }
  get buffer(): DeviceBuffer {
    if (!this.buf) throw new Error("internal: use of a freed webgpu buffer handle.");
    return this.buf;
  }
  release(): void {
    if (!this.buf) return;
    finalizer.unregister(this);
    const b = this.buf;
    this.buf = null;
    b.release();
  }
}

let finalizedCount = 0;
const finalizer = new FinalizationRegistry<DeviceBuffer>((buf) => {
  finalizedCount++;
  buf.release();
});
/** How many arrays were freed by the garbage collector rather than dispose() (for tests). */
export const finalizedHandles = (): number => finalizedCount;

export const isBufferHandle = (x: unknown): x is BufferHandle => x instanceof BufferHandle;
