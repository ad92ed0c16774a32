// The page's router: every page path gets this shell; the path picks the view.
// Each view module exports mount(main, params) and may return a function that
// stops it (sockets, timers) — called before another view mounts.

import { el, clear, markSection } from "./api.js";

const ROUTES = [
  [/^\/$/, "live", () => import("./live.js"), () => ({})],
  // A game's section is "live" or "games", as it runs or is over: game.js marks it.
  [/^\/g\/([^/]+)$/, null, () => import("./game.js"), (m) => ({ gameId: decodeURIComponent(m[1]) })],
  [/^\/web\/games$/, "games", () => import("./games.js"), () => ({})],
  [/^\/web\/bots$/, "bots", () => import("./bots.js"), () => ({})],
  [/^\/web\/tournaments$/, "tournaments", () => import("./tournaments.js"), () => ({})],
  [/^\/web\/leaderboard$/, "leaderboard", () => import("./leaderboard.js"), () => ({})],
  [/^\/t\/([^/]+)$/, "tournaments", () => import("./tournament.js"), (m) => ({ tournamentId: decodeURIComponent(m[1]) })],
  [/^\/c\/([^/]+)$/, "challenge", () => import("./challenge.js"), (m) => ({ challengeId: decodeURIComponent(m[1]) })],
];

function notFound(main) {
  document.title = "Not found · htttx arena";
  clear(main, el("h1", {}, "Not found"), el("p", {}, "There is no page at ", el("code", {}, location.pathname), ". ", el("a", { href: "/" }, "Live games")));
}

async function start() {
  const main = document.getElementById("main");
  const path = location.pathname.replace(/\/+$/, "") || "/";
  for (const [pattern, section, load, params] of ROUTES) {
    const match = path.match(pattern);
    if (!match) continue;
    markSection(section);
    const module = await load();
    await module.mount(main, params(match));
    return;
  }
  notFound(main);
}

start().catch((error) => {
  console.error(error);
  const main = document.getElementById("main");
  clear(main, el("p", { class: "notice error", role: "alert" }, `The page failed to start: ${error}`));
});
