// The spectator socket, reconnecting by itself until the game's `end`: a drop before
// the end is retried after 0.5 s, doubling to 8 s, with jitter so a restarted server
// is not hit by every page at once. The server answers every connection with a full
// `setup`, so nothing is lost across a drop.

import { socketURL } from "./api.js";

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 8000;
const CLOSE_POLICY_VIOLATION = 1008;

export class GameSocket {
  /** Callbacks: onPacket(packet), onState(state, detail) with state one of
   * "connecting", "open", "lost", "reconnected", "gone" (no such game), "closed". */
  constructor(gameId, { onPacket, onState }) {
    // The compact stream: updates without the board (the model rebuilds it from the
    // setup and the moves), a few hundred bytes however long the game.
    this.url = socketURL("/spectate/" + encodeURIComponent(gameId) + "?board=0");
    this.onPacket = onPacket;
    this.onState = onState;
    this.delay = FIRST_DELAY_MS;
    this.ended = false;
    this.stopped = false;
    this.dropped = false; // a drop happened: the next setup means "reconnected"
    this.timer = null;
    this.socket = null;
  }

  start() {
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.socket) this.socket.close(1000);
  }

  connect() {
    if (this.stopped) return;
    this.onState(this.dropped ? "lost" : "connecting");
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      let packet;
      try {
        packet = JSON.parse(event.data);
      } catch {
        return; // not JSON: nothing a spectator can use
      }
      if (!packet || typeof packet.type !== "string") return;
      if (packet.type === "setup") {
        this.delay = FIRST_DELAY_MS;
        this.onState(this.dropped ? "reconnected" : "open");
        this.dropped = false;
      }
      if (packet.type === "end") this.ended = true;
      this.onPacket(packet);
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped || this.ended) {
        this.onState("closed");
        return;
      }
      // 1008 also drops a spectator who fell too far behind: that one reconnects.
      if (event.code === CLOSE_POLICY_VIOLATION && /no such game/.test(event.reason)) {
        this.stopped = true;
        this.onState("gone", event.reason || "no such game");
        return;
      }
      this.dropped = true;
      this.onState("lost");
      const jitter = 0.75 + Math.random() * 0.5;
      this.timer = setTimeout(() => this.connect(), this.delay * jitter);
      this.delay = Math.min(MAX_DELAY_MS, this.delay * 2);
    });
  }
}
