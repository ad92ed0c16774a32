// A small SVG line chart of evaluations by ply, in [-1, 1] (positive favours X):
// the movers' own evaluations and, as a second series, analysis packets.
// Clicking near a point asks to go to that ply.

const NS = "http://www.w3.org/2000/svg";
const W = 300;
const H = 90;
const PAD = 4;

function svg(tag, attributes = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

export class EvalGraph {
  constructor(onPick) {
    this.onPick = onPick;
    this.plies = 0;
    this.root = svg("svg", { class: "eval-graph", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img", "aria-label": "Evaluation by move" });
    this.root.addEventListener("click", (event) => {
      const box = this.root.getBoundingClientRect();
      if (!box.width || this.plies < 1) return;
      const fraction = (event.clientX - box.left) / box.width;
      this.onPick(Math.round((fraction * W - PAD) / (W - 2 * PAD) * this.plies));
    });
  }

  x(ply) {
    return PAD + (this.plies ? (ply / this.plies) * (W - 2 * PAD) : 0);
  }

  y(value) {
    return H / 2 - value * (H / 2 - PAD);
  }

  /** `series`: [{name, points: [[ply, value]...]}]; `current`: the viewed ply. */
  render(plies, series, current) {
    this.plies = Math.max(1, plies);
    const children = [
      svg("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "axis" }),
      svg("line", { x1: this.x(current), x2: this.x(current), y1: 0, y2: H, class: "cursor" }),
    ];
    for (const { name, points } of series) {
      if (!points.length) continue;
      const d = points.map(([ply, value], i) => `${i ? "L" : "M"}${this.x(ply).toFixed(1)} ${this.y(value).toFixed(1)}`).join("");
      children.push(svg("path", { d, class: `series ${name}`, "vector-effect": "non-scaling-stroke" }));
      for (const [ply, value] of points) {
        children.push(svg("circle", { cx: this.x(ply).toFixed(1), cy: this.y(value).toFixed(1), r: 1.6, class: `point ${name}`, "data-ply": ply }));
      }
    }
    this.root.replaceChildren(...children);
  }
}
