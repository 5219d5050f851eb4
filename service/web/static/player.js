// The player of this browser: sign in as a guest (a name; the player token is kept in
// localStorage), list "my matches" with whose turn it is, and follow the player feed so
// the list changes as soon as anything concerns the player. Matches are opened by the
// caller (app.js) with the player token, which acts for the player's seat.

const PLAYER_KEY = "skyline:player";

export class Player {
  constructor(api, { onOpen, onChange } = {}) {
    this.api = api;
    this.onOpen = onOpen;
    this.onChange = onChange || (() => {});
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
    this.api.followPlayer(this.me.token, () => this.listSoon(), { signal: this.follower.signal });
    this.list();
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
    const items = page.items.map((item) => {
      const who = item.players.map((p) => p.name || (p.bot ? `bot (${p.bot})` : "anonymous"));
      const li = document.createElement("li");
      li.dataset.match = item.matchId;
      li.dataset.yourTurn = String(item.yourTurn);
      const text = document.createElement("span");
      const turn = item.status === "finished" ? "finished"
        : item.yourTurn ? "your turn" : "waiting";
      text.textContent = `${item.game} · ${who.join(" vs ")} · ${turn}`;
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = "Open";
      open.setAttribute("aria-label", `Open match ${item.matchId} (${turn})`);
      open.addEventListener("click", () => this.onOpen(item));
      li.append(text, " ", open);
      return li;
    });
    box.replaceChildren(...items);
    document.getElementById("my-matches-empty").hidden = items.length > 0;
  }
}
