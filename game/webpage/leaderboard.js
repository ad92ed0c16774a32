// Leaderboard: GET /leaderboard, best first (by rating - uncertainty), refreshed while
// the page is open. The kind filter lives in the address (?kind=bot|human).

import { el, clear, getJSON, formatWhen, errorBox, recordText, RECORD_LABEL, RECORD_TITLE } from "./api.js";

const POLL_MS = 10000;
const LIMIT = 200;
const KINDS = [["all", "Bots and people"], ["bot", "Bots"], ["human", "People"]];

// Each cause of a lost game in words, one and several: the arena's causes (ratings) and
// a tournament's (fastchess's: time, illegal, protocol, crash).
const FAILURES = {
  timeout: ["timeout", "timeouts"],
  time: ["timeout", "timeouts"],
  no_show: ["no-show", "no-shows"],
  disconnect: ["disconnect", "disconnects"],
  protocol_error: ["protocol error", "protocol errors"],
  protocol: ["protocol error", "protocol errors"],
  illegal_move: ["illegal move", "illegal moves"],
  illegal: ["illegal move", "illegal moves"],
  stall: ["stall", "stalls"],
  crash: ["crash", "crashes"],
};

/** Failures by cause in words, most first: "2 timeouts, 1 no-show". */
export function failureText(failures) {
  const parts = Object.entries(failures || {})
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([cause, count]) => {
      const [one, several] = FAILURES[cause] || [cause.replaceAll("_", " "), cause.replaceAll("_", " ")];
      return `${count} ${count === 1 ? one : several}`;
    });
  return parts.join(", ");
}

export function ratingCell(entry) {
  return el("td", { class: "num", title: `${entry.rating} ± ${entry.uncertainty}${entry.provisional ? " (provisional)" : ""}` },
    el("strong", {}, String(entry.rating)), entry.provisional ? "?" : "",
    el("span", { class: "muted" }, ` ±${entry.uncertainty}`));
}

export function statusBadge(status, title) {
  if (!status) return null;
  const cls = status === "active" ? "badge live" : "badge";
  return el("span", { class: cls, title: title || null }, status);
}

export function thinkText(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function row(entry) {
  return el("tr", { dataset: { name: entry.name } },
    el("td", { class: "num" }, String(entry.rank)),
    el("td", {}, el("a", { href: `/web/games?player=${encodeURIComponent(entry.name)}` }, entry.name), " ",
      el("span", { class: "badge" }, entry.kind), entry.kind === "bot" ? [" ", statusBadge(entry.status)] : null),
    ratingCell(entry),
    el("td", { class: "num" }, String(entry.games)),
    el("td", { class: "num record" }, recordText(entry.wins, entry.losses, entry.draws)),
    el("td", { class: "wide" }, failureText(entry.failures)),
    el("td", { class: "num wide" }, thinkText(entry.avg_think_ms)),
    el("td", { class: "wide muted" }, formatWhen(entry.last_seen)),
  );
}

export async function mount(main) {
  document.title = "Leaderboard · htttx arena";
  const params = new URLSearchParams(location.search);
  const wanted = KINDS.some(([value]) => value === params.get("kind")) ? params.get("kind") : "all";
  const kind = el("select", { name: "kind", "aria-label": "Players" },
    KINDS.map(([value, label]) => el("option", { value, selected: value === wanted }, label)));
  const body = el("tbody");
  const message = el("div", { role: "status", "aria-live": "polite" });
  clear(main,
    el("h1", {}, "Leaderboard"),
    el("div", { class: "toolbar" }, el("label", {}, "Players", kind)),
    el("div", { class: "scroll-x" }, el("table", { class: "list", id: "leaderboard" },
      el("thead", {}, el("tr", {},
        el("th", { class: "num" }, "#"), el("th", {}, "Player"), el("th", { class: "num" }, "Rating"),
        el("th", { class: "num" }, "Games"), el("th", { class: "num record", title: RECORD_TITLE }, RECORD_LABEL),
        el("th", { class: "wide" }, "Forfeits lost"), el("th", { class: "num wide" }, "Avg think"),
        el("th", { class: "wide" }, "Last seen"))),
      body)),
    message,
    el("p", { class: "muted" }, "OpenSkill ratings on an Elo-like scale: ranked by rating minus uncertainty; ",
      "a ? marks a provisional rating (fewer than 10 games, or still uncertain). ",
      "Only rated games count: the ladder's, the queue's and rated series."),
  );
  let timer = null;
  async function load() {
    clearTimeout(timer);
    try {
      const board = await getJSON(`/leaderboard?kind=${encodeURIComponent(kind.value)}&limit=${LIMIT}`);
      clear(body, board.entries.map(row));
      clear(message, board.entries.length ? null : el("p", { class: "notice" }, "Nobody is rated yet."));
    } catch (error) {
      clear(message, errorBox(error));
    }
    timer = setTimeout(load, POLL_MS);
  }
  kind.addEventListener("change", () => {
    const address = new URL(location.href);
    if (kind.value === "all") address.searchParams.delete("kind");
    else address.searchParams.set("kind", kind.value);
    history.replaceState(null, "", address);
    load();
  });
  await load();
  return () => clearTimeout(timer);
}
