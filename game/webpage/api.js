// Talking to this server, and small DOM helpers shared by every view.
// Everything a bot or a person typed (names, details) is put in the page as text,
// never as HTML: el() only ever sets textContent and attributes.

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

const TOKEN_KEY = "htttx-api-token";

export function apiToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function setApiToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

async function answer(response) {
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = body && typeof body.detail === "string" ? body.detail : `HTTP ${response.status}`;
    throw new ApiError(response.status, detail);
  }
  return body;
}

export async function getJSON(path, { signal } = {}) {
  let response;
  try {
    response = await fetch(path, { headers: { accept: "application/json" }, signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "the server cannot be reached");
  }
  return answer(response);
}

export async function getText(path) {
  let response;
  try {
    response = await fetch(path);
  } catch {
    throw new ApiError(0, "the server cannot be reached");
  }
  if (!response.ok) {
    const body = await answer(response).catch((error) => error);
    throw body instanceof ApiError ? body : new ApiError(response.status, `HTTP ${response.status}`);
  }
  return response.text();
}

export async function postJSON(path, body) {
  const headers = { "content-type": "application/json", accept: "application/json" };
  const token = apiToken();
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "the server cannot be reached");
  }
  return answer(response);
}

export function socketURL(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

/** el("a", {href: "/g/1", class: "x"}, "text", child...) — attributes and text only.
 * Children may come in arrays nested to any depth (a map whose items are lists): each
 * node is put in, never an array's text (which is its nodes' hrefs, comma-separated). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function clear(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
  return node;
}

// Marks the top bar's link to `section` as the page shown (aria-current), and no other:
// the router marks a route's section; a view whose section depends on what it shows
// (a game: live while it runs, in the games' list once over) marks it itself.
export function markSection(section) {
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

// ------------------------------------------------------------------ formatting

export function playerName(player) {
  if (!player) return "?";
  if (player.name) return player.name;
  if (player.meta && player.meta.name) return player.meta.name;
  if (player.type === "human") return "human";
  return player.bot_url || "?";
}

/** Milliseconds as a clock: 1:05:03, 4:07, 9.8 (tenths under 10 s). */
export function formatClock(ms) {
  if (ms === null || ms === undefined) return "";
  const clamped = Math.max(0, ms);
  if (clamped < 10000) return (Math.floor(clamped / 100) / 10).toFixed(1);
  const seconds = Math.floor(clamped / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function formatWhen(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function sideName(side) {
  return side === "x" ? "X" : side === "o" ? "O" : "";
}

/** A record's label and text, in one order on every table of the page: wins, losses,
 * draws, as fastchess and cutechess print a match ("Score of A vs B: 7 - 2 - 1") and as
 * the tournament report's "Wins: 7, Losses: 2, Draws: 1" has it. */
export const RECORD_LABEL = "W / L / D";
export const RECORD_TITLE = "wins / losses / draws";
export function recordText(wins, losses, draws) {
  return `${wins} / ${losses} / ${draws}`;
}

/** A table cell of a seat: the side's letter and the player's name, kept on one line
 * together (a narrow column wraps the name beside its letter, never the name under it). */
export function seatCell(side, name) {
  return el("td", {}, el("span", { class: "side-name" }, el("span", { class: `side-${side}` }, sideName(side)), " ", el("span", {}, name)));
}

const CAUSES = {
  timeout: "on time",
  illegal_move: "by an illegal move",
  protocol_error: "by a protocol error",
  disconnect: "by disconnection",
  no_show: "by no-show",
  stall: "by stalling",
  resign: "by resignation",
  turn_limit: "at the turn limit",
  adjudication: "by adjudication",
};

/** A record's or summary's outcome in words: "X wins", "O wins on time", "draw at the
 * turn limit", "aborted". */
export function outcomeText(status, result) {
  if (status === "running" && !result) return "playing";
  if (!result) return status || "";
  if (result.cause === "aborted" || status === "aborted") return "aborted";
  // A forfeit always says so, even from a record without a cause (another tool's).
  const named = result.cause ? CAUSES[result.cause] || String(result.cause).replaceAll("_", " ") : "";
  const how = named || (result.reason === "forfeit" ? "by forfeit" : "");
  if (result.winner) return `${sideName(result.winner)} wins${how ? ` ${how}` : ""}`;
  return `draw${how ? ` ${how}` : ""}`;
}

/** A result's detail as the page words it: the server writes a side as the protocol
 * does, lower case ("o resigned", "x forfeits: x did not connect within 60 s"), and the
 * page names the sides X and O everywhere else ("X wins by resignation"). Only a side
 * that starts the detail or one of its clauses is a side: "x" elsewhere (in a URL, a
 * bot's own words) stays as it is. */
export function detailText(detail) {
  return String(detail).replace(/(^|: )([xo])(?= )/g, (_, before, side) => before + side.toUpperCase());
}

export function errorBox(error) {
  const text = error instanceof ApiError ? error.message : `unexpected error: ${error}`;
  return el("p", { class: "notice error", role: "alert" }, text);
}
