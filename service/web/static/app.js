// Skyline reference client: create or join a match, show the board (board.svg), list the
// legal moves in words with a preview of each, act with expectedVersion, follow the SSE
// stream, and end on the final scores. Plain ES modules, no build step, no dependencies.
// Moves and events are shown in the server's own sentences (legal moves' `texts`, events'
// `text`) in the language chosen at the top (English, Czech, German; kept in localStorage);
// describe.js groups the moves and words them only where the server has no sentence.
// lobby.js: tables that wait for players, the lobby list, quick match, invite links and
// rematches, for a signed-in guest.
// clock.js: the seats' clocks of a timed match, ticking locally; the client resigns its
// seat, and takes back a seat a bot took over (at a timeout) with the seat's old token.

import { Api, ApiProblem, LANGUAGES } from "./api.js";
import {
  clockOffset, formatControl, formatDeadline, formatOnTimeout, formatRemaining, isLow,
  readTimeControl, remainingNow, seatClock, timeControlFields,
} from "./clock.js";
import { describe, indexCatalogue, ruleText, ruleWords } from "./describe.js";
import { Lobby } from "./lobby.js";
import { Player } from "./player.js";

const LANG_KEY = "skyline:lang";

function savedLanguage() {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved && saved in LANGUAGES) return saved;
  } catch {
    /* storage disabled */
  }
  const browser = (navigator.language || "en").slice(0, 2).toLowerCase();
  return browser in LANGUAGES ? browser : "en";
}

const api = new Api("", savedLanguage());
const $ = (id) => document.getElementById(id);
const player = new Player(api, {
  onOpen: openMine,
  onChange: showPlayer,
  onEvent: feedEvent,
  onOffer: (offer) => lobby.joinOffer(offer),
});
const main = $("main");

const GAME_NAMES = { ny1901: "New York 1901", ginkgopolis: "Ginkgopolis" };
const SEAT_COLOURS = {
  ny1901: ["black", "purple", "orange", "teal"],
  ginkgopolis: ["black", "purple", "orange", "teal", "brown"],
};

let catalogue = [];
/** Component catalogues by "game@rulesVersion" (promises of indexed documents, or null). */
const components = new Map();

/** Everything about the match being played. */
const session = {
  matchId: null,
  game: null,
  tokens: new Map(), // seat -> token held by this browser
  away: new Map(), // seat -> the old token of a seat a bot took over (it may be taken back)
  resigned: new Set(), // seats this browser resigned
  clockOffset: 0, // the server's clock minus this browser's, when the state arrived
  bots: new Set(),
  seat: null, // the seat whose view is shown (and who acts)
  state: null,
  moves: [],
  texts: [], // the server's sentence for each legal move (LegalMoves.texts)
  described: [],
  components: null, // the match's component catalogue (describe.js indexCatalogue)
  shown: null, // "version:seat" on screen
  preview: null, // highlighted move index
  svgCache: new Map(),
  follower: null, // AbortController of the SSE reader
  loggedVersion: 0,
  finished: false,
  notes: [], // live status notes ("Seat 0 played …", "Now playing as …")
};

// ------------------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function setBusy(busy) {
  main.dataset.busy = busy ? "true" : "false";
  $("board").setAttribute("aria-busy", busy ? "true" : "false");
  for (const button of document.querySelectorAll("#moves button")) button.disabled = busy;
}

function showMessage(text, kind = "error") {
  const box = $("message");
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = !text;
  box.dataset.kind = text ? kind : "";
}

function clearMessage() {
  showMessage("");
}

function seatName(seat) {
  const colours = SEAT_COLOURS[session.game] || [];
  const colour = colours[seat] ? ` (${colours[seat]})` : "";
  return `Seat ${seat}${colour}`;
}

function problemText(error) {
  if (!(error instanceof ApiProblem)) return `Something went wrong: ${error.message || error}`;
  const code = error.code ? ` [${error.code}]` : "";
  if (error.status === 409 || error.status === 412) {
    if (error.code === "not_your_turn") return `Not your turn: ${error.detail}${code}`;
    if (error.code === "match_finished") return `The match is already over.${code}`;
    const now = error.body.currentVersion;
    return `Conflict: the match moved on${now !== undefined ? ` to version ${now}` : ""} before your move arrived, so it was not played. The board is up to date now: choose again.${code}`;
  }
  if (error.status === 422) return `Illegal move: ${error.detail}${code}`;
  if (error.status === 401 || error.status === 403) return `Not allowed: ${error.detail}${code}`;
  if (error.status === 404) return `Not found: ${error.detail}${code}`;
  return `${error.title || "Error"}: ${error.detail}${code}`;
}

// ------------------------------------------------------------------------------ setup form
async function loadCatalogue() {
  try {
    catalogue = await api.games();
  } catch (error) {
    showMessage(problemText(error));
    return;
  }
  const select = $("game");
  select.replaceChildren(
    ...catalogue.map((g) => el("option", { value: g.id, text: g.title })),
  );
  select.addEventListener("change", gameChanged);
  $("players").addEventListener("input", renderSeatKinds);
  gameChanged();
  lobby.gamesLoaded();
}

function currentGame() {
  return catalogue.find((g) => g.id === $("game").value) || catalogue[0];
}

function gameChanged() {
  const game = currentGame();
  if (!game) return;
  const players = $("players");
  players.min = game.minPlayers;
  players.max = game.maxPlayers;
  const value = Number(players.value) || 2;
  players.value = String(Math.min(Math.max(value, game.minPlayers), game.maxPlayers));
  renderOptions(game);
  renderSeatKinds();
}

function renderSeatKinds() {
  const game = currentGame();
  const count = Math.min(Math.max(Number($("players").value) || 1, game ? game.minPlayers : 1), game ? game.maxPlayers : 5);
  const list = $("seat-list");
  const previous = new Map([...list.querySelectorAll("select")].map((s) => [s.dataset.seat, s.value]));
  list.replaceChildren();
  for (let seat = 0; seat < count; seat += 1) {
    const id = `seat-kind-${seat}`;
    const select = el("select", { id, "data-seat": seat, name: id },
      el("option", { value: "human", text: "Human, in this browser" }),
      el("option", { value: "bot", text: "Greedy bot, played by the server" }),
      el("option", { value: "bot:search", text: "Search bot (stronger, slower)" }),
      el("option", { value: "bot:random", text: "Random bot" }));
    select.value = previous.get(String(seat)) || (seat === 0 ? "human" : "bot");
    list.append(el("div", { class: "field inline" }, el("label", { for: id, text: `Seat ${seat}` }), select));
  }
}

function enumOf(schema) {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  return null;
}

function renderOptions(game) {
  const list = $("option-list");
  list.replaceChildren();
  const props = (game.optionsSchema && game.optionsSchema.properties) || {};
  let shown = 0;
  for (const [name, schema] of Object.entries(props)) {
    const id = `opt-${name}`;
    const label = schema.title || name;
    const choices = enumOf(schema);
    if (schema.type === "boolean") {
      const box = el("input", { id, type: "checkbox", "data-option": name, "data-kind": "boolean" });
      box.checked = Boolean(schema.default);
      list.append(el("div", { class: "field inline check" }, box, el("label", { for: id, text: label })));
      shown += 1;
    } else if (choices) {
      const select = el("select", { id, "data-option": name, "data-kind": "enum" },
        ...choices.map((c) => el("option", { value: c, text: String(c).replace(/_/g, " ") })));
      if (schema.default !== undefined) select.value = schema.default;
      list.append(el("div", { class: "field" }, el("label", { for: id, text: label }), select));
      shown += 1;
    } else if (schema.type === "integer") {
      const input = el("input", { id, type: "number", "data-option": name, "data-kind": "integer", value: schema.default ?? "" });
      list.append(el("div", { class: "field" }, el("label", { for: id, text: label }), input));
      shown += 1;
    }
  }
  if (!shown) list.append(el("p", { class: "hint", text: "This game has no options." }));
}

function readOptions() {
  const options = {};
  for (const input of $("option-list").querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    if (input.dataset.kind === "boolean") options[name] = input.checked;
    else if (input.dataset.kind === "integer") {
      if (input.value !== "") options[name] = Number(input.value);
    } else options[name] = input.value;
  }
  return options;
}

async function createMatch(event) {
  event.preventDefault();
  clearMessage();
  const game = currentGame();
  const players = Number($("players").value);
  // bots: {"<seat>": "<kind>"}; the plain "bot" choice is the greedy bot.
  const botSeats = {};
  for (const select of $("seat-list").querySelectorAll("select")) {
    if (select.value.startsWith("bot")) {
      botSeats[select.dataset.seat] = select.value === "bot" ? "greedy" : select.value.slice(4);
    }
  }
  const bots = Object.keys(botSeats).map(Number);
  const body = { game: game.id, players, options: readOptions() };
  if (bots.length) body.bots = botSeats;
  const me = player.me;
  if (me) {
    // Signed in: the first human seat is the player's (its own token acts for it), the
    // others must be bots (other people join through the lobby).
    const humans = [...Array(players).keys()].filter((s) => !(String(s) in botSeats));
    if (humans.length !== 1) {
      showMessage("Signed in, you play one seat: make every other seat a bot.");
      return;
    }
    delete body.bots;
    delete body.players;
    body.seats = [...Array(players).keys()].map((s) => (
      String(s) in botSeats ? { bot: botSeats[String(s)] } : { player: me.id }));
  }
  Object.assign(body, readTimeControl("tc"));
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  const button = $("create");
  button.disabled = true;
  try {
    const created = await api.createMatch(body, me ? me.token : null);
    const tokens = new Map(created.seats.map((s) => [s.seat, s.token]));
    if (me) tokens.set(body.seats.findIndex((s) => s.player === me.id), me.token);
    rememberTokens(created.matchId, created.game, tokens, bots);
    history.replaceState(null, "", `#match=${encodeURIComponent(created.matchId)}`);
    await startSession(created.matchId, created.game, tokens, new Set(bots));
  } catch (error) {
    showMessage(problemText(error));
  } finally {
    button.disabled = false;
  }
}

async function joinMatch(event) {
  event.preventDefault();
  clearMessage();
  const matchId = $("join-match").value.trim();
  const token = $("join-token").value.trim();
  if (!matchId) {
    showMessage("Enter a match id to join.");
    $("join-match").focus();
    return;
  }
  await joinWith(matchId, token);
}

/** Open a match by its id as the signed-in player (its seat, if it has one), else as a
 * spectator: a waiting (or cancelled) table opens in the waiting room. A private match the
 * player does not sit in answers 404, exactly as a match that does not exist. */
async function openMatch(matchId) {
  const me = player.me;
  try {
    const state = await api.state(matchId, me ? me.token : null);
    if (state.status === "waiting" || state.status === "cancelled") {
      if (me) {
        lobby.enterWaiting(state);
      } else {
        showMessage("This table waits for players: choose a name and play as a guest to take a seat.", "info");
      }
      return;
    }
    await openPlay(state);
  } catch (error) {
    showMessage(problemText(error));
  }
}

/** A started match (or finished) the signed-in player sits in, or may watch. */
async function openPlay(state) {
  const me = player.me;
  const seated = me && state.seat !== null && state.seat !== undefined;
  const tokens = seated ? new Map([[state.seat, me.token]]) : new Map();
  const bots = Object.keys(state.bots || {}).map(Number);
  if (seated) rememberTokens(state.matchId, state.game, tokens, bots);
  history.replaceState(null, "", `${location.pathname}#match=${encodeURIComponent(state.matchId)}`);
  await startSession(state.matchId, state.game, tokens, new Set(bots));
}

function showPhase(phase) {
  $("setup").hidden = phase !== "setup";
  $("waiting").hidden = phase !== "waiting";
  $("play").hidden = phase !== "play";
  main.dataset.phase = phase;
}

async function joinWith(matchId, token) {
  try {
    const state = await api.state(matchId, token || null);
    const tokens = new Map();
    if (token && state.seat !== null) tokens.set(state.seat, token);
    rememberTokens(matchId, state.game, tokens, []);
    history.replaceState(null, "", `#match=${encodeURIComponent(matchId)}`);
    await startSession(matchId, state.game, tokens, new Set());
  } catch (error) {
    showMessage(problemText(error));
  }
}

// Tokens stay in this tab only (sessionStorage): a reload resumes the match. The old tokens
// of seats a bot took over are kept too: they take the seats back.
function rememberTokens(matchId, game, tokens, bots, away = new Map()) {
  try {
    sessionStorage.setItem(`skyline:${matchId}`, JSON.stringify({ game, tokens: [...tokens], bots, away: [...away] }));
  } catch {
    /* storage disabled: no resume */
  }
}

function recallTokens(matchId) {
  try {
    const raw = sessionStorage.getItem(`skyline:${matchId}`);
    if (!raw) return null;
    const saved = JSON.parse(raw);
    return {
      game: saved.game, tokens: new Map(saved.tokens), bots: new Set(saved.bots || []),
      away: new Map(saved.away || []),
    };
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------ a match
/** Keep the session's tokens (and the old tokens of seats a bot took over) for a reload. */
function saveSession() {
  rememberTokens(session.matchId, session.game, session.tokens, [...session.bots], session.away);
}

async function startSession(matchId, game, tokens, bots, away = new Map()) {
  stopFollowing();
  Object.assign(session, {
    matchId, game, tokens, bots, away, resigned: new Set(), clockOffset: 0,
    seat: tokens.size ? Math.min(...tokens.keys()) : null,
    state: null, moves: [], texts: [], described: [], components: null, shown: null, preview: null,
    svgCache: new Map(), loggedVersion: 0, finished: false, notes: [],
  });
  lobby.stopWaiting();
  showPhase("play");
  $("result").hidden = true;
  $("rematch-box").hidden = true;
  $("moves-panel").hidden = false;
  $("log").replaceChildren();
  renderAway();
  $("play-title").textContent = `${GAME_NAMES[game] || game} · match ${matchId}`;
  document.title = `${GAME_NAMES[game] || game} — Skyline`;
  setBusy(true);
  try {
    await refresh();
    follow();
    $("moves-title").focus();
  } finally {
    setBusy(false);
  }
}

function follow() {
  const controller = new AbortController();
  session.follower = controller;
  const seat = session.seat;
  const token = seat !== null ? session.tokens.get(seat) : null;
  api.follow(session.matchId, token, (state) => {
    if (!session.state || state.version > session.state.version || state.status !== session.state.status) {
      refresh();
    }
  }, {
    signal: controller.signal,
    onError: (error) => {
      if (handedToBot(error) && seat !== null && session.tokens.get(seat) === token) {
        // The seat went to a bot (a timeout, a hand-over): offer it back, watch meanwhile.
        handOver(seat);
        refresh();
        return;
      }
      showMessage(`Live updates stopped: ${problemText(error)}`);
    },
  });
}

/** A 401 `seat_handed_to_bot`: a bot plays the seat this token held. */
function handedToBot(error) {
  return error instanceof ApiProblem && error.code === "seat_handed_to_bot";
}

/** A bot took `seat` over: its token no longer works. Keep the token (it takes the seat
 * back), offer "Take my seat back", and follow the match with the other seats held here,
 * else as a spectator. A resigned seat is out for good: no offer. */
function handOver(seat) {
  const token = session.tokens.get(seat);
  if (token === undefined) return;
  session.tokens.delete(seat);
  if (!session.resigned.has(seat)) session.away.set(seat, token);
  if (session.seat === seat) session.seat = session.tokens.size ? Math.min(...session.tokens.keys()) : null;
  session.shown = null;
  session.moves = [];
  saveSession();
  stopFollowing();
  if (!session.finished) follow();
  renderAway();
  renderResign();
}

function stopFollowing() {
  if (session.follower) session.follower.abort();
  session.follower = null;
}

let refreshing = null;
let refreshAgain = false;

/** Bring the screen up to the match's latest version (serialised; coalesces bursts). */
function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    try {
      do {
        refreshAgain = false;
        try {
          await refreshOnce();
        } catch (error) {
          // The seat's token stopped working: a bot took the seat. Read on without it.
          if (!handedToBot(error) || error.seat === undefined || !session.tokens.has(error.seat)) throw error;
          handOver(error.seat);
          refreshAgain = true;
        }
      } while (refreshAgain);
    } catch (error) {
      showMessage(problemText(error));
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

async function refreshOnce() {
  try {
    await readMatch();
  } catch (error) {
    if (handedToBot(error) && session.seat !== null) error.seat = session.seat;
    throw error;
  }
}

async function readMatch() {
  const { matchId } = session;
  let token = session.seat !== null ? session.tokens.get(session.seat) : null;
  let state = await api.state(matchId, token);
  // Hot-seat: act for a held seat that may act now (the shown one if it still may).
  const mine = state.activeSeats.filter((s) => session.tokens.has(s));
  if (mine.length && !mine.includes(session.seat)) {
    session.seat = mine[0];
    token = session.tokens.get(session.seat);
    state = await api.state(matchId, token);
    if (session.tokens.size > 1) announce(`Now playing as ${seatName(session.seat)}.`);
  }
  if (token && (state.seat === null || state.seat === undefined) && String(session.seat) in (state.bots || {})) {
    // A player's credential reads a seat a bot took over as a spectator.
    throw new ApiProblem(401, { code: "seat_handed_to_bot", detail: "A bot plays the seat now." });
  }
  const key = `${state.version}:${session.seat}:${state.status}:${api.lang}`;
  if (key === session.shown) return;
  let moves = [];
  let texts = [];
  if (token && state.status === "active" && state.activeSeats.includes(session.seat)) {
    const legal = await api.legalMoves(matchId, token);
    if (legal.version !== state.version) {
      refreshAgain = true;
      return;
    }
    moves = legal.moves;
    texts = legal.texts || [];
  }
  const svg = await boardSvg(state.version, null);
  const parts = await componentsOf(state);
  session.state = state;
  session.moves = moves;
  session.texts = texts;
  session.components = parts;
  // The server's sentence for each move; describe.js for the groups, the card texts, and
  // the words of a move the server gave none for.
  session.described = moves.map((m, i) => {
    const words = describe(state.game, m, state.view, parts);
    return texts[i] ? { ...words, text: texts[i] } : words;
  });
  session.preview = null;
  session.shown = key;
  session.clockOffset = clockOffset(state.clock);
  showBoard(svg);
  renderStatus();
  renderMoves();
  renderSeats();
  renderAway();
  await appendLog(state.version);
  if (state.status === "finished") finish();
}

/** The catalogue of the match's game under its rules version, fetched once (null while
 * unreachable: the moves are then described by their ids, and the next refresh retries). */
function componentsOf(state) {
  const key = `${state.game}@${state.rulesVersion}@${api.lang}`;
  if (!components.has(key)) {
    components.set(key, api.catalogue(state.game, state.rulesVersion).then(indexCatalogue).catch(() => {
      components.delete(key);
      return null;
    }));
  }
  return components.get(key);
}

async function boardSvg(version, highlight) {
  const token = session.seat !== null ? session.tokens.get(session.seat) : null;
  const key = `${version}:${session.seat}:${highlight}`;
  if (session.svgCache.has(key)) return session.svgCache.get(key);
  const svg = await api.boardSvg(session.matchId, token, highlight);
  if (session.svgCache.size > 64) session.svgCache.clear();
  session.svgCache.set(key, svg);
  return svg;
}

function showBoard(svgText) {
  const parsed = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = parsed.documentElement;
  if (svg.nodeName !== "svg") return;
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMin meet");
  $("board").replaceChildren(document.importNode(svg, true));
}

/** Add a note to the live status line (kept until the next move of this browser). */
function announce(text) {
  session.notes.push(text);
  renderStatus();
}

function renderStatus() {
  const note = session.notes.join(" ");
  const state = session.state;
  const status = $("status");
  if (!state) return;
  status.dataset.version = String(state.version);
  let text;
  if (state.status === "finished") {
    const ending = terminationText(state.result);
    text = ending ? `The game is over. ${ending}` : "The game is over.";
  } else if (session.seat !== null && state.activeSeats.includes(session.seat)) {
    text = `${seatName(session.seat)}: your move.`;
  } else if (state.activeSeats.length) {
    text = `Waiting for ${state.activeSeats.map(seatName).join(" and ")}…`;
  } else {
    text = "Waiting…";
  }
  status.textContent = `${note ? note + " " : ""}${text} (version ${state.version})`;
  $("board-caption").textContent = session.seat === null
    ? "The board as a spectator sees it."
    : `The board as ${seatName(session.seat)} sees it.`;
}

function renderMoves() {
  const container = $("moves");
  container.replaceChildren();
  const { moves, described, state } = session;
  $("moves-title").textContent = session.seat === null ? "Moves" : `Moves of ${seatName(session.seat)}`;
  if (!moves.length) {
    const why = state.status === "finished" ? "The game is over."
      : session.seat === null ? "Spectators have no moves."
        : "No moves for you right now: waiting for the other seats. Their moves appear here live.";
    container.append(el("p", { class: "hint", id: "no-moves", text: why }));
    return;
  }
  const groups = new Map();
  described.forEach((d, index) => {
    if (!groups.has(d.group)) groups.set(d.group, []);
    groups.get(d.group).push(index);
  });
  const openAll = moves.length <= 24 || groups.size === 1;
  for (const [name, indices] of groups) {
    const list = el("ul", { class: "move-list" });
    for (const index of indices) {
      const text = described[index].text;
      const type = moves[index].type;
      const preview = el("button", {
        type: "button", class: "preview", "data-index": index, "aria-pressed": "false",
        "aria-label": `Preview on the board: ${text}`, text, title: described[index].detail,
        onclick: () => showPreview(index, true),
        onfocus: () => schedulePreview(index),
        onmouseenter: () => schedulePreview(index),
      });
      const play = el("button", {
        type: "button", class: "play", "data-index": index, "data-type": type,
        "aria-label": `Play: ${text}`, text: "Play",
        onclick: () => play_(index),
      });
      list.append(el("li", { class: "move" }, preview, play));
    }
    const details = el("details", { class: "move-group", "data-group": name },
      el("summary", {}, el("span", { text: name }), el("span", { class: "count", text: ` (${indices.length})` })),
      list);
    details.open = openAll || indices.length <= 6;
    container.append(details);
  }
  container.append(el("p", {}, el("button", {
    type: "button", id: "clear-preview", text: "Clear the preview",
    onclick: () => showPreview(null, true),
  })));
}

let previewTimer = null;

function schedulePreview(index) {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => showPreview(index, false), 150);
}

async function showPreview(index, pinned) {
  clearTimeout(previewTimer);
  if (!session.state || main.dataset.busy === "true") return;
  const version = session.state.version;
  const shown = session.shown;
  try {
    const svg = await boardSvg(version, index);
    if (session.shown !== shown) return; // the match moved on meanwhile
    session.preview = index;
    showBoard(svg);
    for (const button of document.querySelectorAll("#moves button.preview")) {
      button.setAttribute("aria-pressed", String(Number(button.dataset.index) === index));
    }
    $("board-caption").textContent = index === null
      ? `The board as ${seatName(session.seat)} sees it.`
      : `Preview: ${session.described[index].text}`;
    if (pinned) clearMessage();
  } catch (error) {
    if (pinned) showMessage(problemText(error));
  }
}

async function play_(index) {
  const { state, moves } = session;
  if (!state || main.dataset.busy === "true") return;
  const move = moves[index];
  const words = session.described[index].text;
  const token = session.tokens.get(session.seat);
  clearMessage();
  session.notes = [];
  setBusy(true);
  try {
    await api.act(session.matchId, token, move, state.version);
    announce(`${seatName(session.seat)} played: ${words}.`);
  } catch (error) {
    if (handedToBot(error)) handOver(session.seat); // too late: a bot took the seat
    else showMessage(problemText(error), error instanceof ApiProblem && error.status === 422 ? "illegal" : "conflict");
    session.shown = null; // redraw whatever the server says now
  } finally {
    await refresh();
    setBusy(false);
    const first = document.querySelector("#moves button.preview");
    if (first && !session.finished) $("moves-title").focus({ preventScroll: true });
  }
}

function renderSeats() {
  const { state } = session;
  const list = $("seats");
  list.replaceChildren();
  const count = state.view && state.view.players ? state.view.players : (state.view.seats || []).length;
  for (let seat = 0; seat < count; seat += 1) {
    // Bot seats are public (state.bots: {"<seat>": kind}), also for a player who joined.
    const botKind = (state.bots || {})[String(seat)];
    // A seat bound to a player shows its display name (MatchState.players).
    const holder = (state.players || []).find((p) => p.seat === seat);
    const named = holder && holder.name ? `${holder.name}, ` : "";
    const who = named + (session.tokens.has(seat) ? "played in this browser"
      : session.resigned.has(seat) ? `resigned, a ${botKind || "random"} bot plays on`
        : session.away.has(seat) && botKind ? `${botKind} bot (took over your seat)`
          : botKind ? `${botKind} bot` : session.bots.has(seat) ? "bot" : "another player");
    const active = state.activeSeats.includes(seat) ? " — to move" : "";
    const item = el("li", { "data-seat": seat, "data-bot": botKind || null },
      el("span", { text: `${seatName(seat)}: ${who}${active}` }));
    const clock = clockOf(seat);
    if (clock) item.append(" ", ...clock);
    const token = session.tokens.get(seat);
    if (token && session.tokens.size > 1) {
      // Hand a seat to a player on another device: the match id and the seat token, to enter
      // under "Join a match" there. A token is a credential: never in a link (URLs end up in
      // histories, logs and Referer headers; docs/api.md).
      item.append(" ", el("details", { class: "handoff", "data-seat": seat },
        el("summary", { text: "hand over", "aria-label": `Hand seat ${seat} to another player` }),
        el("span", { text: "Match id " }), el("code", { class: "handoff-match", text: session.matchId }),
        el("span", { text: ", seat token " }),
        el("input", { class: "handoff-token", readonly: true, value: token, "aria-label": `Seat token of seat ${seat}`, onfocus: (e) => e.target.select() }),
        el("span", { text: ": the other player enters both under “Join a match”." })));
    }
    list.append(item);
  }
  const control = state.status === "active" ? formatControl(state.timeControl) : "";
  const policy = formatOnTimeout(state.onTimeout);
  $("time-control").hidden = !control;
  $("time-control").textContent = control ? `Time control: ${control}${policy ? `; ${policy}` : ""}.` : "";
  renderResign();
  tickClocks();
}

/** "Resign" for the seat this browser plays, while the match is under way. */
function renderResign() {
  const { state, seat } = session;
  $("resign-box").hidden = !(state && state.status === "active" && seat !== null && session.tokens.has(seat));
  $("resign").textContent = seat === null ? "Resign" : `Resign (${seatName(seat)})`;
}

// ------------------------------------------------------------------------------ clocks
/** A seat's clock (time left, and its deadline while it runs) as nodes, or null when the
 * match is untimed, not under way, or the server shows no clocks. */
function clockOf(seat) {
  const { state } = session;
  if (state.status !== "active") return null;
  const entry = seatClock(state.clock, seat);
  if (!entry || (typeof entry.remainingMs !== "number" && !entry.deadline)) return null;
  const nodes = [el("span", {
    class: "clock", role: "timer", "data-seat": seat, "data-running": String(Boolean(entry.running)),
    "aria-label": `Time left for ${seatName(seat)}`,
  })];
  const deadline = entry.running ? formatDeadline(entry.deadline) : "";
  if (deadline) nodes.push(" ", el("span", { class: "deadline", "data-seat": seat, text: `(until ${deadline})` }));
  return nodes;
}

/** Count the running clocks down locally (the server's time = this browser's + offset). */
function tickClocks() {
  const { state } = session;
  if (!state) return;
  for (const node of document.querySelectorAll("#seats .clock")) {
    const ms = remainingNow(seatClock(state.clock, Number(node.dataset.seat)), state.clock, session.clockOffset);
    const text = formatRemaining(ms);
    if (node.textContent !== text) node.textContent = text;
    node.dataset.remainingMs = ms === null ? "" : String(ms);
    node.dataset.low = String(isLow(ms, state.timeControl));
  }
}

setInterval(tickClocks, 250);

// ------------------------------------------------------------------------------ resign, reclaim
async function resign() {
  const seat = session.seat;
  const token = seat === null ? undefined : session.tokens.get(seat);
  if (token === undefined || !session.state) return;
  const ok = window.confirm(`Resign ${seatName(seat)}? You are out of the match and ranked last; `
    + "a bot plays your seat on. This cannot be undone.");
  if (!ok) return;
  clearMessage();
  session.notes = [];
  $("resign").disabled = true;
  setBusy(true);
  try {
    await api.resign(session.matchId, token, seat);
    session.resigned.add(seat);
    handOver(seat);
    // The stream may have told of the hand-over before this answer came: a resigned seat
    // is not offered back.
    session.away.delete(seat);
    saveSession();
    renderAway();
    announce(`${seatName(seat)} resigned.`);
  } catch (error) {
    if (handedToBot(error)) handOver(seat);
    else showMessage(problemText(error));
  } finally {
    $("resign").disabled = false;
    await refresh();
    setBusy(false);
  }
}

/** The "a bot took over your seat" panel: each such seat with a "Take my seat back" button
 * (none once the match is over). Redrawn only when it changes (it is a live region). */
function renderAway() {
  const over = session.finished || (session.state && session.state.status === "finished");
  const seats = [...session.away.keys()].sort((a, b) => a - b);
  const key = `${seats.join(",")}:${over}`;
  const list = $("away-list");
  $("away-panel").hidden = !seats.length;
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...seats.map((seat) => el("p", { "data-seat": seat },
    el("span", {
      text: over ? `A bot played your seat, ${seatName(seat)}, to the end of the match.`
        : `A bot took over your seat, ${seatName(seat)} (its time ran out, or it was handed to a bot), `
          + "and plays it for now. Take it back to play on.",
    }),
    over ? null : " ",
    over ? null : el("button", {
      type: "button", class: "primary reclaim", "data-seat": seat, text: "Take my seat back",
      "aria-label": `Take my seat back: ${seatName(seat)}`, onclick: (event) => reclaimSeat(seat, event.currentTarget),
    }))));
}

/** Take a seat back with its old token: the answer's new token plays it from now on (a
 * player's credential keeps working and gets none). */
async function reclaimSeat(seat, button) {
  const old = session.away.get(seat);
  if (old === undefined) return;
  clearMessage();
  if (button) button.disabled = true;
  setBusy(true);
  try {
    const answer = await api.reclaim(session.matchId, old, seat);
    session.away.delete(seat);
    session.tokens.set(seat, answer.token || old);
    session.seat = seat;
    session.shown = null;
    session.notes = [];
    saveSession();
    stopFollowing();
    follow();
    announce(`You took ${seatName(seat)} back.`);
  } catch (error) {
    if (error instanceof ApiProblem && ["seat_forfeited", "seat_not_away", "not_your_seat", "match_finished"].includes(error.code)) {
      session.away.delete(seat); // nothing to take back any more
      saveSession();
    }
    showMessage(problemText(error));
    if (button) button.disabled = false;
  } finally {
    await refresh();
    renderAway();
    setBusy(false);
  }
}

/** An entry's events in words: the server's sentences (`text`), else the kinds and fields. */
function summarise(events) {
  return events.map((e) => {
    if (e.text) return e.text;
    const parts = Object.entries(e.data || {})
      .filter(([, v]) => v !== null && typeof v !== "object")
      .map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`);
    return `${e.kind.replace(/_/g, " ")}${parts.length ? " (" + parts.join(", ") + ")" : ""}.`;
  }).join(" ");
}

const LOG_SHOWN = 30;

/** The newest log entries up to `version`, page by page (the log answers at most 200 a
 * page, with `nextAfter` while more follow); only the last LOG_SHOWN are shown, so a
 * viewer joining a long match starts there instead of reading the whole history. */
async function appendLog(version) {
  const token = session.seat !== null ? session.tokens.get(session.seat) : null;
  const log = $("log");
  let after = Math.max(session.loggedVersion, version - LOG_SHOWN);
  while (after !== null && after < version) {
    let page;
    try {
      page = await api.log(session.matchId, token, after);
    } catch {
      return;
    }
    for (const entry of page.entries) {
      session.loggedVersion = Math.max(session.loggedVersion, entry.version);
      const who = entry.seat === null ? "setup" : seatName(entry.seat);
      log.prepend(el("li", { text: `v${entry.version} · ${who}: ${summarise(entry.events) || "moved"}` }));
    }
    after = page.nextAfter;
  }
  while (log.children.length > LOG_SHOWN) log.lastElementChild.remove();
}

/** How a finished match ended, when not by its rules alone (a resignation, a timeout). */
function terminationText(result) {
  const reason = result && result.termination && result.termination.reason;
  if (reason === "resign") return "The match ended by resignation.";
  if (reason === "timeout") return "The match ended on time: a seat ran out of time.";
  return "";
}

function finish() {
  const { state } = session;
  session.finished = true;
  stopFollowing();
  $("resign-box").hidden = true;
  renderAway();
  main.dataset.phase = "finished";
  $("moves-panel").hidden = true;
  const body = $("result-body");
  body.replaceChildren();
  if (!state.result) {
    // Ended by the service (resignations, timeouts) on a server that gives no scores then.
    body.append(el("p", { id: "no-result", class: "hint", text: "The match is over; the server gave no scores for it." }));
    $("rematch-box").hidden = true;
    $("result").hidden = false;
    $("result-title").focus();
    return;
  }
  // Seats and opponents (e.g. Hal in solo Ginkgopolis) share one ranking.
  const players = [
    ...state.result.seats.map((s) => ({
      ...s, label: seatName(s.seat) + (s.forfeited ? " (forfeited)" : ""), key: `seat-${s.seat}`,
    })),
    ...(state.result.opponents || []).map((o) => ({ ...o, label: o.name, key: `opponent-${o.name}` })),
  ].sort((a, b) => a.rank - b.rank || a.label.localeCompare(b.label));
  const best = players.filter((p) => p.rank === 1).map((p) => p.label);
  body.append(el("p", { class: "winner", id: "winner", text: `Winner${best.length > 1 ? "s" : ""}: ${best.join(" and ")}.` }));
  const ending = terminationText(state.result);
  if (ending) {
    body.append(el("p", {
      id: "termination", class: "termination", "data-reason": state.result.termination.reason, text: ending,
    }));
  }
  const out = state.result.seats.filter((s) => s.forfeited).map((s) => seatName(s.seat));
  if (out.length) {
    body.append(el("p", { id: "forfeited", class: "hint", text: `Forfeited (out of the match, ranked last): ${out.join(", ")}.` }));
  }
  const rules = [];
  for (const p of players) for (const line of p.breakdown) if (!rules.includes(line.rule)) rules.push(line.rule);
  const table = el("table", { class: "scores" },
    el("caption", { text: "Score breakdown per scoring rule" }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Rule" }),
      ...players.map((p) => el("th", { scope: "col", text: `${p.label} (rank ${p.rank})` })))),
    el("tbody", {}, ...rules.map((rule) => el("tr", {},
      el("th", { scope: "row", text: ruleWords(rule, session.components), title: ruleText(rule, session.components) }),
      ...players.map((p) => {
        const line = p.breakdown.find((l) => l.rule === rule);
        return el("td", { text: line ? String(line.points) : "0" });
      })))),
    el("tfoot", {}, el("tr", {}, el("th", { scope: "row", text: "Total" }),
      ...players.map((p) => el("td", { class: "total", "data-player": p.key, text: String(p.score) })))));
  body.append(table);
  // A player of this match (its own credential, not a seat token) may ask for a rematch.
  const me = player.me;
  const mine = me && [...session.tokens.values()].includes(me.token);
  $("rematch-box").hidden = !mine;
  if (mine) {
    const offered = state.rematch || player.offers().some((o) => o.rematchOf === session.matchId);
    $("rematch").textContent = offered ? "Join the rematch" : "Rematch";
    $("rematch-hint").textContent = offered
      ? "A rematch was asked for: your seat is kept for you."
      : "The same players, the seat order rotated: the others are offered their seats.";
  }
  $("result").hidden = false;
  $("result-title").focus();
}

/** The player feed: lists follow it; a rematch offered for the match on screen says so. */
function feedEvent(kind, data) {
  lobby.feedEvent(kind, data);
  if (kind === "rematch_offered" && session.finished && data.rematchOf === session.matchId) {
    $("rematch").textContent = "Join the rematch";
    $("rematch-hint").textContent = "Another player asked for a rematch: your seat is kept for you.";
  }
}

function leave() {
  stopFollowing();
  history.replaceState(null, "", location.pathname);
  session.matchId = null;
  showPhase("setup");
  clearMessage();
  $("game").focus();
  player.list();
  lobby.refreshList();
}

// ------------------------------------------------------------------------------ start
// ------------------------------------------------------------------------------ language
function setupLanguage() {
  const select = $("lang");
  select.replaceChildren(
    ...Object.entries(LANGUAGES).map(([code, name]) => el("option", { value: code, lang: code, text: name })),
  );
  select.value = api.lang;
  document.documentElement.lang = api.lang;
  select.addEventListener("change", () => {
    api.lang = select.value in LANGUAGES ? select.value : "en";
    document.documentElement.lang = api.lang;
    try {
      localStorage.setItem(LANG_KEY, api.lang);
    } catch {
      /* storage disabled: the choice lasts for this page */
    }
    if (session.matchId) {
      // Everything on screen again, in the new language (the log from its start).
      session.shown = null;
      session.loggedVersion = 0;
      $("log").replaceChildren();
      refresh();
    }
  });
}

// ------------------------------------------------------------------------------ the player
function showPlayer() {
  const me = player.me;
  $("sign-in-form").hidden = Boolean(me);
  $("signed-in").hidden = !me;
  if (me) $("player-shown").textContent = me.name;
  lobby.playerChanged();
}

async function signIn(event) {
  event.preventDefault();
  clearMessage();
  const name = $("player-name").value;
  try {
    await player.signIn(name);
  } catch (error) {
    showMessage(problemText(error));
  }
}

/** Open one of the player's matches: its token acts for its seat. */
async function openMine(item) {
  clearMessage();
  if (item.status === "waiting" || item.status === "cancelled") {
    await lobby.openTable(item.matchId);
    return;
  }
  const bots = item.players.filter((p) => p.bot).map((p) => p.seat);
  const tokens = new Map([[item.seat, player.me.token]]);
  rememberTokens(item.matchId, item.game, tokens, bots);
  history.replaceState(null, "", `#match=${encodeURIComponent(item.matchId)}`);
  await startSession(item.matchId, item.game, tokens, new Set(bots));
}

const lobby = new Lobby({
  api,
  player,
  el,
  showMessage,
  clearMessage,
  problemText,
  games: () => catalogue,
  gameName: (id) => GAME_NAMES[id] || id,
  openPlay,
  showPhase,
});

async function boot() {
  setupLanguage();
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", () => player.signOut());
  showPlayer();
  player.resume();
  $("create-form").addEventListener("submit", createMatch);
  $("join-form").addEventListener("submit", joinMatch);
  $("leave").addEventListener("click", leave);
  $("resign").addEventListener("click", resign);
  timeControlFields($("tc-fields"), "tc", el);
  timeControlFields($("table-tc-fields"), "table-tc", el);
  $("rematch").addEventListener("click", () => lobby.rematch(session.matchId));
  lobby.setup();
  await loadCatalogue();
  // An invite link (/play?match=<id>&invite=<code>) or a table's link (/play?match=<id>).
  const search = new URLSearchParams(location.search);
  const params = new URLSearchParams(location.hash.slice(1));
  const matchId = params.get("match");
  if (search.get("invite")) {
    await lobby.showInvite(search.get("invite"), search.get("match"));
  } else if (search.get("match")) {
    await openMatch(search.get("match"));
  } else if (matchId) {
    // An old join link carried the seat token in the fragment: take it out of the address at
    // once (this tab keeps it in sessionStorage), so no history or bookmark holds it.
    const token = params.get("token");
    if (token) history.replaceState(null, "", `${location.pathname}#match=${encodeURIComponent(matchId)}`);
    const saved = recallTokens(matchId);
    if (token) await joinWith(matchId, token);
    else if (saved) await startSession(matchId, saved.game, saved.tokens, saved.bots, saved.away);
    else await openMatch(matchId);
  }
  document.body.dataset.ready = "true";
}

boot();
