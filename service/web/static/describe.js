// Legal moves in readable words, per game, from the move JSON, the caller's view (for names
// the move only refers to by id) and the game's component catalogue
// (GET /v1/games/{id}?rulesVersion=N: the names, points and texts of every component, so
// none is copied here). Each describer returns {group, text, detail?}: moves of one group
// are listed together; `detail` is a longer explanation (a card's text). Without a catalogue
// (not loaded yet, or unreachable) the ids are shown as they are.

function byId(items, key = "id") {
  return new Map((items || []).map((item) => [item[key], item]));
}

/** Lookups by id over a catalogue document (null when there is none). */
export function indexCatalogue(doc) {
  if (!doc || typeof doc !== "object") return null;
  const rules = byId(doc.scoringRules);
  const prefixRules = (doc.scoringRules || []).filter((r) => r.prefix);
  if (doc.game === "ny1901") {
    const tiles = [...(doc.tiles || []), ...(doc.startingProperty ? [doc.startingProperty] : [])];
    return {
      doc, rules, prefixRules,
      tiles: byId(tiles),
      legendary: byId(doc.legendary),
      actionCards: byId(doc.actionCards),
    };
  }
  if (doc.game === "ginkgopolis") {
    return {
      doc, rules, prefixRules,
      tiles: byId(doc.tiles),
      buildingCards: byId(doc.buildingCards),
      urbanizationCards: byId(doc.urbanizationCards),
      characters: byId(doc.characters),
    };
  }
  return { doc, rules, prefixRules };
}

function cap(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function idWords(id) {
  return String(id).replace(/[_-]/g, " ");
}

function lookup(catalogue, table, id) {
  return catalogue && catalogue[table] ? catalogue[table].get(id) || null : null;
}

// ------------------------------------------------------------------------------ New York 1901
export function nyTileWords(tile, catalogue) {
  const legendary = lookup(catalogue, "legendary", tile);
  if (legendary) {
    return `legendary ${legendary.name} (${legendary.heightFeet} ft, ${legendary.points} points)`;
  }
  const info = lookup(catalogue, "tiles", tile);
  return info ? `${tile} (${info.level}, ${info.points} points)` : tile;
}

function nyLot(view, name) {
  const lot = view && view.lots ? view.lots.find((l) => l.name === name) : null;
  return lot ? `${name} (${lot.district}, ${lot.size} squares)` : name;
}

function nyActionCard(id, catalogue) {
  const card = lookup(catalogue, "actionCards", id);
  const name = card ? card.name : cap(idWords(id));
  return { group: "Action cards", text: `Play ${name}`, detail: card ? card.text : undefined };
}

export function describeNy1901(move, view, catalogue = null) {
  switch (move.type) {
    case "acquire":
      return { group: "Acquire a lot", text: `Acquire lot ${nyLot(view, move.lot)}` };
    case "build": {
      const where = `at column ${move.x}, row ${move.y}, turned ${move.rotation * 90}°`;
      const tile = nyTileWords(move.tile, catalogue);
      return { group: `Build ${tile}`, text: `Build ${tile} ${where}` };
    }
    case "rebuild": {
      const where = `at column ${move.x}, row ${move.y}, turned ${move.rotation * 90}°`;
      const tile = nyTileWords(move.tile, catalogue);
      return {
        group: `Demolish and rebuild with ${tile}`,
        text: `Demolish and rebuild with ${tile} ${where}`,
      };
    }
    case "return_lot":
      return { group: "Stuck: return a lot", text: `Return lot ${nyLot(view, move.lot)} (its card goes under the future market)` };
    case "market_shift":
    case "land_grab":
    case "construction_boom":
      return nyActionCard(move.type, catalogue);
    case "end_turn":
      return { group: "Turn", text: "End the turn" };
    default:
      return { group: "Other", text: JSON.stringify(move) };
  }
}

// ------------------------------------------------------------------------------ Ginkgopolis
export function gkTileWords(id, catalogue) {
  const tile = lookup(catalogue, "tiles", id);
  return tile ? `${cap(tile.colour)} ${tile.number}` : `tile ${id}`;
}

function gkCardWords(id, view, catalogue) {
  const building = lookup(catalogue, "buildingCards", id);
  if (building) return `building card ${cap(building.colour)} ${building.number}`;
  const urbanization = lookup(catalogue, "urbanizationCards", id);
  if (urbanization) return `urbanization card ${urbanization.letter}`;
  const character = lookup(catalogue, "characters", id);
  if (character) return `${character.colour} character of set ${character.set}`;
  // No catalogue: the view's own card descriptions, where the seat can see the card.
  const cards = [];
  if (view && view.me) cards.push(...(view.me.hand || []), ...(view.me.draft_pack || []), ...(view.me.draft_kept || []));
  const known = cards.find((c) => c.id === id);
  if (known && known.kind === "character") return `${known.colour} character of set ${known.character_set}`;
  if (known && known.kind === "urbanization") return `urbanization card ${known.letter}`;
  if (known && known.kind === "building") return `building card ${cap(known.colour)} ${known.number}`;
  return `card ${id}`;
}

function gkCardText(id, catalogue) {
  const card = lookup(catalogue, "buildingCards", id) || lookup(catalogue, "urbanizationCards", id);
  if (card) return card.text;
  const character = lookup(catalogue, "characters", id);
  return character ? `${character.startText} ${character.bonus.text}` : undefined;
}

function gkBuildingAt(view, id, catalogue) {
  const tile = lookup(catalogue, "tiles", id);
  if (!tile || !view || !view.city) return null;
  return view.city.find((b) => b.colour === tile.colour && b.number === tile.number) || null;
}

export function describeGinkgopolis(move, view, catalogue = null) {
  switch (move.type) {
    case "choose_card": {
      const card = move.card;
      const hal = move.hal_card;
      const halWords = hal !== null && hal !== undefined ? `; give Hal ${gkCardWords(hal, view, catalogue)}` : "";
      const alone = move.tile === null || move.tile === undefined;
      const urbanization = lookup(catalogue, "urbanizationCards", card);
      let text;
      if (lookup(catalogue, "buildingCards", card)) {
        const building = gkBuildingAt(view, card, catalogue);
        const height = building ? ` (${building.height} floor${building.height === 1 ? "" : "s"})` : "";
        text = alone
          ? `Exploit building ${gkTileWords(card, catalogue)}${height} with its card`
          : `Build up on ${gkTileWords(card, catalogue)}${height} with tile ${gkTileWords(move.tile, catalogue)}`;
      } else if (urbanization) {
        text = alone
          ? `Exploit urbanization card ${urbanization.letter}: take a resource or a tile`
          : `Urbanize at token ${urbanization.letter} with tile ${gkTileWords(move.tile, catalogue)}`;
      } else {
        text = `Play ${gkCardWords(card, view, catalogue)}${alone ? "" : ` with tile ${gkTileWords(move.tile, catalogue)}`}`;
      }
      const words = gkCardWords(card, view, catalogue);
      return { group: `Play ${words}`, text: text + halWords, detail: gkCardText(card, catalogue) };
    }
    case "new_hand":
      return { group: "New Hand", text: "Spend a New Hand token: discard your 4 cards and draw 4" };
    case "take_item":
      return { group: "Take an item", text: move.item === "tile" ? "Take a tile" : "Take a resource" };
    case "place_token": {
      const pending = view && view.pending;
      const letter = pending && pending.token ? pending.token : "";
      // Rules version 3 (GK-T2): other tokens that move too, to keep the alphabetical order.
      const others = (move.others || []).map((t) => `${t.letter} to column ${t.x}, row ${t.y}`);
      const also = others.length ? `; also move ${others.join(", ")}` : "";
      return { group: "Move the urbanization token", text: `Move token ${letter} to column ${move.x}, row ${move.y}${also}`.replace("  ", " ") };
    }
    case "draft_character":
      return {
        group: "Draft a character",
        text: `Keep the ${gkCardWords(move.character, view, catalogue)}`,
        detail: gkCardText(move.character, catalogue),
      };
    case "return_tiles": {
      const tiles = move.tiles || [];
      return {
        group: "Return tiles",
        text: tiles.length
          ? `Return ${tiles.length} tile${tiles.length === 1 ? "" : "s"} (${tiles.map((t) => gkTileWords(t, catalogue)).join(", ")}) for ${tiles.length} VP`
          : "Return no tiles",
      };
    }
    default:
      return { group: "Other", text: JSON.stringify(move) };
  }
}

export function describe(game, move, view, catalogue = null) {
  if (game === "ny1901") return describeNy1901(move, view, catalogue);
  if (game === "ginkgopolis") return describeGinkgopolis(move, view, catalogue);
  return { group: "Moves", text: JSON.stringify(move) };
}

/** Score-rule ids in words: the catalogue's rule names (``street:broadway`` → ``Broadway
 * majority``), else the id itself made readable (``Street: Broadway``). */
export function ruleWords(rule, catalogue = null) {
  const text = String(rule);
  if (catalogue) {
    const known = catalogue.rules.get(text);
    if (known) return known.name;
    const family = catalogue.prefixRules.find((r) => text.startsWith(r.id));
    if (family) return `${family.name}: ${text.slice(family.id.length)}`;
  }
  const [head, ...rest] = text.split(":");
  const words = (part) => part.replace(/[_-]/g, " ").trim();
  const first = cap(words(head)).replace(/^Vp\b/, "VP");
  if (!rest.length) return first;
  const tail = words(rest.join(":")).replace(/\b([a-z])/g, (m) => m.toUpperCase());
  return `${first}: ${tail}`;
}

/** The explanation of a score rule (its catalogue text), or undefined. */
export function ruleText(rule, catalogue = null) {
  if (!catalogue) return undefined;
  const text = String(rule);
  const known = catalogue.rules.get(text) || catalogue.prefixRules.find((r) => text.startsWith(r.id));
  return known ? known.text : undefined;
}
