// The lobby in the reference client (docs/lobby.md): tables that wait for players (create
// one, its waiting room with an invite link, start now, cancel), the list of public tables
// with a Join button each, quick match (queue, long-poll, leave), invite links
// (`/play?match=<id>&invite=<code>`) and rematches. Every call is made with the signed-in
// guest's own player token, which acts for its seat; the waiting room follows the match's
// event stream (stream tickets, as the play view) and opens the play view once it starts.

import { readTimeControl } from "./clock.js";

const HOSTED_KEY = "skyline:hosted:";
const LOBBY_EVERY_MS = 10_000;
const WAITING_POLL_MS = 10_000;
const QUEUE_WAIT_S = 30;

export class Lobby {
  /**
   * hooks: api, player, el, showMessage, clearMessage, problemText, games() (the catalogue),
   * gameName(id), openPlay(state) (an active or finished match the player sits in, or may
   * watch), showPhase(name) ("setup" | "waiting").
   */
  constructor(hooks) {
    Object.assign(this, hooks);
    this.$ = (id) => document.getElementById(id);
    this.waiting = null; // {matchId, state, follower: AbortController, poll}
    this.queue = null; // {ticket, controller, game, players}
    this.invite = null; // {code, matchId, info}
    this.joinAfterSignIn = false;
    this.lobbyTimer = null;
  }

  // ---------------------------------------------------------------- set up
  setup() {
    const $ = this.$;
    $("table-form").addEventListener("submit", (event) => this.createTable(event));
    $("table-game").addEventListener("change", () => this.tableGameChanged());
    $("table-players").addEventListener("input", () => this.renderTableSeats());
    $("quick-form").addEventListener("submit", (event) => this.findMatch(event));
    $("quick-game").addEventListener("change", () => this.quickGameChanged());
    $("quick-leave").addEventListener("click", () => this.leaveQueue());
    $("lobby-refresh").addEventListener("click", () => this.refreshList());
    $("lobby-game").addEventListener("change", () => this.refreshList());
    $("invite-join").addEventListener("click", () => this.joinInvite());
    $("copy-invite").addEventListener("click", () => this.copyInvite());
    $("start-now").addEventListener("click", () => this.tableAction("start"));
    $("cancel-table").addEventListener("click", () => this.tableAction("cancel"));
    $("leave-table").addEventListener("click", () => this.tableAction("leave"));
    $("take-seat").addEventListener("click", () => this.takeSeat());
    $("waiting-back").addEventListener("click", () => this.back());
  }

  /** The catalogue arrived: fill the games of the three forms. */
  gamesLoaded() {
    const games = this.games();
    const options = () => games.map((g) => this.el("option", { value: g.id, text: g.title }));
    this.$("table-game").replaceChildren(...options());
    this.$("quick-game").replaceChildren(...options());
    this.$("lobby-game").replaceChildren(this.el("option", { value: "", text: "All games" }), ...options());
    this.tableGameChanged();
    this.quickGameChanged();
  }

  gameOf(select) {
    const games = this.games();
    return games.find((g) => g.id === this.$(select).value) || games[0];
  }

  /** Multiplayer only: at least 2 seats (a table waits for someone else). */
  clampPlayers(input, game) {
    const box = this.$(input);
    const min = Math.max(2, game.minPlayers);
    box.min = String(min);
    box.max = String(game.maxPlayers);
    const value = Number(box.value) || min;
    box.value = String(Math.min(Math.max(value, min), game.maxPlayers));
  }

  tableGameChanged() {
    const game = this.gameOf("table-game");
    if (!game) return;
    this.clampPlayers("table-players", game);
    this.renderTableSeats();
  }

  quickGameChanged() {
    const game = this.gameOf("quick-game");
    if (game) this.clampPlayers("quick-players", game);
  }

  renderTableSeats() {
    const game = this.gameOf("table-game");
    if (!game) return;
    const count = Math.min(Math.max(Number(this.$("table-players").value) || 2, Math.max(2, game.minPlayers)), game.maxPlayers);
    const list = this.$("table-seat-list");
    const previous = new Map([...list.querySelectorAll("select")].map((s) => [s.dataset.seat, s.value]));
    list.replaceChildren(this.el("p", { class: "field inline" }, this.el("span", { text: "Seat 0: you" })));
    for (let seat = 1; seat < count; seat += 1) {
      const id = `table-seat-${seat}`;
      const select = this.el("select", { id, name: id, "data-seat": seat },
        this.el("option", { value: "open", text: "Open: for a player" }),
        this.el("option", { value: "greedy", text: "Greedy bot" }),
        this.el("option", { value: "search", text: "Search bot (stronger, slower)" }),
        this.el("option", { value: "random", text: "Random bot" }));
      select.value = previous.get(String(seat)) || "open";
      list.append(this.el("div", { class: "field inline" }, this.el("label", { for: id, text: `Seat ${seat}` }), select));
    }
  }

  // ---------------------------------------------------------------- signed in or out
  token() {
    return this.player.me ? this.player.me.token : null;
  }

  /** The player signed in or out (player.js onChange). */
  playerChanged() {
    const me = this.player.me;
    this.$("lobby-body").hidden = !me;
    this.$("lobby-signed-out").hidden = Boolean(me);
    clearInterval(this.lobbyTimer);
    this.lobbyTimer = null;
    if (!me) {
      if (this.waiting) this.back();
      this.stopQueue();
      this.$("quick-status").textContent = "";
      this.$("lobby-list").replaceChildren();
      this.renderInvite();
      return;
    }
    this.refreshList();
    this.lobbyTimer = setInterval(() => {
      if (!document.hidden && !this.$("setup").hidden) this.refreshList();
    }, LOBBY_EVERY_MS);
    this.renderInvite();
    if (this.invite && this.joinAfterSignIn) {
      this.joinAfterSignIn = false;
      this.joinInvite();
    }
  }

  /** A player-feed event (player.js): lists follow, the waiting room too. */
  feedEvent(kind, data) {
    if (["player_joined", "player_left", "match_started", "match_cancelled", "rematch_offered"].includes(kind)) {
      this.refreshListSoon();
    }
    if (this.waiting && data && data.matchId === this.waiting.matchId) this.refreshWaiting();
  }

  hosted() {
    if (!this.player.me) return [];
    try {
      return JSON.parse(localStorage.getItem(HOSTED_KEY + this.player.me.id) || "[]");
    } catch {
      return this.memoryHosted || [];
    }
  }

  markHosted(matchId) {
    const ids = [...this.hosted().filter((id) => id !== matchId), matchId].slice(-50);
    this.memoryHosted = ids;
    try {
      localStorage.setItem(HOSTED_KEY + this.player.me.id, JSON.stringify(ids));
    } catch {
      /* storage disabled: kept for this page */
    }
  }

  // ---------------------------------------------------------------- create a table
  async createTable(event) {
    event.preventDefault();
    this.clearMessage();
    const game = this.gameOf("table-game");
    const seats = [{ player: "me" }];
    for (const select of this.$("table-seat-list").querySelectorAll("select")) {
      seats.push(select.value === "open" ? { open: true } : { bot: select.value });
    }
    if (!seats.some((s) => s.open)) {
      this.showMessage("A table needs at least one open seat: make a seat open (or start a match against bots below).");
      return;
    }
    const body = { game: game.id, seats, visibility: this.$("table-visibility").value };
    const name = this.$("table-name").value.trim();
    if (name) body.name = name;
    Object.assign(body, readTimeControl("table-tc")); // the clock starts with the match
    const button = this.$("table-create");
    button.disabled = true;
    try {
      const created = await this.api.createMatch(body, this.token());
      this.markHosted(created.matchId);
      await this.openTable(created.matchId);
    } catch (error) {
      this.showMessage(this.problemText(error));
    } finally {
      button.disabled = false;
    }
  }

  // ---------------------------------------------------------------- the lobby list
  refreshListSoon() {
    if (this.listPending) return;
    this.listPending = setTimeout(() => {
      this.listPending = null;
      this.refreshList();
    }, 150);
  }

  async refreshList() {
    const token = this.token();
    if (!token) return;
    let page;
    try {
      page = await this.api.lobby(token, { game: this.$("lobby-game").value || null, limit: 20 });
    } catch (error) {
      this.$("lobby-empty").hidden = false;
      this.$("lobby-empty").textContent = `The lobby could not be read: ${this.problemText(error)}`;
      return;
    }
    const items = page.items.map((item) => {
      const title = item.name || `${this.gameName(item.game)} table`;
      const who = item.seats.map((s) => (s.open ? "open" : s.bot ? `${s.bot} bot` : s.name || "a player"));
      const open = item.openSeats.length;
      const age = item.ageSeconds < 90 ? `${item.ageSeconds} s ago` : `${Math.round(item.ageSeconds / 60)} min ago`;
      const text = `${title} · ${this.gameName(item.game)} · ${item.players} players · ${open} open seat${open === 1 ? "" : "s"} · ${who.join(", ")} · created ${age}`;
      const join = this.el("button", {
        type: "button", class: "join-table", "data-match": item.matchId, text: "Join",
        "aria-label": `Join ${title} (${this.gameName(item.game)}, ${open} open seat${open === 1 ? "" : "s"})`,
        onclick: () => this.joinTable(item.matchId, {}),
      });
      return this.el("li", { "data-match": item.matchId }, this.el("span", { text }), " ", join);
    });
    this.$("lobby-list").replaceChildren(...items);
    this.$("lobby-empty").textContent = "No public table is waiting for players right now.";
    this.$("lobby-empty").hidden = items.length > 0;
  }

  /** Take a seat (body {} | {seat} | {invite}) and go where the match is. */
  async joinTable(matchId, body) {
    this.clearMessage();
    let state;
    try {
      state = await this.api.join(matchId, this.token(), body);
    } catch (error) {
      if (error.code === "already_seated") {
        await this.openTable(matchId);
        return true;
      }
      this.showMessage(this.problemText(error));
      this.refreshListSoon();
      return false;
    }
    this.player.dropOffer(matchId);
    this.player.listSoon();
    await this.goTo(state);
    return true;
  }

  /** A rematch offered in "My matches": take the seat kept for the player. */
  async joinOffer(offer) {
    const ok = await this.joinTable(offer.matchId, { seat: offer.seat });
    if (!ok) {
      this.player.dropOffer(offer.matchId);
      this.player.listSoon();
    }
  }

  // ---------------------------------------------------------------- invite links
  /** Opened with ?invite=<code>(&match=<id>): say what it invites to, then join with it. */
  async showInvite(code, matchId) {
    this.invite = { code, matchId, info: null };
    this.$("invite-panel").hidden = false;
    this.$("invite-text").textContent = "Reading the invitation…";
    try {
      this.invite.info = await this.api.invitation(code);
    } catch (error) {
      this.invite.failed = true;
      this.$("invite-text").textContent = "This invitation cannot be used.";
      this.showMessage(this.problemText(error));
      this.renderInvite();
      return;
    }
    this.renderInvite();
    if (!this.player.me) {
      this.joinAfterSignIn = true;
      this.$("player-name").focus();
    }
  }

  renderInvite() {
    const invite = this.invite;
    if (!invite) return;
    const button = this.$("invite-join");
    const hint = this.$("invite-hint");
    if (invite.failed || !invite.info) {
      button.hidden = true;
      hint.textContent = "";
      return;
    }
    const info = invite.info;
    const who = info.seats.map((s) => `seat ${s.seat}: ${s.open ? "open" : s.bot ? `${s.bot} bot` : s.name || "a player"}`);
    const title = info.name ? `“${info.name}”, ` : "";
    this.$("invite-text").textContent = `${title}${this.gameName(info.game)} for ${info.players} players (${who.join("; ")}).`;
    if (info.kind !== "seat") {
      button.hidden = true;
      hint.textContent = "This invitation is not to a seat.";
    } else if (info.status !== "waiting") {
      button.hidden = true;
      hint.textContent = info.status === "cancelled" ? "This table was cancelled." : "This match has already started.";
    } else if (!this.player.me) {
      button.hidden = false;
      button.disabled = true;
      hint.textContent = "Choose a name and press “Play as a guest” above: you join the table right after.";
    } else {
      button.hidden = false;
      button.disabled = false;
      hint.textContent = `Playing as ${this.player.me.name}.`;
    }
  }

  async joinInvite() {
    const invite = this.invite;
    if (!invite || !invite.info || !this.player.me) return;
    const button = this.$("invite-join");
    button.disabled = true;
    const ok = await this.joinTable(invite.info.matchId, { invite: invite.code });
    if (ok) {
      this.invite = null;
      this.$("invite-panel").hidden = true;
    } else {
      button.disabled = false;
    }
  }

  async copyInvite() {
    const waiting = this.waiting;
    if (!waiting || !waiting.state) return;
    this.clearMessage();
    const uses = Math.max(1, waiting.state.openSeats.length);
    let made;
    try {
      made = await this.api.invite(waiting.matchId, this.token(), { uses });
    } catch (error) {
      this.showMessage(this.problemText(error));
      return;
    }
    const base = `${location.origin}${location.pathname.replace(/\/$/, "")}`;
    const link = `${base}?match=${encodeURIComponent(waiting.matchId)}&invite=${encodeURIComponent(made.code)}`;
    const field = this.$("invite-link");
    field.value = link;
    this.$("invite-box").hidden = false;
    const note = this.$("invite-copied");
    note.dataset.code = made.code;
    try {
      await navigator.clipboard.writeText(link);
      note.textContent = `Invite link copied (good for ${uses} player${uses === 1 ? "" : "s"}).`;
    } catch {
      field.focus();
      field.select();
      note.textContent = `Copy the invite link from the field (good for ${uses} player${uses === 1 ? "" : "s"}).`;
    }
  }

  // ---------------------------------------------------------------- the waiting room
  /** Open a match the player may read: the waiting room while it waits, else play. */
  async openTable(matchId) {
    let state;
    try {
      state = await this.api.state(matchId, this.token());
    } catch (error) {
      this.showMessage(this.problemText(error));
      return;
    }
    await this.goTo(state);
  }

  async goTo(state) {
    if (state.status === "waiting" || state.status === "cancelled") this.enterWaiting(state);
    else {
      this.stopWaiting();
      await this.openPlay(state);
    }
  }

  enterWaiting(state) {
    const same = this.waiting && this.waiting.matchId === state.matchId;
    if (!same) {
      this.stopWaiting();
      this.waiting = { matchId: state.matchId, state: null, follower: null, poll: null };
      this.$("invite-box").hidden = true;
      this.$("invite-link").value = "";
      this.$("invite-copied").textContent = "";
      history.replaceState(null, "", `${location.pathname}#match=${encodeURIComponent(state.matchId)}`);
      this.showPhase("waiting");
      this.$("waiting-title").focus();
    }
    this.renderWaiting(state);
    if (!same && state.status === "waiting") this.followWaiting();
  }

  followWaiting() {
    const waiting = this.waiting;
    const controller = new AbortController();
    waiting.follower = controller;
    this.api.follow(waiting.matchId, this.token(), () => this.refreshWaiting(), {
      signal: controller.signal,
      onError: () => this.refreshWaiting(),
    });
    // The stream brings every change; a slow poll as well, in case it is down a while.
    waiting.poll = setInterval(() => this.refreshWaiting(), WAITING_POLL_MS);
  }

  stopWaiting() {
    if (!this.waiting) return;
    if (this.waiting.follower) this.waiting.follower.abort();
    clearInterval(this.waiting.poll);
    this.waiting = null;
  }

  async refreshWaiting() {
    const waiting = this.waiting;
    if (!waiting) return;
    if (waiting.refreshing) {
      waiting.again = true;
      return;
    }
    waiting.refreshing = true;
    try {
      do {
        waiting.again = false;
        let state;
        try {
          state = await this.api.state(waiting.matchId, this.token());
        } catch (error) {
          this.showMessage(this.problemText(error));
          return;
        }
        if (this.waiting !== waiting) return;
        if (state.status === "waiting") this.renderWaiting(state);
        else if (state.status === "cancelled") {
          this.renderWaiting(state);
          if (waiting.follower) waiting.follower.abort();
          clearInterval(waiting.poll);
        } else {
          await this.goTo(state);
          return;
        }
      } while (waiting.again);
    } finally {
      waiting.refreshing = false;
    }
  }

  renderWaiting(state) {
    const waiting = this.waiting;
    waiting.state = state;
    const $ = this.$;
    const title = state.name || `${this.gameName(state.game)} table`;
    $("waiting-title").textContent = `${title} · ${this.gameName(state.game)} · ${state.visibility}`;
    const seated = state.seat !== null && state.seat !== undefined;
    const host = seated && this.hosted().includes(state.matchId);
    const items = state.players.map((p) => {
      const who = p.open ? "open" : p.bot ? `${p.bot} bot` : p.name || "a player";
      const you = seated && p.seat === state.seat ? " (you)" : "";
      return this.el("li", { "data-seat": p.seat, "data-open": String(p.open) }, `Seat ${p.seat}: ${who}${you}`);
    });
    $("waiting-seats").replaceChildren(...items);
    const open = state.openSeats.length;
    const taken = state.players.length - open;
    const status = $("waiting-status");
    status.dataset.status = state.status;
    if (state.status === "cancelled") {
      const why = { creator: "by its creator", creator_left: "its creator left", expired: "nobody came for too long" }[state.cancelReason] || state.cancelReason || "";
      status.textContent = `This table was cancelled${why ? ` (${why})` : ""}.`;
    } else {
      status.textContent = `Waiting for ${open} more player${open === 1 ? "" : "s"} (${taken} of ${state.players.length} seats taken).${seated ? "" : " You have no seat here yet."}`;
    }
    const live = state.status === "waiting";
    $("waiting-host").hidden = !(live && host);
    $("waiting-guest").hidden = !live || host;
    $("take-seat").hidden = seated;
    $("leave-table").hidden = !seated;
  }

  async takeSeat() {
    if (!this.waiting) return;
    await this.joinTable(this.waiting.matchId, {});
  }

  async tableAction(what) {
    const waiting = this.waiting;
    if (!waiting) return;
    this.clearMessage();
    let state;
    try {
      state = await this.api.tableAction(waiting.matchId, this.token(), what);
    } catch (error) {
      this.showMessage(this.problemText(error));
      return;
    }
    this.player.listSoon();
    if (what === "leave") {
      this.back();
      this.showMessage("You left the table: your seat is open again.", "info");
    } else if (what === "cancel") {
      this.back();
      this.showMessage("The table was cancelled.", "info");
    } else {
      await this.goTo(state);
    }
  }

  /** Back to the lobby (the table keeps waiting: it is in "My matches"). */
  back() {
    this.stopWaiting();
    history.replaceState(null, "", location.pathname);
    this.clearMessage();
    this.showPhase("setup");
    this.refreshList();
    this.player.list();
  }

  // ---------------------------------------------------------------- quick match
  async findMatch(event) {
    event.preventDefault();
    this.clearMessage();
    if (this.queue) return;
    const game = this.gameOf("quick-game");
    const players = Number(this.$("quick-players").value);
    const body = { game: game.id, players };
    const bots = this.$("quick-bots").value.trim();
    if (bots !== "") body.fillWithBotsAfterSeconds = Number(bots);
    const find = this.$("quick-find");
    find.disabled = true;
    let ticket;
    try {
      ticket = await this.api.enqueue(this.token(), body);
    } catch (error) {
      find.disabled = false;
      this.showMessage(this.problemText(error));
      return;
    }
    this.queue = { ticket: ticket.ticket, controller: new AbortController(), game: game.id, players };
    this.$("quick-leave").hidden = false;
    this.showQueue(ticket);
    this.pollQueue(this.queue, ticket);
  }

  showQueue(ticket) {
    const status = this.$("quick-status");
    status.dataset.status = ticket.status;
    if (ticket.status === "waiting") {
      status.textContent = `In the queue for ${this.gameName(ticket.game)} with ${ticket.players} players: waiting for the others…`;
    } else if (ticket.status === "matched") {
      status.textContent = `Matched: opening the match (your seat: ${ticket.seat}).`;
    } else if (ticket.status === "left") {
      status.textContent = "You left the queue.";
    } else {
      status.textContent = `The ticket ${ticket.status === "expired" ? "expired" : "ended"}: find a match again.`;
    }
  }

  async pollQueue(queue, first) {
    let ticket = first;
    let pause = 1000;
    while (this.queue === queue && ticket.status === "waiting") {
      try {
        ticket = await this.api.queueTicket(this.token(), queue.ticket, QUEUE_WAIT_S, queue.controller.signal);
        pause = 1000;
      } catch (error) {
        if (queue.controller.signal.aborted) return;
        if (error.status && error.status < 500 && error.status !== 429) {
          this.showMessage(this.problemText(error));
          this.stopQueue();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, 8000);
        continue;
      }
      if (this.queue !== queue) return;
      this.showQueue(ticket);
    }
    if (this.queue !== queue) return;
    this.stopQueue();
    if (ticket.status === "matched") await this.openTable(ticket.matchId);
  }

  async leaveQueue() {
    const queue = this.queue;
    if (!queue) return;
    queue.controller.abort();
    this.queue = null;
    let ticket;
    try {
      ticket = await this.api.leaveQueue(this.token(), queue.ticket);
    } catch (error) {
      this.showMessage(this.problemText(error));
      this.stopQueue();
      return;
    }
    this.showQueue(ticket);
    this.stopQueue();
    // Matched in the meantime: the match is the player's, open it.
    if (ticket.status === "matched") await this.openTable(ticket.matchId);
  }

  /** Forget the queue here (the status line stays). */
  stopQueue() {
    if (this.queue) this.queue.controller.abort();
    this.queue = null;
    this.$("quick-leave").hidden = true;
    this.$("quick-find").disabled = false;
  }

  // ---------------------------------------------------------------- rematch
  /** After the end: the rematch (made now, or already made by another player: then take
   * the seat kept for this player), then its waiting room. */
  async rematch(matchId) {
    this.clearMessage();
    let state;
    try {
      state = await this.api.rematch(matchId, this.token());
    } catch (error) {
      this.showMessage(this.problemText(error));
      return;
    }
    if (state.seat === null || state.seat === undefined) {
      if (state.status === "waiting") await this.joinTable(state.matchId, {});
      else await this.goTo(state);
      return;
    }
    if (state.status === "waiting" && state.version === 0) this.markHosted(state.matchId);
    this.player.dropOffer(state.matchId);
    await this.goTo(state);
  }
}
