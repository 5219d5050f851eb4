// The Skyline REST API as used by the reference client: plain fetch, problem+json errors,
// and the event stream through an EventSource, opened with a short-lived stream ticket
// (an EventSource cannot send a Bearer token, and a token never goes into a URL).
// Every request names the client's language (Accept-Language): the server answers its texts
// (legal moves, events, problems, the catalogue) in English, Czech or German.

/** The languages the server speaks, with their own names. */
export const LANGUAGES = { en: "English", cs: "Čeština", de: "Deutsch" };

/** An RFC 9457 problem answered by the API (status, code, title, detail, currentVersion). */
export class ApiProblem extends Error {
  constructor(status, body) {
    const detail = (body && (body.detail || body.title)) || `HTTP ${status}`;
    super(detail);
    this.status = status;
    this.code = (body && body.code) || "http_" + status;
    this.title = (body && body.title) || "";
    this.detail = detail;
    this.body = body || {};
  }
}

export class Api {
  constructor(base = "", lang = "en") {
    this.base = base;
    this.lang = lang in LANGUAGES ? lang : "en";
  }

  async request(path, { method = "GET", token = null, body = undefined, accept = "application/json", signal, cache = "no-store" } = {}) {
    const headers = { Accept: accept, "Accept-Language": this.lang };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(this.base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache,
    });
    if (!response.ok) {
      let problem = null;
      try {
        problem = await response.json();
      } catch {
        problem = null;
      }
      throw new ApiProblem(response.status, problem);
    }
    return response;
  }

  async json(path, options) {
    return (await this.request(path, options)).json();
  }

  games() {
    return this.json("/v1/games");
  }

  /** A game's component catalogue under one rules version: immutable, so the browser's
   * HTTP cache may answer it (Cache-Control: immutable). */
  catalogue(game, rulesVersion) {
    // The language is in the URL too, so that the browser's cache keeps one copy per language.
    return this.json(`/v1/games/${encodeURIComponent(game)}?rulesVersion=${encodeURIComponent(rulesVersion)}&lang=${this.lang}`, { cache: "default" });
  }

  createMatch(body, token = null) {
    return this.json("/v1/matches", { method: "POST", body, token });
  }

  /** A guest player: {id, token, name, appId}; the token is shown once. */
  createPlayer(name) {
    return this.json("/v1/players", { method: "POST", body: { name } });
  }

  me(token) {
    return this.json("/v1/me", { token });
  }

  myMatches(token, { status = null, cursor = null, limit = 20 } = {}) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (status) query.set("status", status);
    if (cursor) query.set("cursor", cursor);
    return this.json(`/v1/me/matches?${query}`, { token });
  }

  /**
   * Follow the player's feed (/v1/me/events) with an EventSource opened with a feed ticket:
   * calls onEvent(kind, data) for each event (`your_turn`, `match_started`,
   * `match_finished`, `seat_changed`, `reset`, and the lobby's `player_joined`,
   * `player_left`, `match_cancelled`, `invited`, `rematch_offered`) until `signal` aborts;
   * reopens with a fresh
   * ticket and `after=<last id>` after any error, like follow().
   */
  followPlayer(token, onEvent, { signal } = {}) {
    let lastId = null;
    let source = null;
    let timer = null;
    let delay = 500;
    let done = false;
    const kinds = ["your_turn", "match_started", "match_finished", "seat_changed", "reset",
      "player_joined", "player_left", "match_cancelled", "invited", "rematch_offered"];
    const again = () => {
      if (done) return;
      timer = setTimeout(open, delay * (0.5 + Math.random()));
      delay = Math.min(delay * 2, 8000);
    };
    const open = async () => {
      let ticket;
      try {
        ticket = (await this.json("/v1/me/stream-tickets", { method: "POST", token })).ticket;
      } catch (error) {
        if (!(error instanceof ApiProblem) || error.status >= 500 || error.status === 429) again();
        return;
      }
      if (done) return;
      const query = new URLSearchParams({ ticket });
      if (lastId !== null) query.set("after", lastId);
      source = new EventSource(`${this.base}/v1/me/events?${query}`);
      source.addEventListener("open", () => { delay = 500; });
      for (const kind of kinds) {
        source.addEventListener(kind, (event) => {
          if (event.lastEventId) lastId = event.lastEventId;
          onEvent(kind, JSON.parse(event.data));
        });
      }
      source.addEventListener("error", () => {
        if (source) source.close();
        source = null;
        again();
      });
    };
    if (signal) {
      signal.addEventListener("abort", () => {
        done = true;
        clearTimeout(timer);
        if (source) source.close();
      }, { once: true });
    }
    open();
  }

  // ---------------------------------------------------------------- the lobby (docs/lobby.md)
  /** The public tables waiting for players (the caller's app): {items, nextCursor}. */
  lobby(token, { game = null, players = null, limit = 20 } = {}) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (game) query.set("game", game);
    if (players) query.set("players", String(players));
    return this.json(`/v1/lobby?${query}`, { token });
  }

  /** Take a seat: body {} (the lowest free seat), {seat: n} or {invite: code}. */
  join(matchId, token, body = {}) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/join`, { method: "POST", token, body });
  }

  /** leave | start | cancel a waiting match (start and cancel: its creator only). */
  tableAction(matchId, token, what) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/${what}`, { method: "POST", token, body: {} });
  }

  /** A seat code ({uses}) or a player's invitation; the code is shown once. */
  invite(matchId, token, body = {}) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/invitations`, { method: "POST", token, body });
  }

  /** What an invitation code invites to (no credential needed). */
  invitation(code) {
    return this.json(`/v1/invitations/${encodeURIComponent(code)}`);
  }

  rematch(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/rematch`, { method: "POST", token, body: {} });
  }

  /** Quick match: a ticket {ticket, status, matchId?, seat?}. */
  enqueue(token, body) {
    return this.json("/v1/queue", { method: "POST", token, body });
  }

  /** Long-poll a ticket: answers as soon as it is matched, else after `wait` seconds. */
  queueTicket(token, ticket, wait, signal) {
    return this.json(`/v1/queue/${encodeURIComponent(ticket)}?wait=${wait}`, { token, signal });
  }

  leaveQueue(token, ticket) {
    return this.json(`/v1/queue/${encodeURIComponent(ticket)}`, { method: "DELETE", token });
  }

  state(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}`, { token });
  }

  legalMoves(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/legal-moves`, { token });
  }

  act(matchId, token, action, expectedVersion) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/actions`, {
      method: "POST",
      token,
      body: { action, expectedVersion },
    });
  }

  log(matchId, token, after) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/log?after=${after}`, { token });
  }

  async boardSvg(matchId, token, highlight = null) {
    const query = highlight === null ? "" : `?highlight=${highlight}`;
    const response = await this.request(
      `/v1/matches/${encodeURIComponent(matchId)}/board.svg${query}`,
      { token, accept: "image/svg+xml" },
    );
    return response.text();
  }

  /** Resign `seat` (its token or its player's credential): the seat is out, ranked last, a
   * random bot plays it on. Answers the match as a spectator sees it. */
  resign(matchId, token, seat) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/seats/${seat}/resign`, { method: "POST", token, body: {} });
  }

  /** Take back a seat a bot took over, with its old (revoked) seat token or its player's
   * credential: {seat, token, state}; `token` is the seat's new token (null for a player's
   * credential, which keeps working). */
  reclaim(matchId, token, seat) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/seats/${seat}/reclaim`, { method: "POST", token });
  }

  /** A short-lived ticket that opens this seat's event stream (an EventSource cannot send
   * the token, and a token never goes into a URL). */
  streamTicket(matchId, token) {
    return this.json(`/v1/matches/${encodeURIComponent(matchId)}/stream-tickets`, {
      method: "POST",
      token,
    });
  }

  /**
   * Follow /events with an EventSource: calls onState(matchState) for every version, until
   * the match is finished or `signal` aborts. A seat's stream is opened with a fresh stream
   * ticket each time. The EventSource never reconnects by itself (it would reuse the URL and
   * its expired ticket): on any error it is closed and opened again, after a growing,
   * jittered pause, with a new ticket and `after=<last event id>`, so nothing is missed.
   * A refused ticket (the token no longer works) stops following and goes to onError, and
   * so does the stream's own `revoked` event (the seat went to a bot: an ApiProblem 401
   * with the event's code, e.g. `seat_handed_to_bot`).
   */
  follow(matchId, token, onState, { signal, onError } = {}) {
    return new Promise((resolve) => {
      let lastId = null;
      let source = null;
      let timer = null;
      let delay = 500;
      let done = false;
      const stop = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (source) source.close();
        resolve();
      };
      const again = () => {
        if (done) return;
        timer = setTimeout(open, delay * (0.5 + Math.random()));
        delay = Math.min(delay * 2, 8000);
      };
      const onEvent = (event) => {
        if (event.lastEventId) lastId = event.lastEventId;
        const state = JSON.parse(event.data);
        onState(state);
        if (state.status === "finished") stop();
      };
      const open = async () => {
        const query = new URLSearchParams({ lang: this.lang });
        if (lastId !== null) query.set("after", lastId);
        if (token) {
          try {
            query.set("ticket", (await this.streamTicket(matchId, token)).ticket);
          } catch (error) {
            if (error instanceof ApiProblem && error.status < 500 && error.status !== 429) {
              if (onError && !done) onError(error);
              stop();
            } else {
              again();
            }
            return;
          }
        }
        if (done) return;
        source = new EventSource(`${this.base}/v1/matches/${encodeURIComponent(matchId)}/events?${query}`);
        source.addEventListener("open", () => { delay = 500; });
        source.addEventListener("state", onEvent);
        source.addEventListener("snapshot", onEvent); // far behind: the current state at once
        source.addEventListener("revoked", (event) => {
          // The token stopped reading the seat: reopening would only be refused.
          let data = null;
          try {
            data = JSON.parse(event.data);
          } catch {
            data = null;
          }
          if (onError && !done) onError(new ApiProblem(401, data || { code: "credential_revoked" }));
          stop();
        });
        source.addEventListener("error", () => {
          // The stream ended (bounded, or the server is stopping), was refused, or the
          // network failed: reopen it ourselves, with a fresh ticket.
          if (source) source.close();
          source = null;
          again();
        });
      };
      if (signal) {
        if (signal.aborted) return stop();
        signal.addEventListener("abort", stop, { once: true });
      }
      open();
    });
  }
}
