// The player of this browser: sign in as a guest (a name; the player token is kept in
// localStorage), list "my matches" with whose turn it is, and follow the player feed so
// the list changes as soon as anything concerns the player. Matches are opened by the
// caller (app.js) with the player token, which acts for the player's seat. Rematches offered
// to the player (feed `rematch_offered`: a seat kept for it, not yet taken) are listed too,
// kept in localStorage until taken or gone.

const PLAYER_KEY = "skyline:player";
const OFFERS_KEY = "skyline:offers:";

export class Player {
  constructor(api, { onOpen, onChange, onEvent, onOffer } = {}) {
    this.api = api;
    this.onOpen = onOpen;
    this.onChange = onChange || (() => {});
    this.onEvent = onEvent || (() => {});
    this.onOffer = onOffer || (() => {});
    this.me = this.saved();
    this.follower = null;
    this.pending = null;
  }

  saved() {
    try {
      const raw = localStorage.getItem(PLAYER_KEY);
      return raw ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  async signIn(name) {
    const created = await this.api.createPlayer(name);
    this.me = { id: created.id, token: created.token, name: created.name };
    try {
      localStorage.setItem(PLAYER_KEY, JSON.stringify(this.me));
    } catch {
      /* storage disabled: signed in for this page only */
    }
    this.start();
    this.onChange();
  }

  signOut() {
    if (this.follower) this.follower.abort();
    this.follower = null;
    this.me = null;
    try {
      localStorage.removeItem(PLAYER_KEY);
    } catch {
      /* nothing kept */
    }
    this.onChange();
  }

  /** Check the kept token (a deleted player signs in again), then follow the feed. */
  async resume() {
    if (!this.me) return;
    try {
      await this.api.me(this.me.token);
    } catch (error) {
      if (error.status === 401) {
        this.signOut();
        return;
      }
    }
    this.start();
    this.onChange();
  }

  start() {
    if (this.follower) this.follower.abort();
    this.follower = new AbortController();
    this.api.followPlayer(this.me.token, (kind, data) => {
      if (kind === "rematch_offered") this.keepOffer(data);
      this.onEvent(kind, data);
      this.listSoon();
    }, { signal: this.follower.signal });
    this.list();
  }

  /** Rematches offered to this player: [{matchId, game, seat, rematchOf}]. */
  offers() {
    if (!this.me) return [];
    try {
      return JSON.parse(localStorage.getItem(OFFERS_KEY + this.me.id) || "[]");
    } catch {
      return this.memoryOffers || [];
    }
  }

  saveOffers(offers) {
    this.memoryOffers = offers.slice(-20);
    try {
      localStorage.setItem(OFFERS_KEY + this.me.id, JSON.stringify(this.memoryOffers));
    } catch {
      /* storage disabled: kept for this page */
    }
  }

  keepOffer(event) {
    const offer = { matchId: event.matchId, game: event.game, seat: event.seat, rematchOf: event.rematchOf };
    this.saveOffers([...this.offers().filter((o) => o.matchId !== offer.matchId), offer]);
  }

  dropOffer(matchId) {
    if (this.me) this.saveOffers(this.offers().filter((o) => o.matchId !== matchId));
  }

  /** Coalesce bursts of feed events into one list refresh. */
  listSoon() {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.list();
    }, 100);
  }

  async list() {
    const box = document.getElementById("my-matches");
    if (!box || !this.me) return;
    let page;
    try {
      page = await this.api.myMatches(this.me.token, { limit: 20 });
    } catch {
      return;
    }
    const listed = new Set(page.items.map((item) => item.matchId));
    // An offer already taken is in the page; one whose match no longer waits is dropped
    // (a rematch the player may not read, private, stays until it is tried).
    const offers = [];
    for (const offer of this.offers()) {
      if (listed.has(offer.matchId)) {
        this.dropOffer(offer.matchId);
        continue;
      }
      try {
        const state = await this.api.state(offer.matchId, this.me.token);
        if (state.status !== "waiting" || !state.openSeats.includes(offer.seat)) {
          this.dropOffer(offer.matchId);
          continue;
        }
      } catch {
        /* not readable: keep it */
      }
      offers.push(offer);
    }
    const offered = offers.map((offer) => {
      const li = document.createElement("li");
      li.dataset.match = offer.matchId;
      li.dataset.offer = "rematch";
      const text = document.createElement("span");
      text.textContent = `${offer.game} · rematch offered to you (seat ${offer.seat}) · waiting`;
      const join = document.createElement("button");
      join.type = "button";
      join.textContent = "Join";
      join.setAttribute("aria-label", `Join the rematch ${offer.matchId} (seat ${offer.seat})`);
      join.addEventListener("click", () => this.onOffer(offer));
      li.append(text, " ", join);
      return li;
    });
    const items = page.items.map((item) => {
      const who = item.players.map((p) => p.name || (p.bot ? `bot (${p.bot})` : "anonymous"));
      const li = document.createElement("li");
      li.dataset.match = item.matchId;
      li.dataset.yourTurn = String(item.yourTurn);
      const text = document.createElement("span");
      const turn = item.status === "finished" ? "finished"
        : item.status === "waiting" ? "table waiting for players"
          : item.status === "cancelled" ? "cancelled"
            : item.yourTurn ? "your turn" : "waiting";
      li.dataset.status = item.status;
      text.textContent = `${item.game} · ${who.join(" vs ")} · ${turn}`;
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = "Open";
      open.setAttribute("aria-label", `Open match ${item.matchId} (${turn})`);
      open.addEventListener("click", () => this.onOpen(item));
      li.append(text, " ", open);
      return li;
    });
    box.replaceChildren(...offered, ...items);
    document.getElementById("my-matches-empty").hidden = items.length + offered.length > 0;
  }
}
