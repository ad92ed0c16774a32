// Games: the record list of GET /games with filters (status, player, bot) and paging.
// The filters and the page live in the address (?status=&player=&bot_url=&cursor=), so
// a filtered list can be shared and the browser's back button walks the pages. The bot
// filter comes from the bots page's links (one bot by its URL, where a name may be
// several): it is shown with a way out, not typed.
// The page shown is asked again often while one of its games runs (its result comes
// in) and now and then while none does (on the first page, one started since shows up):
// only its rows are drawn again, so the filters, the page and the scroll stay.

import { el, clear, getJSON, playerName, outcomeText, formatWhen, errorBox, seatCell } from "./api.js";

const POLL_MS = 2000;
const IDLE_POLL_MS = 10000;
const PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 200;
const STATUSES = [["", "Any status"], ["running", "Playing"], ["finished", "Finished"], ["aborted", "Aborted"]];

function gameName(summary) {
  return summary.name || "Game";
}

function row(summary) {
  const href = `/g/${encodeURIComponent(summary.game_id)}`;
  return el("tr", { class: "link", dataset: { gameId: summary.game_id }, onclick: (event) => {
    if (event.target.closest("a")) return;
    location.href = href;
  } },
    el("td", {}, el("a", { href }, gameName(summary)), summary.status === "running" ? [" ", el("span", { class: "badge live" }, "live")] : null),
    seatCell("x", playerName(summary.player_x)),
    seatCell("o", playerName(summary.player_o)),
    el("td", {}, outcomeText(summary.status, summary.result)),
    el("td", { class: "num" }, String(summary.moves)),
    el("td", { class: "wide muted" }, formatWhen(summary.started_at)),
  );
}

export async function mount(main) {
  document.title = "Games · htttx arena";
  const params = new URLSearchParams(location.search);
  const status = el("select", { name: "status", "aria-label": "Status" },
    STATUSES.map(([value, label]) => el("option", { value, selected: params.get("status") === value }, label)));
  const player = el("input", { name: "player", type: "search", placeholder: "any player", value: params.get("player") || "", maxlength: "100", "aria-label": "Player" });
  const form = el("form", { class: "toolbar", role: "search" },
    el("label", {}, "Status", status),
    el("label", {}, "Player", player),
    el("button", { type: "submit", class: "primary" }, "Filter"),
  );
  const botUrl = params.get("bot_url");
  const anyBot = new URLSearchParams(location.search);
  anyBot.delete("bot_url");
  anyBot.delete("cursor");
  const anyBotQuery = anyBot.toString();
  const botFilter = botUrl
    ? el("p", { id: "bot-filter", class: "filter-note" }, "Games of the bot at ", el("code", {}, botUrl), " · ",
      el("a", { href: location.pathname + (anyBotQuery ? `?${anyBotQuery}` : "") }, "any bot"))
    : null;
  const body = el("tbody");
  const message = el("div", { role: "status", "aria-live": "polite" });
  const pager = el("div", { class: "pager" });
  clear(main,
    el("h1", {}, "Games"),
    form,
    botFilter,
    el("div", { class: "scroll-x" }, el("table", { class: "list", id: "games" },
      el("thead", {}, el("tr", {}, el("th", {}, "Game"), el("th", {}, "X"), el("th", {}, "O"), el("th", {}, "Result"), el("th", { class: "num" }, "Moves"), el("th", { class: "wide" }, "Started"))),
      body)),
    message,
    pager,
  );

  function go(changes) {
    const next = new URLSearchParams(location.search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    const query = next.toString();
    location.href = location.pathname + (query ? `?${query}` : "");
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go({ status: status.value, player: player.value.trim(), cursor: "" });
  });
  status.addEventListener("change", () => go({ status: status.value, player: player.value.trim(), cursor: "" }));

  // ?limit= in the address sets the page size (the API's bounds).
  const asked = Number.parseInt(params.get("limit") || "", 10);
  const size = asked >= 1 && asked <= MAX_PAGE_SIZE ? asked : PAGE_SIZE;
  const query = new URLSearchParams({ limit: String(size) });
  for (const key of ["status", "player", "bot_url", "cursor"]) {
    if (params.get(key)) query.set(key, params.get(key));
  }
  // Drawn once: a poll only shows or hides Older (the first page's next cursor moves
  // as games start), so a focused button stays where it is.
  let nextCursor = null;
  const older = el("button", { type: "button", class: "primary", hidden: true, onclick: () => go({ cursor: nextCursor }) }, "Older →");
  clear(pager,
    params.get("cursor") ? el("button", { type: "button", onclick: () => history.back() }, "← Newer") : null,
    el("a", { href: "/web/games" }, "First page"),
    older,
  );

  let timer = null;
  async function load() {
    clearTimeout(timer);
    let page;
    try {
      page = await getJSON(`/games?${query}`);
    } catch (error) {
      // The rows shown last stay, under the reason they are not fresh.
      clear(message, errorBox(error));
      timer = setTimeout(load, POLL_MS);
      return;
    }
    // A keyboard reader on a game's link is put back on it in the redrawn row.
    const focused = body.contains(document.activeElement) ? document.activeElement.closest("tr").dataset.gameId : null;
    clear(body, page.items.map(row));
    const again = focused && [...body.rows].find((tr) => tr.dataset.gameId === focused);
    if (again) again.querySelector("a").focus();
    clear(message, page.items.length ? null
      : el("p", { class: "notice" }, params.get("cursor") ? "No more games." : "No game matches."));
    nextCursor = page.next_cursor;
    older.hidden = !nextCursor;
    const running = page.items.some((summary) => summary.status === "running");
    timer = setTimeout(load, running ? POLL_MS : IDLE_POLL_MS);
  }
  await load();
  return () => clearTimeout(timer);
}
