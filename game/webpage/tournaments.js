// Tournaments: the list of GET /tournaments, newest first, refreshed often while any
// runs and now and then while none does (one started or resumed since shows up).
// A series (POST /series) is listed too, its rule in the format column.

import { el, clear, getJSON, formatWhen, errorBox } from "./api.js";

const POLL_MS = 3000;
const IDLE_POLL_MS = 10000;

function progress(summary) {
  const done = summary.games_done;
  const total = summary.games_total;
  if (summary.status === "finished" && done < total) {
    // Decided early (a series won, an SPRT's verdict): complete, the bar full.
    return el("span", { class: "progress", title: `decided after ${done} of at most ${total} games` },
      el("progress", { max: String(done || 1), value: String(done) }),
      ` ${done} of ≤${total}`);
  }
  return el("span", { class: "progress", title: `${done} of ${total} games` },
    el("progress", { max: String(total || 1), value: String(done) }),
    ` ${done}/${total}`);
}

function row(summary) {
  const href = `/t/${encodeURIComponent(summary.tournament_id)}`;
  return el("tr", { class: "link", dataset: { tournamentId: summary.tournament_id }, onclick: (event) => {
    if (!event.target.closest("a")) location.href = href;
  } },
    el("td", {}, el("a", { href }, summary.name || summary.tournament_id.slice(0, 8))),
    el("td", {}, summary.series_rule ? `series, ${summary.series_rule}` : summary.format.replace("_", " ")),
    el("td", { class: "wide" }, summary.bots.join(", ")),
    el("td", {}, el("span", { class: `badge${summary.status === "running" ? " live" : ""}` }, summary.status)),
    el("td", {}, progress(summary)),
    el("td", { class: "wide muted" }, formatWhen(summary.created_at)),
  );
}

export async function mount(main) {
  document.title = "Tournaments · htttx arena";
  const body = el("tbody");
  const message = el("div", { role: "status", "aria-live": "polite" });
  clear(main,
    el("h1", {}, "Tournaments"),
    el("div", { class: "scroll-x" }, el("table", { class: "list", id: "tournaments" },
      el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Format"), el("th", { class: "wide" }, "Bots"), el("th", {}, "Status"), el("th", {}, "Games"), el("th", { class: "wide" }, "Created"))),
      body)),
    message,
    el("p", { class: "muted" }, "Start one with ", el("code", {}, "htttx-tournament"), ", ", el("code", {}, "POST /tournaments"), " or ", el("code", {}, "POST /series"), " (see ", el("a", { href: "/docs" }, "the API"), ")."),
  );
  let timer = null;
  async function load() {
    try {
      const page = await getJSON("/tournaments?limit=100");
      clear(body, page.tournaments.map(row));
      clear(message, page.tournaments.length ? null : el("p", { class: "notice" }, "No tournament yet."));
      const running = page.tournaments.some((t) => t.status === "running");
      clearTimeout(timer);
      timer = setTimeout(load, running ? POLL_MS : IDLE_POLL_MS);
    } catch (error) {
      clear(message, errorBox(error));
      timer = setTimeout(load, POLL_MS);
    }
  }
  await load();
  return () => clearTimeout(timer);
}
