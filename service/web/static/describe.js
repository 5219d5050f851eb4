// Legal moves in readable words, per game, from the move JSON (and the caller's view for
// names the move only refers to by id). Each describer returns {group, text}: moves of one
// group are listed together.

const NY_TILES = {
  B1: ["bronze", 2], B2: ["bronze", 2], B3: ["bronze", 3], B4: ["bronze", 3],
  B5: ["bronze", 4], B6: ["bronze", 4],
  S1: ["silver", 3], S2: ["silver", 4], S3: ["silver", 4], S4: ["silver", 5],
  S5: ["silver", 5], S6: ["silver", 6],
  G1: ["gold", 5], G2: ["gold", 5], G3: ["gold", 6], G4: ["gold", 6], G5: ["gold", 7],
  G6: ["gold", 8],
};
const NY_LEGENDARY = {
  park_row: ["Park Row", 391, 6],
  singer: ["Singer", 612, 7],
  metropolitan_life: ["Metropolitan Life", 700, 8],
  woolworth: ["Woolworth", 792, 8],
};

export function nyTileWords(tile) {
  if (NY_LEGENDARY[tile]) {
    const [name, feet, points] = NY_LEGENDARY[tile];
    return `legendary ${name} (${feet} ft, ${points} points)`;
  }
  const info = NY_TILES[tile];
  return info ? `${tile} (${info[0]}, ${info[1]} points)` : tile;
}

function nyLot(view, name) {
  const lot = view && view.lots ? view.lots.find((l) => l.name === name) : null;
  return lot ? `${name} (${lot.district}, ${lot.size} squares)` : name;
}

export function describeNy1901(move, view) {
  switch (move.type) {
    case "acquire":
      return { group: "Acquire a lot", text: `Acquire lot ${nyLot(view, move.lot)}` };
    case "build": {
      const where = `at column ${move.x}, row ${move.y}, turned ${move.rotation * 90}°`;
      return { group: `Build ${nyTileWords(move.tile)}`, text: `Build ${nyTileWords(move.tile)} ${where}` };
    }
    case "rebuild": {
      const where = `at column ${move.x}, row ${move.y}, turned ${move.rotation * 90}°`;
      return {
        group: `Demolish and rebuild with ${nyTileWords(move.tile)}`,
        text: `Demolish and rebuild with ${nyTileWords(move.tile)} ${where}`,
      };
    }
    case "return_lot":
      return { group: "Stuck: return a lot", text: `Return lot ${nyLot(view, move.lot)} (its card goes under the future market)` };
    case "market_shift":
      return { group: "Action cards", text: "Play Market Shift: swap the open market for the next 4 cards" };
    case "land_grab":
      return { group: "Action cards", text: "Play Land Grab: acquire a second (2-square) lot" };
    case "construction_boom":
      return { group: "Action cards", text: "Play Construction Boom: build a second skyscraper" };
    case "end_turn":
      return { group: "Turn", text: "End the turn" };
    default:
      return { group: "Other", text: JSON.stringify(move) };
  }
}

const GK_COLOURS = ["red", "blue", "yellow"];
const GK_LETTERS = "ABCDEFGHIJKL";

function cap(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export function gkTileWords(id) {
  return `${cap(GK_COLOURS[Math.floor(id / 20)] || "?")} ${(id % 20) + 1}`;
}

function gkCardWords(id, view) {
  if (id < 60) return `building card ${gkTileWords(id)}`;
  if (id < 72) return `urbanization card ${GK_LETTERS[id - 60]}`;
  const cards = [];
  if (view && view.me) cards.push(...(view.me.hand || []), ...(view.me.draft_pack || []), ...(view.me.draft_kept || []));
  const known = cards.find((c) => c.id === id);
  if (known && known.colour) return `${known.colour} character of set ${known.character_set}`;
  return `character card ${id}`;
}

function gkBuildingAt(view, id) {
  if (!view || !view.city) return null;
  const colour = GK_COLOURS[Math.floor(id / 20)];
  const number = (id % 20) + 1;
  return view.city.find((b) => b.colour === colour && b.number === number) || null;
}

export function describeGinkgopolis(move, view) {
  switch (move.type) {
    case "choose_card": {
      const card = move.card;
      const hal = move.hal_card;
      const halWords = hal !== null && hal !== undefined ? `; give Hal ${gkCardWords(hal, view)}` : "";
      let text;
      if (card < 60) {
        const building = gkBuildingAt(view, card);
        const height = building ? ` (${building.height} floor${building.height === 1 ? "" : "s"})` : "";
        text = move.tile === null || move.tile === undefined
          ? `Exploit building ${gkTileWords(card)}${height} with its card`
          : `Build up on ${gkTileWords(card)}${height} with tile ${gkTileWords(move.tile)}`;
      } else if (card < 72) {
        const letter = GK_LETTERS[card - 60];
        text = move.tile === null || move.tile === undefined
          ? `Exploit urbanization card ${letter}: take a resource or a tile`
          : `Urbanize at token ${letter} with tile ${gkTileWords(move.tile)}`;
      } else {
        text = `Play ${gkCardWords(card, view)}`;
      }
      return { group: `Play ${gkCardWords(card, view)}`, text: text + halWords };
    }
    case "new_hand":
      return { group: "New Hand", text: "Spend a New Hand token: discard your 4 cards and draw 4" };
    case "take_item":
      return { group: "Take an item", text: move.item === "tile" ? "Take a tile" : "Take a resource" };
    case "place_token": {
      const pending = view && view.pending;
      const letter = pending && pending.token ? pending.token : "";
      return { group: "Move the urbanization token", text: `Move token ${letter} to column ${move.x}, row ${move.y}`.replace("  ", " ") };
    }
    case "draft_character":
      return { group: "Draft a character", text: `Keep the ${gkCardWords(move.character, view)}` };
    case "return_tiles": {
      const tiles = move.tiles || [];
      return {
        group: "Return tiles",
        text: tiles.length
          ? `Return ${tiles.length} tile${tiles.length === 1 ? "" : "s"} (${tiles.map(gkTileWords).join(", ")}) for ${tiles.length} VP`
          : "Return no tiles",
      };
    }
    default:
      return { group: "Other", text: JSON.stringify(move) };
  }
}

export function describe(game, move, view) {
  if (game === "ny1901") return describeNy1901(move, view);
  if (game === "ginkgopolis") return describeGinkgopolis(move, view);
  return { group: "Moves", text: JSON.stringify(move) };
}

/** Score-rule ids in words (``street:broadway`` → ``Street: broadway``). */
export function ruleWords(rule) {
  const [head, ...rest] = String(rule).split(":");
  const words = (part) => part.replace(/[_-]/g, " ").trim();
  const first = cap(words(head)).replace(/^Vp\b/, "VP");
  if (!rest.length) return first;
  const tail = words(rest.join(":")).replace(/\b([a-z])/g, (m) => m.toUpperCase());
  return `${first}: ${tail}`;
}
