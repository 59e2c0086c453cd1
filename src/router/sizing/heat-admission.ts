// Admission to the heat table: a count-min sketch of recent increments per
// counter name (4 rows, conservative update, 16-bit saturating cells),
// halved at every heat sample so it counts the last few sample windows.
// A full table takes a counter only once the sketch has seen enough of it:
// a workload spread over millions of cold counters then costs a few array
// updates per (counter, call), not an eviction and an allocation each.
// Estimates never undercount (count-min), so a hot counter is never kept out.
const rows = 4;
const cellMax = 0xffff;

/** FNV-1a over the name's UTF-16 code units: 32 bits, no allocation. */
function fnv1a(name: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < name.length; index++) {
    hash ^= name.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export class HeatAdmission {
  private readonly cells: Uint16Array;
  private readonly mask: number;
  private readonly slots = new Int32Array(rows);

  constructor(width: number) {
    if (!Number.isInteger(Math.log2(width))) throw new Error(`sketch width ${width} is not a power of two`);
    this.cells = new Uint16Array(rows * width);
    this.mask = width - 1;
  }

  /** Adds increments to the name's cells and returns its estimate (never below its true recent count, saturating). */
  add(name: string, increments: number): number {
    const hash = fnv1a(name);
    // Double hashing: row i at h1 + i * h2 (h2 odd, so the rows differ).
    const step = ((hash >>> 16) | 1) >>> 0;
    let estimate = cellMax;
    for (let row = 0; row < rows; row++) {
      const slot = row * (this.mask + 1) + ((hash + row * step) & this.mask);
      this.slots[row] = slot;
      if (this.cells[slot]! < estimate) estimate = this.cells[slot]!;
    }
    // Conservative update: only the cells at the minimum rise, which keeps
    // the overcount from collisions smaller than a plain update's.
    const next = Math.min(cellMax, estimate + increments);
    for (let row = 0; row < rows; row++) {
      const slot = this.slots[row]!;
      if (this.cells[slot]! < next) this.cells[slot] = next;
    }
    return next;
  }

  /** Halves every cell: what was counted fades over a few sample windows. */
  decay(): void {
    for (let index = 0; index < this.cells.length; index++) this.cells[index]! >>>= 1;
  }
}
