// The game page, /g/<id>: one game live or replayed. The spectator socket feeds a
// GameModel (gamemodel.js); this module lays out the page and redraws it from the
// model. The board, graph and socket are their own modules.

import { clear, detailText, el, formatClock, markSection, outcomeText, playerName } from "./api.js";
import { BoardView } from "./board.js";
import { EvalGraph } from "./evalgraph.js";
import { GameModel, evaluationText, evaluationValue } from "./gamemodel.js";
import { GameSocket } from "./gamesocket.js";
import { winningLine } from "./hexgeom.js";
import { infoText, stonesText } from "./notation.js";

const TICK_MS = 100;
const RECONNECTED_NOTICE_MS = 4000;

export function mount(main, { gameId }) {
  const page = new GamePage(main, gameId);
  page.start();
  return () => page.stop();
}

class GamePage {
  constructor(main, gameId) {
    this.main = main;
    this.model = new GameModel(gameId);
    this.rendered = false;
    this.turnNodes = [];
    this.build();
  }

  // ------------------------------------------------------------------ layout

  build() {
    const id = this.model.gameId;
    document.title = `Game ${id} · htttx arena`;
    this.title = el("h1", { class: "game-title" }, "Game ", el("code", {}, id));
    this.connection = el("p", { class: "connection notice", role: "status", "aria-live": "polite", hidden: true });

    this.board = new BoardView({ label: "Game board" });
    const fitButton = el("button", { type: "button", class: "fit", onclick: () => this.board.fit() }, "Fit board");
    const zoomOut = el("button", { type: "button", "aria-label": "Zoom out", title: "Zoom out (-)", onclick: () => this.board.zoom(0.8) }, "−");
    const zoomIn = el("button", { type: "button", "aria-label": "Zoom in", title: "Zoom in (+)", onclick: () => this.board.zoom(1.25) }, "+");
    this.first = el("button", { type: "button", class: "first", "aria-label": "First position", title: "First (Home)", onclick: () => this.goTo(0) }, "|◀");
    this.prev = el("button", { type: "button", class: "prev", "aria-label": "Previous move", title: "Previous (←)", onclick: () => this.goTo(this.model.ply - 1) }, "◀");
    this.next = el("button", { type: "button", class: "next", "aria-label": "Next move", title: "Next (→)", onclick: () => this.goTo(this.model.ply + 1) }, "▶");
    this.last = el("button", { type: "button", class: "last", "aria-label": "Last position", title: "Last (End)", onclick: () => this.goTo(this.model.moves.length) }, "▶|");
    this.slider = el("input", { type: "range", class: "ply-slider", min: 0, max: 0, value: 0, step: 1, "aria-label": "Move" });
    this.slider.addEventListener("input", () => this.goTo(Number(this.slider.value)));
    this.plyLabel = el("span", { class: "ply-label", "aria-live": "polite" });
    this.liveButton = el("button", { type: "button", class: "back-to-live primary", hidden: true, onclick: () => this.backToLive() }, "Back to live");

    const boardColumn = el("section", { class: "board-col", "aria-label": "Board" },
      this.board.root,
      el("div", { class: "board-tools" },
        el("div", { class: "replay" }, this.first, this.prev, this.slider, this.next, this.last),
        el("div", { class: "view-tools" }, this.plyLabel, this.liveButton, zoomOut, zoomIn, fitButton)));

    this.seatX = this.seat("x");
    this.seatO = this.seat("o");
    this.resultLine = el("p", { class: "result", hidden: true });
    this.seriesLine = el("p", { class: "series-line muted", hidden: true });
    this.tournamentLine = el("p", { class: "tournament-line muted", hidden: true });
    this.evalLabel = el("p", { class: "eval-label" });
    this.graph = new EvalGraph((ply) => this.goTo(ply));
    this.evalPanel = el("section", { class: "panel eval-panel", hidden: true, "aria-label": "Evaluation" },
      el("h2", {}, "Evaluation"), this.evalLabel, this.graph.root,
      el("p", { class: "legend muted" }, el("span", { class: "key mover" }, "movers"), " ", el("span", { class: "key analysis" }, "analysis")));
    this.moveList = el("ol", { class: "move-list", "aria-label": "Moves" });
    this.considerList = el("ol", { class: "consider-list" });
    this.considerPanel = el("div", { class: "considerations-panel", hidden: true },
      el("h3", {}, "Considered"), this.considerList);
    this.download = el("a", { class: "download", href: `/games/${encodeURIComponent(id)}/notation?download=1`, download: `${id}.htttx` }, "Download .htttx");
    this.command = el("code", { class: "command" });
    const copy = el("button", { type: "button", class: "copy", onclick: () => this.copyCommand(copy) }, "Copy");

    const side = el("aside", { class: "side-col" },
      el("section", { class: "panel players", "aria-label": "Players" }, this.seatX.root, this.seatO.root, this.resultLine, this.seriesLine, this.tournamentLine),
      this.evalPanel,
      el("section", { class: "panel moves-panel", "aria-label": "Moves" }, el("h2", {}, "Moves"), this.moveList, this.considerPanel),
      el("section", { class: "panel export", "aria-label": "Export" },
        this.download,
        el("p", { class: "open-in" }, el("span", { class: "muted" }, "Open in desktop client: "), this.command, " ", copy)));

    clear(this.main, el("div", { class: "game-page" }, this.title, this.connection, el("div", { class: "game-layout" }, boardColumn, side)));

    // Measured while the page is still empty: a cheap layout, not one of 1000 stones.
    this.board.measure();
    this.onKey = (event) => this.key(event);
    document.addEventListener("keydown", this.onKey);
  }

  seat(side) {
    const name = el("span", { class: "name" }, "…");
    const clock = el("span", { class: "clock" });
    const root = el("div", { class: `seat seat-${side}`, "data-side": side },
      el("span", { class: `stone-key ${side}`, "aria-hidden": "true" }),
      el("span", { class: `side side-${side}` }, side.toUpperCase()),
      name, clock);
    return { root, name, clock };
  }

  // ------------------------------------------------------------------ life

  start() {
    this.socket = new GameSocket(this.model.gameId, {
      onPacket: (packet) => this.packet(packet),
      onState: (state, detail) => this.connectionState(state, detail),
    });
    this.socket.start();
    this.ticker = setInterval(() => this.tick(), TICK_MS);
  }

  stop() {
    this.socket.stop();
    clearInterval(this.ticker);
    cancelAnimationFrame(this.frame);
    clearTimeout(this.noticeTimer);
    document.removeEventListener("keydown", this.onKey);
    this.board.destroy();
  }

  packet(packet) {
    const now = performance.now();
    const model = this.model;
    if (packet.type === "setup") {
      // At once, not in the next frame: the first render is what a visitor waits for.
      const before = model.moves.length;
      model.applySetup(packet, now);
      cancelAnimationFrame(this.frame);
      this.frame = null;
      this.pending = null;
      this.renderAll({ rebuildMoves: true, grew: model.moves.length > before });
    } else if (packet.type === "board_update") {
      if (!packet.move || !Array.isArray(packet.move.pieces)) return;
      model.applyBoardUpdate(packet, now);
      this.scheduleRender({ grew: true });
    } else if (packet.type === "end") {
      model.applyEnd(packet, now);
      this.scheduleRender({});
    } else if (packet.type === "analysis") {
      if (model.applyAnalysis(packet)) this.scheduleRender({});
    }
    // Any other type is an extension this page does not know: ignored.
  }

  /** Redraw once in the next frame however many packets arrive before it: fast bots
   * send hundreds of moves a second, a long game's board costs milliseconds to draw. */
  scheduleRender({ grew = false }) {
    this.pending = { grew: Boolean(this.pending && this.pending.grew) || grew };
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      const pending = this.pending;
      this.frame = null;
      this.pending = null;
      this.renderAll(pending);
    });
  }

  connectionState(state, detail) {
    clearTimeout(this.noticeTimer);
    const show = (text, kind) => {
      this.connection.textContent = text;
      this.connection.className = `connection notice ${kind}`;
      this.connection.hidden = false;
    };
    if (state === "lost") show("Connection lost — reconnecting…", "error");
    else if (state === "reconnected") {
      show("Reconnected", "ok");
      this.noticeTimer = setTimeout(() => { this.connection.hidden = true; }, RECONNECTED_NOTICE_MS);
    } else if (state === "gone") this.notFound(detail);
    else if (state !== "connecting" || this.rendered) this.connection.hidden = true;
  }

  notFound(detail) {
    this.stop();
    document.title = "Game not found · htttx arena";
    clear(this.main,
      el("h1", {}, "Game not found"),
      el("p", { class: "notice error", role: "alert" },
        "There is no game ", el("code", {}, this.model.gameId), ` on this server (${detail}). `,
        el("a", { href: "/web/games" }, "All games")));
    document.body.dataset.rendered = "1";
  }

  // ------------------------------------------------------------------ navigation

  goTo(ply) {
    this.model.goTo(ply);
    this.renderPosition();
  }

  backToLive() {
    this.model.backToLive();
    this.renderPosition();
  }

  key(event) {
    const target = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    const model = this.model;
    switch (event.key) {
      case "ArrowLeft": this.goTo(model.ply - 1); break;
      case "ArrowRight": this.goTo(model.ply + 1); break;
      case "Home": this.goTo(0); break;
      case "End": this.goTo(model.moves.length); break;
      case "+": case "=": this.board.zoom(1.25); break;
      case "-": case "_": this.board.zoom(0.8); break;
      default: return;
    }
    event.preventDefault();
  }

  async copyCommand(button) {
    const text = this.command.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      // No clipboard (an insecure origin): select the text for the user to copy.
      const range = document.createRange();
      range.selectNodeContents(this.command);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = "Selected";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  // ------------------------------------------------------------------ drawing

  renderAll({ rebuildMoves = false, grew = false }) {
    const model = this.model;
    const x = playerName(model.playerX);
    const o = playerName(model.playerO);
    this.seatX.name.textContent = x;
    this.seatO.name.textContent = o;
    this.seatX.name.title = x;
    this.seatO.name.title = o;
    document.title = `${x} vs ${o} · htttx arena`;
    markSection(model.finished ? "games" : "live");
    clear(this.title, el("span", { class: "side-x" }, x), el("span", { class: "vs muted" }, " vs "), el("span", { class: "side-o" }, o),
      el("span", { class: `badge${model.started ? " live" : ""}` }, this.badgeText()));
    if (model.over) {
      this.resultLine.textContent = this.resultText();
      this.resultLine.hidden = false;
    } else this.resultLine.hidden = true;
    this.renderSeries();
    this.renderTournament();
    const origin = location.origin;
    const id = model.gameId;
    this.command.textContent = model.finished ? `htttx-ui --open ${origin}/g/${id}` : `htttx-ui --server ${origin} --spectate ${id}`;
    this.renderMoves(rebuildMoves);
    this.renderPosition({ grew });
    this.tick();
  }

  /** A series' game: its number, the rule and the score before it, linking to the
   * series (a tournament, on the tournament page). */
  renderSeries() {
    const tags = this.model.tags || {};
    if (!tags.Series || !tags.SeriesScore) {
      this.seriesLine.hidden = true;
      return;
    }
    const game = tags.game ? `game ${tags.game}` : "a game";
    clear(this.seriesLine,
      el("a", { href: `/t/${encodeURIComponent(tags.Series)}` }, `Series (${tags.SeriesRule || "series"})`),
      `: ${game}, score before it `, el("span", { class: "series-score" }, tags.SeriesScore));
    this.seriesLine.hidden = false;
  }

  /** A tournament's game (tags tournament, game, round; a series' has its own line):
   * its number and round, linking to the tournament's page. */
  renderTournament() {
    const tags = this.model.tags || {};
    if (!tags.tournament || tags.Series) {
      this.tournamentLine.hidden = true;
      return;
    }
    const game = tags.game ? `game ${tags.game}` : "a game";
    const round = tags.round ? ` (round ${tags.round})` : "";
    clear(this.tournamentLine,
      el("a", { href: `/t/${encodeURIComponent(tags.tournament)}` }, "Tournament"), `: ${game}${round}`);
    this.tournamentLine.hidden = false;
  }

  resultText() {
    const result = this.model.result;
    // A game won by a line has no cause: say which line rather than "(win)".
    if (result.winner && result.reason === "win" && !result.cause) {
      return `${result.winner.toUpperCase()} wins (${this.model.winDistance} in a row)`;
    }
    return outcomeText("finished", result) + (result.detail ? ` — ${detailText(result.detail)}` : "");
  }

  /** The move list: rebuilt on a setup, appended to on a move. */
  renderMoves(rebuild) {
    const moves = this.model.moves;
    if (rebuild || this.turnNodes.length > moves.length) {
      this.turnNodes = [];
      this.moveList.replaceChildren();
    }
    const fragment = document.createDocumentFragment();
    for (let i = this.turnNodes.length; i < moves.length; i++) {
      const move = moves[i];
      const info = infoText(move);
      const node = el("li", { class: `turn turn-${move.side}`, "data-ply": i + 1, tabindex: "-1" },
        el("span", { class: "num" }, `${i + 1}.`), " ",
        el("span", { class: `stones side-${move.side}` }, stonesText(move)),
        info ? el("span", { class: "info" }, " " + info) : null, ";");
      node.addEventListener("click", () => this.goTo(i + 1));
      this.turnNodes.push(node);
      fragment.append(node);
    }
    this.moveList.append(fragment);
  }

  renderPosition({ grew = false } = {}) {
    const model = this.model;
    const ply = model.ply;
    const total = model.moves.length;
    const stones = model.stonesAt(ply);
    const move = model.moveAt(ply);
    const last = move ? move.pieces : [];
    let line = null;
    if (ply === total && model.result && model.result.winner && model.result.reason === "win") {
      line = winningLine(stones, last, model.winDistance);
    }
    this.board.render({ stones, last, line, considerations: move && move.considerations ? move.considerations : [] });
    if (!this.rendered) {
      this.board.fit();
    } else if (grew && model.following && !this.board.userMoved && !this.board.allInView()) {
      this.board.fit(); // a live game grew out of view and the user has not panned
    }
    this.board.svg.dataset.ply = String(ply);
    this.board.svg.setAttribute("aria-label", `Game board after move ${ply} of ${total}, ${stones.length} stones`);

    this.slider.max = String(total);
    this.slider.value = String(ply);
    this.first.disabled = this.prev.disabled = ply === 0;
    this.next.disabled = this.last.disabled = ply === total;
    this.plyLabel.textContent = `Move ${ply} / ${total}`;
    this.liveButton.hidden = !(model.live && !model.following);

    const current = this.moveList.querySelector(".turn.current");
    if (current) {
      current.classList.remove("current");
      current.removeAttribute("aria-current");
    }
    const node = this.turnNodes[ply - 1];
    if (node) {
      node.classList.add("current");
      node.setAttribute("aria-current", "step");
      // Keep the current move in view inside the list, without scrolling the page; in
      // the next frame, when the layout is done anyway, not forced in the middle of drawing.
      cancelAnimationFrame(this.scrollFrame);
      this.scrollFrame = requestAnimationFrame(() => {
        const list = this.moveList;
        if (node.offsetTop < list.scrollTop || node.offsetTop + node.offsetHeight > list.scrollTop + list.clientHeight) {
          list.scrollTop = node.offsetTop - list.clientHeight / 2;
        }
      });
    }
    this.renderConsiderations(move);
    this.renderEval();
    this.renderSeats();

    if (!this.rendered) {
      this.rendered = true;
      document.body.dataset.rendered = "1";
      performance.mark("board-rendered");
    }
  }

  renderConsiderations(move) {
    const options = move && Array.isArray(move.considerations) ? move.considerations : [];
    this.considerPanel.hidden = options.length === 0;
    this.considerList.replaceChildren(...options.slice(0, 9).map((option, index) => {
      const played = move.pieces.length === option.pieces.length &&
        option.pieces.every((p) => move.pieces.some((m) => m.q === p.q && m.r === p.r));
      const text = evaluationText(option.evaluation);
      return el("li", { class: played ? "played" : "", "data-rank": index + 1 },
        option.pieces.map((p) => `[${p.q},${p.r}]`).join(" "),
        text ? el("span", { class: "muted" }, ` ${text}`) : null,
        played ? el("span", { class: "badge" }, "played") : null);
    }));
  }

  renderEval() {
    const model = this.model;
    if (!model.hasEvaluations()) {
      this.evalPanel.hidden = true;
      return;
    }
    this.evalPanel.hidden = false;
    const mover = [];
    model.moves.forEach((move, index) => {
      const value = evaluationValue(move.evaluation);
      if (value !== null) mover.push([index + 1, value]);
    });
    const analysis = [...model.analysis.entries()]
      .map(([ply, a]) => [ply, evaluationValue(a.evaluation)])
      .filter(([ply, value]) => value !== null && ply <= model.moves.length)
      .sort((a, b) => a[0] - b[0]);
    this.graph.render(model.moves.length, [{ name: "mover", points: mover }, { name: "analysis", points: analysis }], model.ply);
    const shown = model.evaluationAt(model.ply);
    this.evalLabel.textContent = shown ? `${shown.by}: ${evaluationText(shown.evaluation)}` : "No evaluation for this position";
  }

  /** The game's state in a word: waiting (for its seats), live, aborted or finished. */
  badgeText() {
    const model = this.model;
    if (model.live) return model.started ? "live" : "waiting";
    // An aborted game was not finished by its players: as /games and the list say.
    if (model.over && model.result.cause === "aborted") return "aborted";
    return model.finished ? "finished" : model.status || "";
  }

  renderSeats() {
    const model = this.model;
    for (const [side, seat] of [["x", this.seatX], ["o", this.seatO]]) {
      const toMove = model.started && model.toMove === side;
      seat.root.classList.toggle("to-move", toMove);
      if (toMove) seat.root.setAttribute("aria-current", "true");
      else seat.root.removeAttribute("aria-current");
      seat.root.classList.toggle("winner", Boolean(model.over && model.result.winner === side));
    }
  }

  /** Clocks tick locally for the side to move between updates. */
  tick() {
    const now = performance.now();
    for (const [side, seat] of [["x", this.seatX], ["o", this.seatO]]) {
      const ms = this.model.clockNow(side, now);
      const text = ms === null ? "" : formatClock(ms);
      if (seat.clock.textContent !== text) seat.clock.textContent = text;
      seat.clock.classList.toggle("low", ms !== null && ms < 10000 && this.model.live);
    }
  }
}
