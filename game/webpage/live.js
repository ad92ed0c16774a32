// Live: the games being played, updating by itself, and the latest finished ones.
// It polls GET /games (cheap: summaries come from memory for running games) and
// lets the side to move's clock run down between polls.

import { el, clear, getJSON, playerName, formatClock, outcomeText, formatWhen, errorBox } from "./api.js";

const POLL_MS = 2000;
const TICK_MS = 200;

function clockCell(summary, side, polledAt) {
  const ms = side === "x" ? summary.clock_x_ms : summary.clock_o_ms;
  const running = summary.to_move === side && ms !== null && ms !== undefined;
  return el("span", {
    class: "clock",
    dataset: running ? { ms: String(ms), since: String(polledAt) } : {},
    "aria-label": ms === null || ms === undefined ? null : `${side.toUpperCase()} clock`,
  }, formatClock(ms));
}

function gameCard(summary, polledAt) {
  const row = (side, player) => [
    el("span", {}, el("span", { class: `side-${side}` }, side.toUpperCase()), " ", playerName(player),
      summary.to_move === side ? el("span", { class: "muted", title: "to move" }, " ●") : null),
    clockCell(summary, side, polledAt),
  ];
  return el("a", { class: "card", href: `/g/${encodeURIComponent(summary.game_id)}`, dataset: { gameId: summary.game_id } },
    el("div", { class: "meta" }, el("span", {}, summary.name || "Game"), el("span", { class: "badge live" }, "live")),
    el("div", { class: "players" }, row("x", summary.player_x), row("o", summary.player_o)),
    el("div", { class: "meta" }, el("span", { class: "moves" }, `move ${summary.moves}`), el("span", {}, formatWhen(summary.started_at))),
  );
}

function finishedRow(summary) {
  const href = `/g/${encodeURIComponent(summary.game_id)}`;
  return el("tr", { class: "link", onclick: () => { location.href = href; } },
    el("td", {}, el("a", { href }, `${playerName(summary.player_x)} – ${playerName(summary.player_o)}`)),
    el("td", {}, outcomeText(summary.status, summary.result)),
    el("td", { class: "num" }, String(summary.moves)),
    el("td", { class: "wide muted" }, formatWhen(summary.ended_at)),
  );
}

export async function mount(main) {
  document.title = "Live · htttx arena";
  const status = el("p", { class: "muted", role: "status", "aria-live": "polite" });
  const cards = el("div", { class: "cards", id: "live-games" });
  const recent = el("tbody");
  const recentNote = el("p", { class: "muted", id: "recent-note" });
  clear(main,
    el("h1", {}, "Live games"),
    cards,
    status,
    el("h2", {}, "Just finished"),
    el("div", { class: "scroll-x" }, el("table", { class: "list", id: "recent-games" },
      el("thead", {}, el("tr", {}, el("th", {}, "Players"), el("th", {}, "Result"), el("th", { class: "num" }, "Moves"), el("th", { class: "wide" }, "Ended"))),
      recent)),
    recentNote,
  );

  async function poll() {
    try {
      const [live, finished] = await Promise.all([
        getJSON("/games?status=running&limit=60"),
        getJSON("/games?status=finished&limit=10"),
      ]);
      const polledAt = performance.now();
      clear(cards, live.items.map((s) => gameCard(s, polledAt)));
      // The text replaces a failed poll's error box too.
      status.textContent = live.items.length
        ? ""
        : "No game is being played right now. Pair two bots on the Bots page, or run a tournament.";
      clear(recent, finished.items.map(finishedRow));
      recentNote.textContent = finished.items.length ? "" : "No game has finished yet.";
    } catch (error) {
      clear(status, errorBox(error));
    }
  }

  function tick() {
    const now = performance.now();
    for (const clock of cards.querySelectorAll(".clock[data-ms]")) {
      const left = Number(clock.dataset.ms) - (now - Number(clock.dataset.since));
      clock.textContent = formatClock(left);
    }
  }

  await poll();
  let timer = setInterval(poll, POLL_MS);
  const ticker = setInterval(tick, TICK_MS);
  // A hidden tab costs the server nothing: polling stops until it is shown again.
  document.addEventListener("visibilitychange", () => {
    clearInterval(timer);
    if (!document.hidden) {
      poll();
      timer = setInterval(poll, POLL_MS);
    }
  });
  return () => { clearInterval(timer); clearInterval(ticker); };
}
