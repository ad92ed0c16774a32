// Bots: the bots registered in the arena (rating, status, record, backoff) and a form
// to register one (POST /bots), the bots this server hosts and the bots seen in recent
// games, with what their capabilities say about them, and a form that pairs two of
// them (POST /game/new).

import { el, clear, getJSON, postJSON, playerName, apiToken, setApiToken, errorBox, formatWhen, detailText, recordText, RECORD_LABEL, RECORD_TITLE, ApiError } from "./api.js";
import { failureText, ratingCell, statusBadge } from "./leaderboard.js";

//: Recent games scanned for the bots they seated (one page of the list, newest first).
const SEEN_FROM_GAMES = 200;

const TIME_CONTROLS = [
  ["", "No clock", null],
  ["turn1", "1 s per move", { clock_type: "turn", clock: 1.0 }],
  ["turn5", "5 s per move", { clock_type: "turn", clock: 5.0 }],
  ["10+0.1", "10 s + 0.1 s", { clock_type: "incremental", clock: 10.0, increment: 0.1 }],
  ["60+1", "1 min + 1 s", { clock_type: "incremental", clock: 60.0, increment: 1.0 }],
  ["300", "5 min", { clock_type: "match", clock: 300.0 }],
];

function metaLine(meta) {
  if (!meta) return "";
  return [meta.version ? `v${meta.version}` : null, meta.authors && meta.authors.length ? `by ${meta.authors.join(", ")}` : null]
    .filter(Boolean).join(" · ");
}

// A bot is its URL: hosted bots play under their capabilities' names, which another
// bot (or any seat) may give too, so a bot's games are counted and listed by URL.
function gamesByUrl(summaries) {
  const counts = new Map();
  for (const summary of summaries) {
    const urls = new Set([summary.player_x, summary.player_o].filter((p) => p && p.bot_url).map((p) => p.bot_url));
    for (const url of urls) counts.set(url, (counts.get(url) || 0) + 1);
  }
  return counts;
}

function seenBots(summaries, hostedUrls, counts) {
  const seen = new Map();
  for (const summary of summaries) {
    for (const player of [summary.player_x, summary.player_o]) {
      if (!player || player.type !== "bot" || !player.bot_url || hostedUrls.has(player.bot_url) || seen.has(player.bot_url)) continue;
      seen.set(player.bot_url, { url: player.bot_url, name: playerName(player), meta: player.meta, games: counts.get(player.bot_url) });
    }
  }
  return [...seen.values()].sort((a, b) => b.games - a.games);
}

function botRow(bot, hosted, games) {
  const meta = bot.meta || {};
  return el("tr", { dataset: { url: bot.url } },
    el("td", {}, el("strong", {}, meta.name || bot.name), hosted ? [" ", el("span", { class: "badge" }, "hosted")] : null,
      meta.description ? el("div", { class: "muted" }, meta.description) : null),
    el("td", { class: "wide" }, metaLine(meta), meta.tags && meta.tags.length ? el("div", {}, meta.tags.map((t) => el("span", { class: "badge" }, t))) : null),
    el("td", {}, el("code", {}, bot.url)),
    el("td", { class: "num" }, String(games || 0)),
    el("td", {}, el("a", { href: `/web/games?bot_url=${encodeURIComponent(bot.url)}` }, "games")),
  );
}

function registeredRow(bot) {
  const meta = bot.meta || {};
  // The reason is the failure and the game's result detail as the server words them
  // ("timeout: o forfeits: o ran out of time"): its sides are X and O, as on the rest of
  // the page.
  const backoff = bot.backoff_until && new Date(bot.backoff_until) > new Date()
    ? el("div", { class: "muted" }, `backed off until ${formatWhen(bot.backoff_until)}: ${detailText(bot.backoff_reason || "")}`)
    : null;
  return el("tr", { dataset: { name: bot.name } },
    el("td", {}, el("strong", {}, bot.name), bot.owner === "server" ? [" ", el("span", { class: "badge" }, "server's")] : null,
      bot.description ? el("div", { class: "muted" }, bot.description) : null,
      meta.name && meta.name !== bot.name ? el("div", { class: "muted" }, `${meta.name}${meta.version ? ` v${meta.version}` : ""}`) : null),
    el("td", {}, statusBadge(bot.status, bot.check_error), bot.ladder ? null : [" ", el("span", { class: "badge" }, "not on the ladder")],
      bot.status === "unreachable" && bot.check_error ? el("div", { class: "muted" }, bot.check_error) : null, backoff),
    ratingCell(bot),
    el("td", { class: "num record" }, recordText(bot.wins, bot.losses, bot.draws)),
    el("td", { class: "wide" }, failureText(bot.failures)),
    el("td", { class: "wide" }, el("code", {}, bot.url)),
  );
}

function registerForm(onRegistered) {
  const name = el("input", { name: "bot-name", type: "text", required: true, maxlength: "64", "aria-label": "Bot name" });
  const url = el("input", { name: "bot-url", type: "url", required: true, placeholder: "http://host:port/", "aria-label": "Bot URL" });
  const description = el("input", { name: "bot-description", type: "text", maxlength: "500", placeholder: "optional", "aria-label": "Description" });
  const ladder = el("input", { name: "bot-ladder", type: "checkbox", checked: true });
  const result = el("div", { role: "status", "aria-live": "polite" });
  const submit = el("button", { type: "submit", class: "primary" }, "Register the bot");
  const form = el("form", { class: "stack panel", id: "register-form" },
    el("label", {}, "Name", name),
    el("label", {}, "URL", url),
    el("label", {}, "Description", description),
    el("label", { class: "inline" }, ladder, " Play on the ladder"),
    submit, result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), url: url.value.trim(), ladder: ladder.checked };
    if (description.value.trim()) body.description = description.value.trim();
    submit.disabled = true;
    clear(result, el("p", { class: "muted" }, "Checking the bot's capabilities…"));
    try {
      const registered = await postJSON("/bots", body);
      clear(result, el("div", { class: "notice ok", id: "owner-token" },
        el("p", {}, `${registered.name} is registered. Its owner token, shown this once (keep it: `,
          el("code", {}, "PATCH"), " and ", el("code", {}, "DELETE /bots/{name}"), " ask for it):"),
        el("code", { class: "token" }, registered.owner_token)));
      onRegistered(registered);
    } catch (error) {
      clear(result, errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// The seat a picker stands for: a registered bot plays under its registered name (two
// registered bots may share a URL, and the server refuses their names on any other
// seat); any other bot under the name its capabilities give.
function seatOf(bot) {
  const seat = { type: "bot", bot_url: bot.url };
  if (bot.registered) seat.name = bot.name;
  return seat;
}

function seatPicker(label, name, bots, preselect) {
  // A registered bot's option is keyed by its name, not its URL: two may share one.
  const keyOf = (bot) => bot.registered ? `registered:${bot.name}` : bot.url;
  const byKey = new Map(bots.map((bot) => [keyOf(bot), bot]));
  const select = el("select", { name, required: true, "aria-label": `${label} bot` },
    bots.map((bot, index) => el("option", { value: keyOf(bot), selected: index === preselect },
      `${bot.registered ? bot.name : (bot.meta && bot.meta.name) || bot.name} — ${bot.url}`)),
    el("option", { value: "" }, "Another bot, by URL…"));
  const url = el("input", { name: `${name}-url`, type: "url", placeholder: "http://host:port/", hidden: true, "aria-label": `${label} bot URL` });
  select.addEventListener("change", () => {
    url.hidden = select.value !== "";
    url.required = select.value === "";
  });
  if (!bots.length) {
    url.hidden = false;
    url.required = true;
  }
  const seat = () => select.value === "" ? { type: "bot", bot_url: url.value.trim() } : seatOf(byKey.get(select.value));
  return { node: el("label", {}, label, select, url), seat };
}

export async function mount(main) {
  document.title = "Bots · htttx arena";
  const message = el("div", { role: "status", "aria-live": "polite" });
  clear(main, el("h1", {}, "Bots"), message);
  let hosted;
  let games;
  try {
    [hosted, games] = await Promise.all([getJSON("/bots"), getJSON(`/games?limit=${SEEN_FROM_GAMES}`)]);
  } catch (error) {
    clear(message, errorBox(error));
    return;
  }
  const registered = hosted.registered || [];
  const hostedUrls = new Set([...hosted.bots.map((b) => b.url), ...registered.map((b) => b.url)]);
  const counts = gamesByUrl(games.items);
  const seen = seenBots(games.items, hostedUrls, counts);
  // Registered bots go by their registered names in the seat pickers.
  const playable = registered.filter((b) => b.status === "active").map((b) => ({ name: b.name, url: b.url, registered: true }));
  const all = [...hosted.bots, ...playable, ...seen];

  const registeredBody = el("tbody", {}, registered.map(registeredRow));
  const registeredTable = el("div", { class: "scroll-x" }, el("table", { class: "list", id: "registered-bots" },
    el("thead", {}, el("tr", {}, el("th", {}, "Bot"), el("th", {}, "Status"), el("th", { class: "num" }, "Rating"),
      el("th", { class: "num record", title: RECORD_TITLE }, RECORD_LABEL), el("th", { class: "wide" }, "Forfeits lost"), el("th", { class: "wide" }, "URL"))),
    registeredBody));
  const noneYet = el("p", { class: "notice", hidden: registered.length > 0 }, "No bot is registered yet.");
  const register = registerForm((bot) => {
    registeredBody.append(registeredRow(bot));
    noneYet.hidden = true;
  });

  const head = el("thead", {}, el("tr", {}, el("th", {}, "Bot"), el("th", { class: "wide" }, "About"), el("th", {}, "URL"), el("th", { class: "num" }, "Recent games"), el("th", {}, "")));
  const table = el("div", { class: "scroll-x" }, el("table", { class: "list", id: "bots" }, head,
    el("tbody", {}, hosted.bots.map((b) => botRow(b, true, counts.get(b.url))), seen.map((b) => botRow(b, false, b.games)))));

  const x = seatPicker("X", "x", all, 0);
  const o = seatPicker("O", "o", all, Math.min(1, all.length - 1));
  const timeControl = el("select", { name: "time", "aria-label": "Time control" }, TIME_CONTROLS.map(([value, label]) => el("option", { value }, label)));
  const name = el("input", { name: "name", type: "text", maxlength: "100", placeholder: "optional" });
  const token = el("input", { name: "token", type: "password", autocomplete: "off", value: apiToken(), placeholder: "only if the server has one" });
  const result = el("div", { role: "status", "aria-live": "polite" });
  const submit = el("button", { type: "submit", class: "primary" }, "Start the game");
  const form = el("form", { class: "stack panel", id: "pair-form" },
    x.node, o.node,
    el("label", {}, "Time control", timeControl),
    el("label", {}, "Name of the game", name),
    el("label", {}, "API token", token),
    submit, result);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    setApiToken(token.value.trim());
    const chosen = TIME_CONTROLS.find(([value]) => value === timeControl.value);
    const body = { player_x: x.seat(), player_o: o.seat() };
    if (name.value.trim()) body.name = name.value.trim();
    if (chosen && chosen[2]) body.match_config = chosen[2];
    submit.disabled = true;
    clear(result, el("p", { class: "muted" }, "Asking both bots for their capabilities…"));
    try {
      const created = await postJSON("/game/new", body);
      clear(result, el("p", { class: "notice ok" }, "Game created: ", el("a", { href: `/g/${encodeURIComponent(created.game_id)}` }, "watch it")));
      location.href = `/g/${encodeURIComponent(created.game_id)}`;
    } catch (error) {
      clear(result, errorBox(error));
      if (error instanceof ApiError && error.status === 401) token.focus();
    } finally {
      submit.disabled = false;
    }
  });

  clear(main,
    el("h1", {}, "Bots"),
    el("div", { class: "grid2" },
      el("section", {}, el("h2", {}, "Registered in the arena"), registeredTable, noneYet,
        el("p", { class: "muted" }, "Registered bots are rated in the arena's games; see the ", el("a", { href: "/web/leaderboard" }, "leaderboard"), ".")),
      el("section", {}, el("h2", {}, "Register a bot"), register)),
    el("div", { class: "grid2" },
      el("section", {}, el("h2", {}, "Hosted here and seen in games"), table,
        el("p", { class: "muted" }, "Hosted bots play on this server's own port; other bots are the ones seen in the latest games. ",
          `Recent games: of the latest ${SEEN_FROM_GAMES}, those the bot at that URL played.`)),
      el("section", {}, el("h2", {}, "Pair two bots"), form)),
  );
}
