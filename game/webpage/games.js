// Games: the record list of GET /games with filters (status, player, bot) and paging.
// The filters and the page live in the address (?status=&player=&bot_url=&cursor=), so
// a filtered list can be shared and the browser's back button walks the pages. The bot
// filter comes from the bots page's links (one bot by its URL, where a name may be
// several): it is shown with a way out, not typed.

import { el, clear, getJSON, playerName, outcomeText, formatWhen, errorBox } from "./api.js";

const PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 200;
const STATUSES = [["", "Any status"], ["running", "Playing"], ["finished", "Finished"], ["aborted", "Aborted"]];

function gameName(summary) {
  return summary.name || "Game";
}

function row(summary) {
  const href = `/g/${encodeURIComponent(summary.game_id)}`;
  const side = (s, player) => el("td", {}, el("span", { class: `side-${s}` }, s.toUpperCase()), " ", playerName(player));
  return el("tr", { class: "link", dataset: { gameId: summary.game_id }, onclick: (event) => {
    if (event.target.closest("a")) return;
    location.href = href;
  } },
    el("td", {}, el("a", { href }, gameName(summary)), summary.status === "running" ? [" ", el("span", { class: "badge live" }, "live")] : null),
    side("x", summary.player_x),
    side("o", summary.player_o),
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
  try {
    const page = await getJSON(`/games?${query}`);
    clear(body, page.items.map(row));
    if (!page.items.length) {
      clear(message, el("p", { class: "notice" }, params.get("cursor") ? "No more games." : "No game matches."));
    }
    clear(pager,
      params.get("cursor") ? el("button", { type: "button", onclick: () => history.back() }, "← Newer") : null,
      el("a", { href: "/web/games" }, "First page"),
      page.next_cursor ? el("button", { type: "button", class: "primary", onclick: () => go({ cursor: page.next_cursor }) }, "Older →") : null,
    );
  } catch (error) {
    clear(message, errorBox(error));
  }
}
