// The move part of HTTTX notation v2, exactly as the server's game/notation_writer.py
// writes it (a test compares this with GET /games/<id>/notation): one turn a line,
// "N. [q,r] [q,r] {@ms:%n};", "[/]" after a lone winning stone.

/** 100·heuristic clamped to [-1, 1], rounded half away from zero (the writer's rule). */
export function openEvaluation(heuristic) {
  const scaled = 100 * Math.min(1, Math.max(-1, heuristic));
  const magnitude = Math.floor(Math.abs(scaled) + 0.5);
  return scaled >= 0 ? magnitude : -magnitude;
}

/** The info block of a move, "{@4500:%-1}", or "" when it has none. */
export function infoText(move) {
  const parts = [];
  if (move.clock_ms !== null && move.clock_ms !== undefined) parts.push(`@${move.clock_ms}`);
  const evaluation = move.evaluation;
  if (evaluation) {
    if (evaluation.win_in !== null && evaluation.win_in !== undefined) parts.push(`#${evaluation.win_in}`);
    else if (typeof evaluation.heuristic === "number" && !Number.isNaN(evaluation.heuristic)) {
      parts.push(`%${openEvaluation(evaluation.heuristic)}`);
    }
  }
  return parts.length ? `{${parts.join(":")}}` : "";
}

/** The stones of a move as written: "[1,0] [2,0]" or "[5,0] [/]". */
export function stonesText(move) {
  const stones = move.pieces.map((p) => `[${p.q},${p.r}]`);
  if (stones.length === 1) stones.push("[/]");
  return stones.join(" ");
}

/** One turn line, numbered from 1. */
export function turnText(number, move) {
  const info = infoText(move);
  return `${number}. ${stonesText(move)}${info ? " " + info : ""};`;
}
