// Hex geometry, pure (no DOM), mirroring the desktop client's ui/hexlayout.py:
// pointy-top hexes, axial (q, r) as in the spec, +q right, +r up-right; y grows down
// like the screen, so +r decreases y:  x = size·√3·(q + r/2),  y = −size·1.5·r.

export const SQRT3 = Math.sqrt(3);

/** The three axes a line can run along (the other three are their opposites). */
export const AXES = [[1, 0], [0, 1], [1, -1]];

export function hexToWorld(q, r, size) {
  return [size * SQRT3 * (q + r / 2), -size * 1.5 * r];
}

/** The cell under a world point: the exact inverse, then cube rounding. */
export function worldToHex(x, y, size) {
  const r = -y / (1.5 * size);
  const q = x / (SQRT3 * size) - r / 2;
  return cubeRound(q, r);
}

function cubeRound(q, r) {
  const s = -q - r;
  let rq = Math.round(q);
  let rr = Math.round(r);
  const rs = Math.round(s);
  const dq = Math.abs(rq - q);
  const dr = Math.abs(rr - r);
  const ds = Math.abs(rs - s);
  if (dq > dr && dq > ds) rq = -rr - rs;
  else if (dr > ds) rr = -rq - rs;
  // +0 instead of -0: a coordinate label never reads "-0".
  return [rq + 0, rr + 0];
}

export function hexDistance(aq, ar, bq, br) {
  const dq = aq - bq;
  const dr = ar - br;
  return (Math.abs(dq) + Math.abs(dr) + Math.abs(dq + dr)) / 2;
}

/** The SVG path of one pointy-top hex around (cx, cy), radius `size`, as "M…Z". */
export function hexPath(cx, cy, size) {
  return `M${round2(cx + size * CORNERS[0][0])} ${round2(cy + size * CORNERS[0][1])}${relativeHex(size)}`;
}

// A hex's outline after its first corner, as relative moves: the same text for every
// cell of one size, so a grid of thousands of cells is one cheap string.
const CORNERS = Array.from({ length: 6 }, (_, i) => {
  const angle = (Math.PI / 180) * (60 * i - 30);
  return [Math.cos(angle), Math.sin(angle)];
});
const relativeCache = new Map();

function relativeHex(size) {
  let text = relativeCache.get(size);
  if (text === undefined) {
    text = "";
    for (let i = 1; i < 6; i++) {
      text += `l${round2(size * (CORNERS[i][0] - CORNERS[i - 1][0]))} ${round2(size * (CORNERS[i][1] - CORNERS[i - 1][1]))}`;
    }
    text += "z";
    relativeCache.set(size, text);
  }
  return text;
}

/** Rounded to 2 decimals: short path text, and no "-0". */
export function round2(value) {
  return Math.round(value * 100) / 100 + 0;
}

export function cellKey(q, r) {
  return `${q},${r}`;
}

/** Empty cells within `radius` of any stone: the light grid drawn around the stones
 * (only near them, so a long game does not draw thousands of far cells). */
export function gridCells(stones, radius) {
  const taken = new Set(stones.map((s) => cellKey(s.q, s.r)));
  const seen = new Set();
  const cells = [];
  for (const stone of stones) {
    for (let dq = -radius; dq <= radius; dq++) {
      for (let dr = Math.max(-radius, -dq - radius); dr <= Math.min(radius, -dq + radius); dr++) {
        const q = stone.q + dq;
        const r = stone.r + dr;
        const key = cellKey(q, r);
        if (seen.has(key) || taken.has(key)) continue;
        seen.add(key);
        cells.push([q, r]);
      }
    }
  }
  return cells;
}

/** World bounds [minX, minY, maxX, maxY] of cells (stones or [q, r] pairs), padded by `pad`. */
export function bounds(cells, size, pad = size) {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const cell of cells) {
    const [x, y] = Array.isArray(cell) ? hexToWorld(cell[0], cell[1], size) : hexToWorld(cell.q, cell.r, size);
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  if (minX === Infinity) return [-pad, -pad, pad, pad];
  return [minX - pad, minY - pad, maxX + pad, maxY + pad];
}

/** The winning line through any of `through` (stones of the last move): at least
 * `length` stones of one colour in a row on one axis, or null. */
export function winningLine(stones, through, length) {
  const owner = new Map(stones.map((s) => [cellKey(s.q, s.r), s.p]));
  for (const start of through) {
    const p = owner.get(cellKey(start.q, start.r));
    if (!p) continue;
    for (const [dq, dr] of AXES) {
      const line = [[start.q, start.r]];
      for (const sign of [1, -1]) {
        let q = start.q + sign * dq;
        let r = start.r + sign * dr;
        while (owner.get(cellKey(q, r)) === p) {
          line.push([q, r]);
          q += sign * dq;
          r += sign * dr;
        }
      }
      if (line.length >= length) {
        line.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        return line;
      }
    }
  }
  return null;
}
