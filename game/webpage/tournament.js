// One tournament: standings with failures, each pair's statistics, the SPRT's progress,
// the crosstable and links to every game; refreshed while it runs, and now and then
// while it may still be resumed. A series (POST /series) is a tournament too: it shows
// its score above the standings.

import { el, clear, getJSON, formatWhen, errorBox, outcomeText, seatCell, recordText, RECORD_LABEL, RECORD_TITLE } from "./api.js";
import { failureText } from "./leaderboard.js";

const POLL_MS = 2000;
// Stopped, interrupted or failed, it may be resumed (POST .../resume, a restart that
// resumes a series): looked at now and then. Finished, it stays as it is.
const IDLE_POLL_MS = 10000;
const GAMES_PAGE = 100;
// The most games GET /tournaments/<id>/games gives in one answer (its limit's bound).
const MOST_GAMES_AN_ANSWER = 500;

// A figure with no value: none yet (the JSON's null: no game of a bot or a pair counted
// so far) or none at all (NaN). fastchess and the tournament report print n/a too.
const NO_VALUE = "n/a";
const missing = (value) => value === null || value === undefined;

/** A figure as text: one that rounds to zero reads 0.00, never -0.00 (an LLR of
 * -0.001); an infinite one ∞ or -∞ (the JSON's "Infinity": every game of a pair won or
 * lost, fastchess's inf), not "Infinity"; one with no value n/a. */
function fixed(value, digits = 1) {
  if (missing(value)) return NO_VALUE;
  const number = Number(value);
  if (Number.isNaN(number)) return NO_VALUE;
  if (!Number.isFinite(number)) return number > 0 ? "∞" : "-∞";
  return number.toFixed(digits).replace(/^-(0\.?0*)$/, "$1");
}
/** As fixed, a gain marked +: +12.3, -4.0, 0.0, +∞. */
function signed(value, digits = 1) {
  const text = fixed(value, digits);
  return /^[0-9∞]/.test(text) && !/^0\.?0*$/.test(text) ? `+${text}` : text;
}
const plusMinus = (value, error) => (missing(value) ? NO_VALUE : `${signed(value)} ± ${fixed(error)}`);
const percent = (value) => (missing(value) ? NO_VALUE : `${(100 * value).toFixed(1)}%`);

// W, L and D in the order of every record on the page (api.js's RECORD_LABEL).
const HEAD_TITLES = { W: "wins", L: "losses", D: "draws" };

function standingsTable(view) {
  const head = ["#", "Bot", "Games", "W", "L", "D", "Points", "Score", "Elo", "Failures"];
  return el("table", { class: "list", id: "standings" },
    el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { class: i >= 2 && i <= 8 ? "num" : null, title: HEAD_TITLES[h] }, h)))),
    el("tbody", {}, view.standings.map((line, index) => el("tr", {},
      el("td", { class: "num" }, String(index + 1)),
      el("td", {}, el("strong", {}, line.name)),
      el("td", { class: "num" }, String(line.games)),
      el("td", { class: "num" }, String(line.wins)),
      el("td", { class: "num" }, String(line.losses)),
      el("td", { class: "num" }, String(line.draws)),
      el("td", { class: "num" }, fixed(line.points, 1)),
      el("td", { class: "num" }, percent(line.score)),
      el("td", { class: "num" }, plusMinus(line.elo, line.elo_error)),
      el("td", { class: "muted" }, failureText(line.failures)),
    ))));
}

function pairsTable(view) {
  const head = ["Bot", "Opponent", "Games", RECORD_LABEL, "Elo", "nElo", "LOS", "Draws", "Pentanomial"];
  const numbers = new Set(["Games", "Elo", "nElo", "LOS", "Draws"]);
  const record = (h) => h === RECORD_LABEL;
  return el("table", { class: "list", id: "pairs" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { class: numbers.has(h) ? "num" : record(h) ? "record" : null, title: record(h) ? RECORD_TITLE : null }, h)))),
    el("tbody", {}, view.pairs.map((pair) => el("tr", {},
      el("td", {}, pair.bot), el("td", {}, pair.opponent),
      el("td", { class: "num" }, String(pair.games)),
      el("td", { class: "record" }, recordText(pair.wins, pair.losses, pair.draws)),
      el("td", { class: "num" }, plusMinus(pair.elo, pair.elo_error)),
      el("td", { class: "num" }, plusMinus(pair.nelo, pair.nelo_error)),
      el("td", { class: "num" }, percent(pair.los)),
      el("td", { class: "num" }, percent(pair.draw_ratio)),
      el("td", { class: "record" }, el("code", {}, `[${pair.pentanomial.join(", ")}]`)),
    ))));
}

/** What an SPRT says: its decision, or, undecided ("continue"), whether it goes on: a
 * tournament that is over (its games all played, stopped...) ended with no decision. */
function sprtVerdict(decision, status) {
  if (decision === "H1") return "H1 accepted: the first bot is stronger by elo1 or more";
  if (decision === "H0") return "H0 accepted: not stronger by elo1";
  if (status === "running") return "running: no decision yet";
  if (status === "finished") return "no decision: every game was played before the LLR reached a bound";
  return `no decision (${status})`;
}

function sprtPanel(sprt, status) {
  // The LLR on a bar from the lower to the upper bound: where it stands, and the decision.
  const span = sprt.upper - sprt.lower;
  const at = Math.min(1, Math.max(0, (sprt.llr - sprt.lower) / span));
  const verdict = sprtVerdict(sprt.decision, status);
  // Placed through the CSSOM: the page's Content-Security-Policy refuses style attributes.
  const mark = el("span", { class: "sprt-mark" });
  mark.style.left = `${(100 * at).toFixed(1)}%`;
  return el("div", { class: "panel sprt", id: "sprt", dataset: { decision: sprt.decision } },
    el("div", {}, `SPRT elo0 ${sprt.elo0}, elo1 ${sprt.elo1}, α ${sprt.alpha}, β ${sprt.beta}`),
    el("div", { class: "sprt-bar", role: "meter", "aria-valuemin": String(sprt.lower), "aria-valuemax": String(sprt.upper), "aria-valuenow": String(sprt.llr), "aria-label": "log-likelihood ratio" },
      mark),
    el("div", { class: "sprt-scale" }, el("span", {}, fixed(sprt.lower, 2)), el("span", {}, `LLR ${fixed(sprt.llr, 2)}`), el("span", {}, fixed(sprt.upper, 2))),
    el("div", { class: "muted" }, verdict));
}

function seriesPanel(series, status) {
  // Undecided, it is playing only while it runs: a stopped or failed series says so.
  const undecided = status === "running" ? "playing" : status;
  const state = series.decided ? (series.winner ? `${series.winner} wins the series` : "the series is drawn") : undecided;
  return el("div", { class: "panel series", id: "series", dataset: { decided: String(series.decided) } },
    el("div", {}, `Series, ${series.rule}`),
    el("div", { class: "series-score" }, el("strong", {}, series.text)),
    el("div", { class: "muted" }, `${series.games} game${series.games === 1 ? "" : "s"} · ${state}`));
}

/** Why a game's result is not in the standings: a finished game counts with its pair once
 * that pair and every one before it are complete, so until the tournament is over it
 * is waiting, not left out; an aborted game (played again) or one that ended after the
 * SPRT decided never counts. */
function countNote(game, tournamentStatus) {
  if (game.counted || game.status === "running") return null;
  if (game.status === "finished" && tournamentStatus !== "finished") {
    return el("span", { class: "muted", title: "counts once its pair and every pair before it are complete" }, " (not counted yet)");
  }
  return el("span", { class: "muted" }, " (not counted)");
}

function gameRow(game, tournamentStatus) {
  const href = `/g/${encodeURIComponent(game.game_id)}`;
  const result = game.status === "running" ? "playing" : outcomeText(game.status, game.result);
  return el("tr", { dataset: { gameId: game.game_id } },
    el("td", { class: "num" }, el("a", { href }, String(game.number))),
    el("td", { class: "num" }, String(game.round)),
    seatCell("x", game.x),
    seatCell("o", game.o),
    el("td", {}, result, countNote(game, tournamentStatus)),
  );
}

/** The first `count` started games of the tournament, and whether the server has more
 * (its next_offset: the scheduled total counts games not started yet), asked for in
 * answers of at most the route's bound. */
async function startedGames(id, count) {
  const items = [];
  let offset = 0;
  for (;;) {
    const limit = Math.min(count - items.length, MOST_GAMES_AN_ANSWER);
    const page = await getJSON(`/tournaments/${id}/games?offset=${offset}&limit=${limit}`);
    items.push(...page.items);
    const more = page.next_offset !== null && page.next_offset !== undefined;
    if (!more || items.length >= count) return { items, more };
    offset = page.next_offset;
  }
}

// Each poll draws the page anew: a box scrolled sideways (a wide table on a phone) is
// put back where its reader left it, found again by the id of what it holds.
function scrollPlaces(main) {
  const places = new Map();
  for (const box of main.querySelectorAll(".scroll-x")) {
    const key = box.id || (box.firstElementChild && box.firstElementChild.id);
    if (key && box.scrollLeft) places.set(key, box.scrollLeft);
  }
  return places;
}

function restoreScrollPlaces(main, places) {
  for (const box of main.querySelectorAll(".scroll-x")) {
    const key = box.id || (box.firstElementChild && box.firstElementChild.id);
    if (places.has(key)) box.scrollLeft = places.get(key);
  }
}

export async function mount(main, { tournamentId }) {
  const id = encodeURIComponent(tournamentId);
  const message = el("div", { role: "status", "aria-live": "polite" });
  clear(main, el("h1", {}, "Tournament"), message);
  let timer = null;
  let shownGames = GAMES_PAGE;
  let shown = false;

  async function load() {
    let view;
    let games;
    try {
      [view, games] = await Promise.all([
        getJSON(`/tournaments/${id}`),
        startedGames(id, shownGames),
      ]);
    } catch (error) {
      // A poll that fails (the server restarting, the network gone) says so above what
      // was shown last, which stays: the standings do not vanish until it is back.
      if (shown && error.status !== 404) clear(message, errorBox(error));
      else clear(main, el("h1", {}, "Tournament"), errorBox(error), el("p", {}, el("a", { href: "/web/tournaments" }, "All tournaments")));
      if (error.status !== 404) timer = setTimeout(load, POLL_MS);
      return;
    }
    const kind = view.series ? "Series" : "Tournament";
    document.title = `${view.name || kind} · htttx arena`;
    // Decided early (a series won, an SPRT's verdict): complete, the bar full, as the
    // list of tournaments shows it.
    const early = view.status === "finished" && view.games_done < view.games_total;
    const played = early
      ? `decided after ${view.games_done} of at most ${view.games_total} games`
      : `${view.games_done} of ${view.games_total} games`;
    const more = games.more
      ? el("button", { type: "button", id: "more-games", onclick: () => { shownGames += GAMES_PAGE; load(); } }, "More games")
      : null;
    const places = scrollPlaces(main);
    // Redrawn, the button is a new one: a keyboard reader on it stays on it.
    const onMore = document.activeElement && document.activeElement.id === "more-games";
    clear(message);
    clear(main,
      el("h1", {}, view.name || `${kind} ${view.tournament_id.slice(0, 8)}`),
      message,
      el("p", { class: "muted", id: "tournament-status" },
        el("span", { class: `badge${view.status === "running" ? " live" : ""}` }, view.status), " ",
        `${view.series ? view.series.rule : view.format.replace("_", " ")} · ${played} · ${view.games_running} playing · started ${formatWhen(view.created_at)}`,
        view.reason ? ` · ${view.reason}` : ""),
      el("progress", { max: String((early ? view.games_done : view.games_total) || 1), value: String(view.games_done), class: "wide-progress", "aria-label": "games played" }),
      view.sprt ? sprtPanel(view.sprt, view.status) : null,
      view.series ? seriesPanel(view.series, view.status) : null,
      el("h2", {}, "Standings"),
      el("div", { class: "scroll-x" }, standingsTable(view)),
      view.pairs.length ? [el("h2", {}, "Pairs"), el("div", { class: "scroll-x" }, pairsTable(view))] : null,
      view.crosstable ? [el("h2", {}, "Crosstable"), el("pre", { class: "panel crosstable scroll-x", id: "crosstable" }, view.crosstable)] : null,
      view.live_games.length ? [el("h2", {}, "Playing now"), el("p", { id: "tournament-live" }, view.live_games.map((g, i) => [i ? " · " : "", el("a", { href: `/g/${encodeURIComponent(g)}` }, g.slice(0, 8))]))] : null,
      el("h2", {}, "Games"),
      el("div", { class: "scroll-x" }, el("table", { class: "list", id: "tournament-games" },
        el("thead", {}, el("tr", {}, el("th", { class: "num" }, "Game"), el("th", { class: "num" }, "Round"), el("th", {}, "X"), el("th", {}, "O"), el("th", {}, "Result"))),
        el("tbody", {}, games.items.map((game) => gameRow(game, view.status))))),
      more,
    );
    restoreScrollPlaces(main, places);
    if (onMore && more) more.focus();
    shown = true;
    clearTimeout(timer);
    if (view.status !== "finished") timer = setTimeout(load, view.status === "running" ? POLL_MS : IDLE_POLL_MS);
  }
  await load();
  return () => clearTimeout(timer);
}
