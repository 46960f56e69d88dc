// lodge.follow against a live Lodge server (LODGE_URL): every version once,
// in order, although the test cuts the connection mid-match (through a TCP
// proxy it controls) and the server ends streams itself every STREAM_MAX
// seconds (tests/live/test_ts_client.py starts it with a short one).
import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { test } from "node:test";
import { bearer, createLodge, idempotencyKey, LodgeStreamError, type Lodge } from "../src/index";

const BASE = process.env.LODGE_URL ?? "http://127.0.0.1:8000";
const direct = createLodge(BASE);

/** A TCP proxy in front of the server: `cut()` destroys every connection through it;
 * `streams()` counts the stream requests sent through it. */
async function proxy(): Promise<{ url: string; cut: () => number; streams: () => number; close: () => void }> {
  const target = new URL(BASE);
  const sockets = new Set<Socket>();
  let streams = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    track(client);
    track(upstream);
    client.on("data", (chunk: Buffer) => { streams += chunk.toString("latin1").split("/stream?").length - 1; });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const cut = () => {
    const count = sockets.size;
    for (const socket of sockets) socket.destroy();
    return count;
  };
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, cut, streams: () => streams, close: () => { cut(); server.close(); } };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Play one legal move of the seat to act (the admin token acts for any seat). */
async function playOne(lodge: Lodge, matchId: string, admin: string): Promise<boolean> {
  const path = { match_id: matchId };
  const view = (await lodge.GET("/v1/matches/{match_id}", { params: { path }, headers: bearer(admin) })).data!;
  if (view.status === "finished") return false;
  const seat = view.to_act[0];
  const legal = (await lodge.GET("/v1/matches/{match_id}/legal-moves", {
    params: { path, query: { seat } }, headers: bearer(admin) })).data!;
  const played = await lodge.POST("/v1/matches/{match_id}/moves", {
    params: { path, query: { seat }, header: { "Idempotency-Key": idempotencyKey() } }, headers: bearer(admin),
    body: { move: legal.moves[0], version: legal.version } });
  assert.equal(played.response.status, 200, JSON.stringify(played.error));
  return true;
}

test("follow sees every version once, in order, across cut connections", async () => {
  const created = await direct.POST("/v1/matches", {
    body: { game: "biberbande", players: ["ana", "bo"], seed: 11, options: { rounds: 1 } } });
  const match = created.data!;
  const relay = await proxy();
  const versions: number[] = [];
  let drops = 0;
  let last: string | undefined;
  const following = createLodge(relay.url).follow(match.match_id, {
    token: match.seats[0].token!, state: true, retryMs: 20,
    onMessage: (message) => {
      versions.push(message.version);
      if (message.state) last = message.state.status;
    },
    onError: () => { drops += 1; },
  });
  try {
    await until(() => versions.length === 1, "the setup's version");
    let moves = 0;
    while (await playOne(direct, match.match_id, match.admin_token)) {
      moves += 1;
      if (moves % 3 === 1) {  // mid-match: cut once the follower is up to date, then move on at once
        await until(() => versions.length === moves + 1, `version ${moves}`);
        assert.ok(relay.cut() > 0, "no connection to cut");
      }
      if (moves === 5) {  // the server ends the stream itself (STREAM_MAX): the follower reconnects
        const before = relay.streams();
        await until(() => relay.streams() > before, "the server to end the stream");
      }
    }
    assert.equal(await following.done, "finished");
    assert.deepEqual(versions, Array.from({ length: moves + 1 }, (_, v) => v));
    assert.ok(drops >= 2, `only ${drops} dropped connections were seen`);
    assert.equal(last, "finished");
  } finally {
    following.close();
    relay.close();
  }
});

test("follow resumes after `after` and ends with a deleted match", async () => {
  const created = await direct.POST("/v1/matches", { body: { game: "thirteen-beavers", players: ["ana", "bo"] } });
  const match = created.data!;
  for (let i = 0; i < 3; i += 1) await playOne(direct, match.match_id, match.admin_token);
  const versions: number[] = [];
  const following = direct.follow(match.match_id, { after: 1, onMessage: (m) => { versions.push(m.version); } });
  await until(() => versions.length === 2, "versions 2 and 3");
  const deleted = await direct.DELETE("/v1/matches/{match_id}", {
    params: { path: { match_id: match.match_id } }, headers: bearer(match.admin_token) });
  assert.equal(deleted.response.status, 204);
  assert.equal(await following.done, "deleted");
  assert.deepEqual(versions, [2, 3]);
});

test("a stream the server refuses rejects with its problem", async () => {
  const following = direct.follow("nosuchmatch00000", { onMessage: () => assert.fail("no message expected") });
  await assert.rejects(following.done, (error: unknown) =>
    error instanceof LodgeStreamError && error.status === 404 && error.problem?.code === "match_not_found");
});

test("close() stops following", async () => {
  const created = await direct.POST("/v1/matches", { body: { game: "biberclan", players: ["ana", "bo"] } });
  const following = direct.follow(created.data!.match_id, { onMessage: () => undefined });
  following.close();
  assert.equal(await following.done, "closed");
});

test("a throw in onMessage stops following and rejects done with it", async () => {
  const created = await direct.POST("/v1/matches", { body: { game: "mein-lieber-biber", players: ["ana", "bo"] } });
  const calls: number[] = [];
  const following = direct.follow(created.data!.match_id, {
    onMessage: (message) => { calls.push(message.version); throw new Error("stop here"); } });
  await assert.rejects(following.done, /stop here/);
  assert.deepEqual(calls, [0]);
});
