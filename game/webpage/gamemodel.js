// The game page's state, apart from any DOM or socket (sans-I/O): the history, the ply
// being viewed, clocks, result and analysis. Packets and records go in; views read it.
// `ply` counts moves played: 0 is the start position, moves.length the newest.

const KNOWN_CAUSES = new Set([
  "timeout", "illegal_move", "protocol_error", "disconnect", "no_show", "stall",
  "resign", "aborted", "turn_limit", "adjudication",
]);

/** An evaluation as a number in [-1, 1]: heuristic clamped, win_in as ±1; null if none. */
export function evaluationValue(evaluation) {
  if (!evaluation) return null;
  if (typeof evaluation.win_in === "number") return evaluation.win_in > 0 ? 1 : evaluation.win_in < 0 ? -1 : 0;
  if (typeof evaluation.heuristic === "number" && Number.isFinite(evaluation.heuristic)) {
    return Math.max(-1, Math.min(1, evaluation.heuristic));
  }
  return null;
}

/** An evaluation in words: "+0.35", "−0.10", "X wins in 3", or "". */
export function evaluationText(evaluation) {
  if (!evaluation) return "";
  if (typeof evaluation.win_in === "number") {
    const side = evaluation.win_in > 0 ? "X" : "O";
    return `${side} wins in ${Math.abs(evaluation.win_in)}`;
  }
  if (typeof evaluation.heuristic === "number" && Number.isFinite(evaluation.heuristic)) {
    const h = evaluation.heuristic;
    return `${h >= 0 ? "+" : "−"}${Math.abs(h).toFixed(2)}`;
  }
  return "";
}

/** The result of an `end` packet in a record's shape ({winner, reason, cause, detail}). */
export function resultFromEnd(packet) {
  let cause = null;
  let detail = null;
  if (typeof packet.detail === "string" && packet.detail) {
    const at = packet.detail.indexOf(": ");
    const named = at < 0 ? packet.detail : packet.detail.slice(0, at);
    if (KNOWN_CAUSES.has(named)) {
      cause = named;
      detail = at < 0 ? null : packet.detail.slice(at + 2);
    } else {
      detail = packet.detail;
    }
  }
  return { winner: packet.winner ?? null, reason: packet.reason, cause, detail };
}

export class GameModel {
  constructor(gameId) {
    this.gameId = gameId;
    this.reset();
  }

  reset() {
    this.setup = [{ q: 0, r: 0, p: "x" }];
    this.moves = [];
    this.playerX = null;
    this.playerO = null;
    this.match = {};
    this.status = null;
    this.toMove = null;
    this.result = null;
    // The record's tags (a series' Series, SeriesRule, SeriesScore): docs/extensions.md.
    this.tags = {};
    // Clocks as last reported, and when (performance.now()), to tick them locally.
    this.clocks = { x: null, o: null, at: 0 };
    this.analysis = new Map(); // ply -> {evaluation, bot}
    this.ply = 0;
    this.following = true; // the view follows the newest move until the user steps back
  }

  get winDistance() {
    return this.match && this.match.win_distance ? this.match.win_distance : 6;
  }

  get live() {
    return !this.over && (this.status === "in_progress" || this.status === "waiting");
  }

  /** Whether the players are playing: both came and the game has begun. A game waiting
   * for its seats (`waiting`) is live but not started: no clock runs yet. */
  get started() {
    return !this.over && this.status === "in_progress";
  }

  get over() {
    return this.result !== null;
  }

  /** Whether the game is over as far as the page can tell: its `end` came, or the
   * status of its setup is already a result (`x_wins`, `o_wins`, `draw`; a finished
   * game's setup comes a moment before its `end`). */
  get finished() {
    return this.over || (this.status !== null && !this.live);
  }

  /** A spectator's `setup`: the whole game so far. A reconnect's setup replaces the
   * history instead of adding to it; the viewed ply is kept unless following. */
  applySetup(packet, now) {
    const keepPly = this.following ? null : this.ply;
    const analysis = this.analysis;
    this.reset();
    this.analysis = analysis;
    this.moves = Array.isArray(packet.moves) ? packet.moves.slice() : [];
    this.setup = this.setupBefore(packet.board, this.moves);
    this.playerX = packet.player_x || null;
    this.playerO = packet.player_o || null;
    this.match = packet.match || {};
    this.status = packet.status || null;
    this.toMove = packet.to_move || null;
    this.tags = packet.tags && typeof packet.tags === "object" ? packet.tags : {};
    this.setClocks(packet, now);
    if (keepPly === null) this.ply = this.moves.length;
    else {
      this.following = false;
      this.ply = Math.min(keepPly, this.moves.length);
    }
  }

  /** The position before the history: the setup board minus every stone the moves
   * placed (a game from an opening or a custom setup keeps its own start). */
  setupBefore(board, moves) {
    if (!board || !Array.isArray(board.cells)) return [{ q: 0, r: 0, p: "x" }];
    const placed = new Set();
    for (const move of moves) for (const p of move.pieces) placed.add(`${p.q},${p.r}`);
    return board.cells.filter((c) => !placed.has(`${c.q},${c.r}`)).map((c) => ({ q: c.q, r: c.r, p: c.p }));
  }

  /** A stored GameRecord (GET /games/<id>). */
  applyRecord(record, now) {
    this.reset();
    this.setup = (record.setup || [{ q: 0, r: 0, p: "x" }]).map((c) => ({ q: c.q, r: c.r, p: c.p }));
    this.moves = record.moves || [];
    this.playerX = record.player_x || null;
    this.playerO = record.player_o || null;
    this.match = record.match || {};
    this.tags = record.tags || {};
    this.result = record.result || null;
    this.status = this.result ? "finished" : "in_progress";
    this.ply = this.moves.length;
    this.clocks = { x: null, o: null, at: now };
    for (let i = this.moves.length - 1; i >= 0; i--) {
      const m = this.moves[i];
      if (m.clock_ms === null || m.clock_ms === undefined) continue;
      if (this.clocks[m.side] === null) this.clocks[m.side] = m.clock_ms;
    }
  }

  /** One `board_update`: the move is appended (once: a repeated update is ignored). */
  applyBoardUpdate(packet, now) {
    const move = {
      side: packet.move.side,
      pieces: packet.move.pieces,
      evaluation: packet.evaluation || null,
      considerations: packet.considerations || [],
    };
    if (packet.clock_x_ms !== undefined || packet.clock_o_ms !== undefined) {
      const mine = packet.move.side === "x" ? packet.clock_x_ms : packet.clock_o_ms;
      if (mine !== null && mine !== undefined) move.clock_ms = mine;
    }
    this.moves.push(move);
    this.status = packet.status || this.status;
    this.toMove = packet.to_move || null;
    this.tags = packet.tags && typeof packet.tags === "object" ? packet.tags : {};
    this.setClocks(packet, now);
    if (this.following) this.ply = this.moves.length;
  }

  applyEnd(packet, now) {
    this.result = resultFromEnd(packet);
    this.status = "finished";
    this.toMove = null;
    this.clocks = { ...this.clocks, at: now };
  }

  applyAnalysis(packet) {
    if (!Number.isInteger(packet.ply) || packet.ply < 0 || !packet.evaluation) return false;
    this.analysis.set(packet.ply, { evaluation: packet.evaluation, bot: typeof packet.bot === "string" ? packet.bot : "" });
    return true;
  }

  setClocks(packet, now) {
    this.clocks = {
      x: packet.clock_x_ms ?? null,
      o: packet.clock_o_ms ?? null,
      at: now,
    };
  }

  /** A side's clock now: the one to move ticks down from the last report, once the
   * game has started (the server starts no clock while it waits for the seats). */
  clockNow(side, now) {
    const reported = this.clocks[side];
    if (reported === null || reported === undefined) return null;
    if (this.started && this.toMove === side) {
      return Math.max(0, reported - (now - this.clocks.at));
    }
    return reported;
  }

  /** Go to a ply; stepping back from the newest stops following. */
  goTo(ply) {
    const clamped = Math.max(0, Math.min(this.moves.length, Math.round(ply)));
    this.ply = clamped;
    this.following = clamped === this.moves.length;
    return clamped;
  }

  backToLive() {
    this.following = true;
    this.ply = this.moves.length;
  }

  /** The stones on the board after `ply` moves, each {q, r, p, ply}. */
  stonesAt(ply = this.ply) {
    const stones = this.setup.map((c) => ({ q: c.q, r: c.r, p: c.p, ply: 0 }));
    for (let i = 0; i < ply && i < this.moves.length; i++) {
      const move = this.moves[i];
      for (const piece of move.pieces) stones.push({ q: piece.q, r: piece.r, p: move.side, ply: i + 1 });
    }
    return stones;
  }

  /** The move that made the position at `ply` (null at the start). */
  moveAt(ply = this.ply) {
    return ply > 0 ? this.moves[ply - 1] || null : null;
  }

  /** The evaluation shown for a ply: an analysis of that position, else the mover's. */
  evaluationAt(ply = this.ply) {
    const analysis = this.analysis.get(ply);
    if (analysis) return { evaluation: analysis.evaluation, by: analysis.bot || "analysis" };
    const move = this.moveAt(ply);
    if (move && move.evaluation && evaluationValue(move.evaluation) !== null) {
      const player = move.side === "x" ? this.playerX : this.playerO;
      return { evaluation: move.evaluation, by: player && player.name ? player.name : move.side.toUpperCase() };
    }
    return null;
  }

  hasEvaluations() {
    return this.analysis.size > 0 || this.moves.some((m) => evaluationValue(m.evaluation) !== null);
  }
}
