// One open challenge (/c/<id>): who opened it, its time control and state; the
// command that accepts and plays it in the desktop client; and a form that accepts
// it here (the answer is the seat: its game page, and the token for a client).
// A person token the server hands out is kept in this browser, per name.

import { el, clear, getJSON, postJSON, formatWhen, sideName, errorBox } from "./api.js";

const POLL_MS = 3000;
const TOKEN_PREFIX = "htttx-player-token:";

function savedToken(name) {
  return localStorage.getItem(TOKEN_PREFIX + name.trim().toLowerCase()) || "";
}

function saveToken(name, token) {
  if (token) localStorage.setItem(TOKEN_PREFIX + name.trim().toLowerCase(), token);
}

function sideText(side) {
  return side === "random" ? "a side drawn at random" : `${sideName(side)}`;
}

function details(view) {
  const rows = [
    ["Opened by", `${view.creator} (${view.creator_rating})`],
    ["Time control", view.time_control],
    ["They play", sideText(view.side)],
    ["Status", view.status],
    [view.status === "open" ? "Open until" : "Opened", formatWhen(view.status === "open" ? view.expires_at : view.created_at)],
  ];
  if (view.accepted_by) rows.push(["Accepted by", view.accepted_by]);
  return el("dl", { class: "facts", id: "challenge-facts" },
    rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
}

// The server's no-show limit, as the seat's answer gives it.
function connectWithin(seat) {
  const seconds = seat.connect_within_s;
  if (typeof seconds !== "number") return " at once";
  return ` within ${seconds} s (or lose by no-show)`;
}

function seatBox(seat) {
  const game = `/g/${encodeURIComponent(seat.game_id)}`;
  return el("div", { class: "notice ok", id: "challenge-seat" },
    el("p", {}, `You play ${sideName(seat.side)} against ${seat.opponent.name} (${seat.opponent.rating}), ${seat.time_control}, rated. `,
      el("a", { href: game }, "Watch the game")),
    el("p", {}, "Your seat: connect a client to ", el("code", {}, seat.ws_url), connectWithin(seat), "."),
  );
}

function acceptForm(challengeId, onSeat) {
  const name = el("input", { name: "name", type: "text", maxlength: "64", required: true, autocomplete: "nickname" });
  const token = el("input", { name: "player_token", type: "password", autocomplete: "off", placeholder: "only for a name you have used" });
  name.addEventListener("change", () => { if (!token.value) token.value = savedToken(name.value); });
  const result = el("div", { role: "status", "aria-live": "polite" });
  const submit = el("button", { type: "submit", class: "primary" }, "Accept the challenge");
  const form = el("form", { class: "stack panel", id: "accept-form" },
    el("label", {}, "Your name", name),
    el("label", {}, "Your player token", token),
    submit, result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim() };
    if (token.value.trim()) body.player_token = token.value.trim();
    submit.disabled = true;
    try {
      const seat = await postJSON(`/challenges/${encodeURIComponent(challengeId)}/accept`, body);
      saveToken(body.name, seat.player_token);
      onSeat(seat);
    } catch (error) {
      clear(result, errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export async function mount(main, { challengeId }) {
  document.title = "Challenge · htttx arena";
  const facts = el("div");
  const action = el("div");
  const message = el("div", { role: "status", "aria-live": "polite" });
  const command = `htttx-ui --open ${location.origin}/c/${challengeId}`;
  clear(main,
    el("h1", {}, "Challenge"),
    facts,
    el("section", {}, el("h2", {}, "Play it in the desktop client"),
      el("pre", { class: "command", id: "challenge-command" }, command)),
    action,
    message,
  );
  let timer = null;
  let seated = false;
  function showSeat(seat) {
    seated = true;
    clearTimeout(timer);
    clear(action, el("h2", {}, "Your seat"), seatBox(seat));
    load(); // the facts too: the challenge is accepted now, no longer open
  }
  async function load() {
    try {
      const view = await getJSON(`/challenges/${encodeURIComponent(challengeId)}`);
      document.title = `Challenge by ${view.creator} · htttx arena`;
      clear(facts, details(view));
      clear(message);
      if (seated) return;
      if (view.status === "open") {
        if (!action.firstChild) clear(action, el("h2", {}, "Or accept it here"), acceptForm(challengeId, showSeat));
        timer = setTimeout(load, POLL_MS);
      } else {
        const game = view.game_id ? el("a", { href: `/g/${encodeURIComponent(view.game_id)}` }, "Watch its game") : null;
        clear(action, el("p", { class: "notice" }, `This challenge is ${view.status}. `, game));
      }
    } catch (error) {
      clear(message, errorBox(error));
      if (!(error.status === 404)) timer = setTimeout(load, POLL_MS);
    }
  }
  await load();
  return () => clearTimeout(timer);
}
