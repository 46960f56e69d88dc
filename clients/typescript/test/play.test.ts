// The generated client plays a whole random match of every game against a
// live Lodge server (LODGE_URL), checking ETags, 304s, long-polls and the
// problem shape on the way.  Run by tests/live/test_ts_client.py (make test).
import assert from "node:assert/strict";
import { test } from "node:test";
import { bearer, createLodge, etagVersion, idempotencyKey, type Move } from "../src/index";

const BASE = process.env.LODGE_URL ?? "http://127.0.0.1:8000";
const lodge = createLodge(BASE);
/** Short matches: one round, the short river. */
const OPTIONS: Record<string, Record<string, unknown>> = {
  biberbande: { rounds: 1 }, biberclan: { rounds: 1 }, "mein-lieber-biber": { rounds: 1 },
  "thirteen-beavers": { board: "short" },
};

/** A seeded generator (mulberry32), so a failing match can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("the catalogue lists every game with its move types", async () => {
  const { data, error } = await lodge.GET("/v1/games");
  assert.equal(error, undefined);
  assert.ok(data && data.games.length >= 4);
  for (const game of data.games) assert.ok(game.moves && game.moves.length > 0, game.id);
});

test("errors come back as problems", async () => {
  const { data, error, response } = await lodge.GET("/v1/matches/{match_id}", {
    params: { path: { match_id: "nosuchmatch00000" } } });
  assert.equal(data, undefined);
  assert.equal(response.status, 404);
  assert.equal(error?.code, "match_not_found");
});

const { data: catalogue } = await lodge.GET("/v1/games");
for (const [index, game] of (catalogue?.games ?? []).entries()) {
  test(`a whole random match of ${game.id}`, async () => {
    const random = rng(2026 + index);
    const created = await lodge.POST("/v1/matches", {
      body: { game: game.id, players: ["ana", "bo", "cy"].slice(0, Math.max(2, game.min_players)), seed: 7,
              options: OPTIONS[game.id] ?? {} } });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const match = created.data!;
    assert.equal(etagVersion(created.response), 0);
    assert.equal(match.state.game, game.id);
    const path = { match_id: match.match_id };
    let moves = 0;
    for (;;) {
      const viewed = await lodge.GET("/v1/matches/{match_id}", { params: { path } });
      const view = viewed.data!;
      assert.equal(etagVersion(viewed.response), view.version);
      if (view.status === "finished") {
        assert.ok(view.result && view.result.winners.length > 0);
        break;
      }
      const unchanged = await lodge.GET("/v1/matches/{match_id}", {
        params: { path, header: { "If-None-Match": `"${view.version}"` } } });
      assert.equal(unchanged.response.status, 304);
      const seat = view.to_act[0];
      const token = match.seats[seat].token!;  // token seats only (open and bot seats have none)
      const legal = await lodge.GET("/v1/matches/{match_id}/legal-moves", { params: { path }, headers: bearer(token) });
      assert.equal(legal.data!.version, view.version);
      const choices: Move[] = legal.data!.moves;
      assert.ok(choices.length > 0, `seat ${seat} is to act but has no move`);
      const move = choices[Math.floor(random() * choices.length)];
      const played = await lodge.POST("/v1/matches/{match_id}/moves", {
        params: { path, header: { "Idempotency-Key": idempotencyKey() } }, headers: bearer(token),
        body: { move, version: legal.data!.version } });
      assert.equal(played.response.status, 200, JSON.stringify(played.error));
      assert.equal(played.data!.version, view.version + 1);
      assert.equal(etagVersion(played.response), played.data!.version);
      moves += 1;
      if (moves === 1) {  // a long-poll sees the move that was just made
        const events = await lodge.GET("/v1/matches/{match_id}/events", {
          params: { path, query: { after: view.version, wait: 5 } } });
        assert.equal(events.data!.version, played.data!.version);
        assert.ok(events.data!.events.length > 0);
      }
      assert.ok(moves < 5000, "match did not end");
    }
    const record = await lodge.GET("/v1/matches/{match_id}/record", { params: { path } });
    assert.equal(record.data!.moves.length, moves);
    const deleted = await lodge.DELETE("/v1/matches/{match_id}", { params: { path }, headers: bearer(match.admin_token) });
    assert.equal(deleted.response.status, 204);
  });
}
