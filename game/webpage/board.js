// The board as SVG: stones, a light grid near them, the last move, the winning line,
// a bot's considerations, coordinates on hover, and pan/zoom by viewBox.
// It draws what it is given; the game's state lives in gamemodel.js.

import { bounds, cellKey, gridCells, hexPath, hexToWorld, round2, worldToHex } from "./hexgeom.js";

const NS = "http://www.w3.org/2000/svg";
const SIZE = 20; // hex radius in world units
const GRID_RADIUS = 2; // empty cells drawn this close to a stone
const MIN_WIDTH = SIZE * 4; // the most zoomed in: a few hexes across
const MAX_WIDTH = SIZE * 2000;
const STONE_RADIUS = SIZE * 0.72;
const GRID_HEX = SIZE * 0.96;

function svg(tag, attributes = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

export class BoardView {
  /** `onStep(delta)` and `onEdge(which)` let the board's keyboard move through plies. */
  constructor({ label = "Board" } = {}) {
    this.root = document.createElement("div");
    this.root.className = "board-wrap";
    this.svg = svg("svg", { class: "board", role: "img", "aria-label": label, tabindex: "0" });
    this.gridLayer = svg("path", { class: "grid" });
    this.markLayer = svg("g", { class: "marks" });
    this.stoneLayer = svg("g", { class: "stones" });
    this.considerLayer = svg("g", { class: "considerations" });
    this.hoverCell = svg("path", { class: "hover", visibility: "hidden" });
    // Marks (last move, winning line) above the stones so they stay visible.
    this.svg.append(this.gridLayer, this.stoneLayer, this.markLayer, this.considerLayer, this.hoverCell);
    this.coords = document.createElement("div");
    this.coords.className = "coords";
    this.coords.setAttribute("aria-hidden", "true");
    this.coords.hidden = true;
    this.root.append(this.svg, this.coords);
    // The view: a world-space centre and width; the height follows the element's aspect.
    this.view = { cx: 0, cy: 0, width: SIZE * 16 };
    this.userMoved = false; // a pan or zoom by the user stops the live auto-fit
    this.stones = [];
    this.pointers = new Map();
    this.bindInput();
    // The element's size, kept by the observer so drawing never forces a layout to read it.
    this.size = null;
    this.resizeObserver = new ResizeObserver((entries) => {
      const box = entries[entries.length - 1].contentRect;
      this.size = { width: box.width, height: box.height };
      this.applyView();
    });
    this.resizeObserver.observe(this.svg);
  }

  destroy() {
    this.resizeObserver.disconnect();
  }

  // ------------------------------------------------------------------ drawing

  /** Draw a position. `last`: the stones of the move that made it; `line`: the
   * winning line's cells; `considerations`: [{pieces, evaluation}] best first. */
  render({ stones, last = [], line = null, considerations = [] }) {
    this.stones = stones;
    const lastKeys = new Set(last.map((p) => cellKey(p.q, p.r)));
    const lineKeys = new Set((line || []).map(([q, r]) => cellKey(q, r)));
    // All stones in one pass into a fragment: one insertion, no layout in between.
    const fragment = document.createDocumentFragment();
    for (const stone of stones) {
      const [x, y] = hexToWorld(stone.q, stone.r, SIZE);
      const isLast = lastKeys.has(cellKey(stone.q, stone.r));
      const node = svg("circle", {
        cx: round2(x),
        cy: round2(y),
        r: STONE_RADIUS,
        class: `stone ${stone.p === "x" ? "x" : "o"}${isLast ? " last" : ""}${lineKeys.has(cellKey(stone.q, stone.r)) ? " win" : ""}`,
        "data-q": stone.q,
        "data-r": stone.r,
        "data-p": stone.p,
      });
      fragment.append(node);
    }
    this.stoneLayer.replaceChildren(fragment);

    // The grid as one path: thousands of cells cost one element.
    let d = "";
    for (const [q, r] of gridCells(stones, GRID_RADIUS)) {
      const [x, y] = hexToWorld(q, r, SIZE);
      d += hexPath(x, y, GRID_HEX);
    }
    for (const stone of stones) {
      const [x, y] = hexToWorld(stone.q, stone.r, SIZE);
      d += hexPath(x, y, GRID_HEX);
    }
    this.gridLayer.setAttribute("d", d);

    const marks = document.createDocumentFragment();
    for (const p of last) {
      const [x, y] = hexToWorld(p.q, p.r, SIZE);
      marks.append(svg("circle", { cx: x.toFixed(2), cy: y.toFixed(2), r: SIZE * 0.88, class: "last-ring" }));
    }
    if (line && line.length) {
      const [x1, y1] = hexToWorld(line[0][0], line[0][1], SIZE);
      const [x2, y2] = hexToWorld(line[line.length - 1][0], line[line.length - 1][1], SIZE);
      const win = svg("line", { x1, y1, x2, y2, class: "win-line" });
      win.dataset.cells = line.map(([q, r]) => `${q},${r}`).join(" ");
      marks.append(win);
    }
    this.markLayer.replaceChildren(marks);
    this.renderConsiderations(considerations);
  }

  renderConsiderations(considerations) {
    const taken = new Set(this.stones.map((s) => cellKey(s.q, s.r)));
    // A cell in several options (a search's alternatives often share their first
    // stone) shows the best one's number alone, not every number drawn over the others.
    const drawn = new Set();
    const fragment = document.createDocumentFragment();
    considerations.slice(0, 9).forEach((option, index) => {
      for (const p of option.pieces || []) {
        const key = cellKey(p.q, p.r);
        if (drawn.has(key)) continue;
        drawn.add(key);
        const [x, y] = hexToWorld(p.q, p.r, SIZE);
        // On a stone (the move played was one of them) only its number shows.
        const onStone = taken.has(key);
        const group = svg("g", { class: `consideration${onStone ? " on-stone" : ""}`, "data-q": p.q, "data-r": p.r, "data-rank": index + 1 });
        group.append(svg("circle", { cx: round2(x), cy: round2(y), r: SIZE * 0.62 }));
        const label = svg("text", { x: round2(x), y: round2(y + SIZE * 0.3) });
        label.textContent = String(index + 1);
        group.append(label);
        fragment.append(group);
      }
    });
    this.considerLayer.replaceChildren(fragment);
  }

  // ------------------------------------------------------------------ the view

  /** Read the element's size now (one layout): call once it is in the page. */
  measure() {
    const box = this.svg.getBoundingClientRect();
    this.size = { width: box.width, height: box.height };
  }

  aspect() {
    if (!this.size) this.measure();
    const { width, height } = this.size;
    return width > 0 && height > 0 ? height / width : 0.75;
  }

  applyView() {
    const { cx, cy, width } = this.view;
    const height = width * this.aspect();
    const box = [cx - width / 2, cy - height / 2, width, height].map((v) => v.toFixed(2)).join(" ");
    this.svg.setAttribute("viewBox", box);
    this.svg.dataset.view = box;
    this.svg.dataset.zoom = (SIZE * 16 / width).toFixed(4);
  }

  /** Frame every stone (and its grid) in view. */
  fit() {
    const [minX, minY, maxX, maxY] = bounds(this.stones, SIZE, SIZE * (GRID_RADIUS + 2.2));
    const aspect = this.aspect();
    const width = Math.max(maxX - minX, (maxY - minY) / aspect, MIN_WIDTH * 2);
    this.view = { cx: (minX + maxX) / 2, cy: (minY + maxY) / 2, width: Math.min(width * 1.04, MAX_WIDTH) };
    this.userMoved = false;
    this.applyView();
  }

  /** True when every stone is inside the current view. */
  allInView() {
    const { cx, cy, width } = this.view;
    const height = width * this.aspect();
    const [minX, minY, maxX, maxY] = bounds(this.stones, SIZE, SIZE);
    return minX >= cx - width / 2 && maxX <= cx + width / 2 && minY >= cy - height / 2 && maxY <= cy + height / 2;
  }

  /** Zoom by `factor` (>1 zooms in) keeping the world point under (clientX, clientY). */
  zoom(factor, clientX, clientY) {
    const box = this.svg.getBoundingClientRect();
    const fx = clientX === undefined || !box.width ? 0.5 : (clientX - box.left) / box.width;
    const fy = clientY === undefined || !box.height ? 0.5 : (clientY - box.top) / box.height;
    const { cx, cy, width } = this.view;
    const height = width * this.aspect();
    const wx = cx - width / 2 + fx * width;
    const wy = cy - height / 2 + fy * height;
    const newWidth = Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, width / factor));
    const newHeight = newWidth * this.aspect();
    this.view = { cx: wx - fx * newWidth + newWidth / 2, cy: wy - fy * newHeight + newHeight / 2, width: newWidth };
    this.userMoved = true;
    this.applyView();
  }

  /** Pan by a screen distance in CSS pixels. */
  panBy(dx, dy) {
    const box = this.svg.getBoundingClientRect();
    const scale = box.width ? this.view.width / box.width : 1;
    this.view = { ...this.view, cx: this.view.cx - dx * scale, cy: this.view.cy - dy * scale };
    this.userMoved = true;
    this.applyView();
  }

  toWorld(clientX, clientY) {
    const box = this.svg.getBoundingClientRect();
    const { cx, cy, width } = this.view;
    const height = width * this.aspect();
    return [cx - width / 2 + ((clientX - box.left) / box.width) * width, cy - height / 2 + ((clientY - box.top) / box.height) * height];
  }

  // ------------------------------------------------------------------ input

  bindInput() {
    const target = this.svg;
    target.addEventListener("wheel", (event) => {
      event.preventDefault();
      // Trackpads send small deltas, mice ~100 per notch: zoom smoothly by either.
      this.zoom(Math.exp(-event.deltaY * 0.0015), event.clientX, event.clientY);
    }, { passive: false });

    let last = null; // the previous single-pointer position, or the pinch distance
    target.addEventListener("pointerdown", (event) => {
      try {
        target.setPointerCapture(event.pointerId); // keep a drag that leaves the board
      } catch {
        // a pointer the browser no longer tracks: the drag still works inside the board
      }
      this.pointers.set(event.pointerId, [event.clientX, event.clientY]);
      last = null;
    });
    const release = (event) => {
      this.pointers.delete(event.pointerId);
      last = null;
      target.classList.remove("dragging");
    };
    target.addEventListener("pointerup", release);
    target.addEventListener("pointercancel", release);
    target.addEventListener("pointermove", (event) => {
      this.hover(event.clientX, event.clientY);
      if (!this.pointers.has(event.pointerId)) return;
      this.pointers.set(event.pointerId, [event.clientX, event.clientY]);
      const points = [...this.pointers.values()];
      if (points.length === 1) {
        const [x, y] = points[0];
        if (last && last.kind === "pan") {
          this.panBy(x - last.x, y - last.y);
          target.classList.add("dragging");
        }
        last = { kind: "pan", x, y };
      } else if (points.length >= 2) {
        const [[ax, ay], [bx, by]] = points;
        const distance = Math.hypot(ax - bx, ay - by);
        const mx = (ax + bx) / 2;
        const my = (ay + by) / 2;
        if (last && last.kind === "pinch" && last.distance > 0) {
          this.panBy(mx - last.x, my - last.y);
          this.zoom(distance / last.distance, mx, my);
        }
        last = { kind: "pinch", distance, x: mx, y: my };
      }
    });
    target.addEventListener("pointerleave", () => {
      this.coords.hidden = true;
      this.hoverCell.setAttribute("visibility", "hidden");
    });
    target.addEventListener("keydown", (event) => {
      // + and - are the page's (they work anywhere on it); 0 fits when the board has focus.
      if (event.key !== "0") return;
      this.fit();
      event.preventDefault();
    });
  }

  /** Show the cell under the pointer and its "q, r". */
  hover(clientX, clientY) {
    const [wx, wy] = this.toWorld(clientX, clientY);
    const [q, r] = worldToHex(wx, wy, SIZE);
    const [x, y] = hexToWorld(q, r, SIZE);
    this.hoverCell.setAttribute("d", hexPath(x, y, SIZE));
    this.hoverCell.setAttribute("visibility", "visible");
    const box = this.root.getBoundingClientRect();
    this.coords.textContent = `${q}, ${r}`;
    this.coords.style.left = `${clientX - box.left + 14}px`;
    this.coords.style.top = `${clientY - box.top + 14}px`;
    this.coords.hidden = false;
  }
}
