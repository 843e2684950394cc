// Drives a real pmapi server through the SDK. sdk/ts_sdk_test.go starts the
// server and runs this file with node --test; it passes the credentials of
// two tenants in PMAPI_* variables.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { after, before, describe, test } from "node:test";

import { Webhook } from "standardwebhooks";

import {
  apiKey,
  bearer,
  createPmapiClient,
  etag,
  idempotencyKey,
  items,
  pages,
  PmapiError,
  preconditionFailed,
  replayed,
  revalidate,
  unwrap,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type FetchResult,
  type PmapiClient,
  type ProjectCreatedWebhook,
  type ProjectView,
  type TaskView,
  type WebhookFailure,
} from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  assert.ok(v, `${name} is not set: run this through go test ./sdk/ (TestTypeScriptSDKDrivesTheServer)`);
  return v;
}

const baseUrl = env("PMAPI_BASE");
const clientId = env("PMAPI_CLIENT_ID");
const pm = createPmapiClient({ baseUrl, clientId, credential: apiKey(env("PMAPI_API_KEY")) });
const other = createPmapiClient({
  baseUrl,
  clientId: env("PMAPI_OTHER_CLIENT_ID"),
  credential: apiKey(env("PMAPI_OTHER_API_KEY")),
});

// rejection is the PmapiError p fails with.
async function rejection(p: Promise<unknown>): Promise<PmapiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof PmapiError, `not a PmapiError: ${String(e)}`);
    return e;
  }
  assert.fail("the call succeeded");
}

// refused checks that verify throws a WebhookVerificationError for reason.
function refused(verify: () => void, reason: WebhookFailure): void {
  assert.throws(verify, (e) => e instanceof WebhookVerificationError && e.reason === reason);
}

function listTasks(client: PmapiClient, projectId: string, cursor: string | undefined) {
  return unwrap(client.GET("/openapi/v1/resource/task/list", { params: { query: { projectId, limit: 2, cursor } } }));
}

describe("the SDK against the server", () => {
  let project: ProjectView;
  const tasks: TaskView[] = [];

  before(async () => {
    project = await unwrap(pm.POST("/openapi/v1/resource/project/create", { body: { name: "TypeScript SDK" } }));
    for (const title of ["first", "second", "third"]) {
      tasks.push(await unwrap(pm.POST("/openapi/v1/resource/task/create", { body: { projectId: project.id, title } })));
    }
  });

  test("creates return the typed view", () => {
    assert.match(project.id, /^prj_/);
    assert.deepEqual(tasks.map((t) => t.status), ["TODO", "TODO", "TODO"]);
  });

  test("items walks every page, newest first", async () => {
    const seen: string[] = [];
    for await (const task of items((cursor) => listTasks(pm, project.id, cursor))) {
      seen.push(task.id);
    }
    assert.deepEqual(seen, tasks.map((t) => t.id).reverse());
    let count = 0;
    for await (const page of pages((cursor) => listTasks(pm, project.id, cursor))) {
      count++;
      assert.ok(page.items.length <= 2);
    }
    assert.equal(count, 2, "three tasks in pages of two");
  });

  test("an idempotency key replays the first answer", async () => {
    const key = idempotencyKey();
    const send = (title: string) => pm.POST("/openapi/v1/resource/task/create", {
      params: { header: { "Idempotency-Key": key } },
      body: { projectId: project.id, title },
    });
    const first = await send("once");
    const again = await send("once");
    assert.equal(replayed(first.response), false);
    assert.equal(replayed(again.response), true);
    assert.equal((await unwrap(again)).id, (await unwrap(first)).id);
    const reused = await rejection(unwrap(send("another body")));
    assert.equal(reused.status, 422);
    assert.equal(reused.code, "IDEMPOTENCY_KEY_REUSED");
    const all = [];
    for await (const task of items((cursor) => listTasks(pm, project.id, cursor))) {
      all.push(task);
    }
    assert.equal(all.filter((t) => t.title === "once").length, 1, "the replay created no second task");
  });

  test("404 is a typed NOT_FOUND", async () => {
    const e = await rejection(unwrap(pm.GET("/openapi/v1/resource/task/detail", {
      params: { query: { id: "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0" } },
    })));
    assert.equal(e.status, 404);
    assert.equal(e.code, "NOT_FOUND");
    assert.notEqual(e.requestId, "");
    assert.notEqual(e.message, "");
  });

  test("400 is a typed VALIDATION_FAILED with details", async () => {
    const e = await rejection(unwrap(pm.POST("/openapi/v1/resource/task/create", {
      body: { projectId: project.id, title: "" },
    })));
    assert.equal(e.status, 400);
    assert.equal(e.code, "VALIDATION_FAILED");
    assert.equal(e.details["field"], "title", JSON.stringify(e.details));
  });

  test("401 for a key the server does not know", async () => {
    const bad = createPmapiClient({ baseUrl, clientId, credential: apiKey("pmk_not_a_key") });
    const e = await rejection(unwrap(bad.GET("/openapi/v1/resource/project/list")));
    assert.equal(e.status, 401);
    assert.equal(e.code, "INVALID_TOKEN");
  });

  test("a bearer token calls within its scope; outside it is a typed 403", async () => {
    let asked = 0;
    const oauth = createPmapiClient({
      baseUrl,
      clientId,
      credential: bearer(async () => {
        asked++;
        return env("PMAPI_ACCESS_TOKEN"); // a refreshing source would hand out a new one here
      }),
    });
    const listed = await unwrap(oauth.GET("/openapi/v1/resource/project/list", { params: { query: { limit: 200 } } }));
    assert.ok(listed.items.some((p) => p.id === project.id));
    const e = await rejection(unwrap(oauth.GET("/openapi/v1/resource/task/list")));
    assert.equal(e.status, 403);
    assert.equal(e.code, "INSUFFICIENT_SCOPE");
    assert.equal(asked, 2, "the token source is asked before every request");
  });

  test("another workspace's credentials see 404 and no data", async () => {
    const e = await rejection(unwrap(other.GET("/openapi/v1/resource/project/detail", {
      params: { query: { id: project.id } },
    })));
    assert.equal(e.code, "NOT_FOUND");
    const theirs = await unwrap(other.GET("/openapi/v1/resource/task/list", {}));
    const ours = new Set(tasks.map((t) => t.id));
    assert.ok(theirs.items.every((t) => !ours.has(t.id)), "the other workspace lists our tasks");
  });

  test("a conditional read of a detail and a list is 304 until a change, and takes no token", async () => {
    const task = tasks[0]!;
    const detail = (tag?: string) => pm.GET("/openapi/v1/resource/task/detail", {
      params: { query: { id: task.id }, header: { "If-None-Match": tag } },
    });
    const list = (tag?: string) => pm.GET("/openapi/v1/resource/task/list", {
      params: { query: { projectId: project.id, limit: 100 }, header: { "If-None-Match": tag } },
    });
    const remaining = (r: Response) => Number(r.headers.get("X-RateLimit-Remaining"));
    const polled = async <T,>(read: (tag?: string) => Promise<FetchResult<T>>) => {
      const first = await read();
      const tag = etag(first.response);
      assert.match(tag ?? "", /^"[\w-]+"$/, "a 200 carries a strong ETag");
      assert.equal((await revalidate(first)).notModified, false);
      // The bucket refills as time passes, so a 304 may show one more token,
      // never one fewer: five that each took one would show a drop.
      let before = remaining(first.response);
      for (let i = 0; i < 5; i++) {
        const again = await read(tag);
        assert.equal(again.response.status, 304);
        assert.ok(again.data === undefined && !again.error, "a 304 has no body");
        assert.deepEqual(await revalidate(again), { notModified: true, etag: tag });
        const left = remaining(again.response);
        assert.ok(left >= before, `a 304 took a token: X-RateLimit-Remaining ${before} then ${left}`);
        before = left;
      }
    };
    await polled(detail);
    await polled(list);
    const d = await revalidate(detail(etag((await detail()).response)));
    const l = await revalidate(list(etag((await list()).response)));
    await unwrap(pm.POST("/openapi/v1/resource/task/update", { body: { taskId: task.id, title: "first, renamed" } }));
    const changedDetail = await revalidate(detail(d.etag));
    const changedList = await revalidate(list(l.etag));
    assert.ok(!changedDetail.notModified && !changedList.notModified, "a change is a 200");
    assert.equal(changedDetail.data.title, "first, renamed");
    assert.ok(changedList.data.items.some((t) => t.id === task.id && t.title === "first, renamed"));
    assert.notEqual(changedDetail.etag, d.etag);
    assert.notEqual(changedList.etag, l.etag);
    assert.match(changedDetail.etag ?? "", /^"[\w-]+"$/);
  });

  test("an update with a stale If-Match is a typed 412 and changes nothing", async () => {
    const task = tasks[1]!;
    const read = () => pm.GET("/openapi/v1/resource/task/detail", { params: { query: { id: task.id } } });
    const update = (title: string, tag: string | undefined) => pm.POST("/openapi/v1/resource/task/update", {
      params: { header: { "If-Match": tag } },
      body: { taskId: task.id, title },
    });
    const stale = etag((await read()).response);
    const current = await unwrap(update("second, as read", stale));
    assert.equal(current.title, "second, as read", "the If-Match of the version read passes");
    const e = await rejection(unwrap(update("second, from a stale copy", stale)));
    assert.equal(e.status, 412);
    assert.equal(e.code, "PRECONDITION_FAILED");
    assert.ok(preconditionFailed(e));
    assert.notEqual(e.requestId, "");
    const after = await read();
    assert.equal((await unwrap(after)).title, "second, as read", "the stale update changed the task");
    assert.notEqual(etag(after.response), stale);
  });

  test("another workspace's ETag-bearing reads stay 404", async () => {
    const tag = etag((await pm.GET("/openapi/v1/resource/task/detail", {
      params: { query: { id: tasks[0]!.id } },
    })).response);
    for (const t of [tag, "*"]) {
      const r = await other.GET("/openapi/v1/resource/task/detail", {
        params: { query: { id: tasks[0]!.id }, header: { "If-None-Match": t } },
      });
      assert.equal(r.response.status, 404, `If-None-Match ${t}`);
      assert.equal(r.response.headers.get("ETag"), null);
      assert.equal((await rejection(unwrap(r))).code, "NOT_FOUND");
    }
    const e = await rejection(unwrap(other.POST("/openapi/v1/resource/task/update", {
      params: { header: { "If-Match": "*" } },
      body: { taskId: tasks[0]!.id, title: "not theirs" },
    })));
    assert.equal(e.code, "NOT_FOUND");
  });
});

describe("the app manages its own webhook subscriptions with its key", () => {
  test("create with a project filter, change, list, delete; another workspace's key finds nothing", async () => {
    const project = await unwrap(pm.POST("/openapi/v1/resource/project/create", { body: { name: "hooked" } }));
    const created = await unwrap(pm.POST("/openapi/v1/webhooks/subscriptions", {
      body: { url: "http://127.0.0.1:9/hook", events: ["task.created"], projectIds: [project.id] },
    }));
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual(created.projectIds, [project.id]);
    const subId = created.id ?? assert.fail("no id");
    const path = { params: { path: { subId } } };
    const changed = await unwrap(pm.PATCH("/openapi/v1/webhooks/subscriptions/{subId}", {
      ...path,
      body: { projectIds: null, maxPerSecond: 10 },
    }));
    assert.equal(changed.projectIds, null);
    assert.equal(changed.maxPerSecond, 10);
    assert.deepEqual(changed.events, ["task.created"]);
    const listed = await unwrap(pm.GET("/openapi/v1/webhooks/subscriptions", {}));
    assert.ok(listed.items.some((s) => s.id === subId));
    const e = await rejection(unwrap(other.GET("/openapi/v1/webhooks/subscriptions/{subId}", path)));
    assert.equal(e.status, 404);
    assert.equal(e.code, "NOT_FOUND");
    const deleted = await unwrap(pm.DELETE("/openapi/v1/webhooks/subscriptions/{subId}", path));
    assert.equal(deleted.status, "DISABLED");
  });
});

describe("webhook deliveries verify with both schemes", () => {
  interface Delivery {
    headers: IncomingHttpHeaders;
    body: Buffer;
  }
  const received: Delivery[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  // The subscription is the Go side's (through the console, on the port of
  // the listener it hands over as descriptor 3): this tenant's events reach it.
  const secret = env("PMAPI_WEBHOOK_SECRET");
  let delivery: Delivery;

  before(async () => {
    await new Promise<void>((resolve) => receiver.listen({ fd: 3 }, resolve));
    await unwrap(pm.POST("/openapi/v1/resource/project/create", { body: { name: "delivered" } }));
    // Deliveries are worked in the background; a loaded machine may take a while.
    const deadline = Date.now() + 90_000;
    // The suite above created a project too: this one is named "delivered".
    let found: Delivery | undefined;
    while ((found = received.find((d) => d.body.includes('"name":"delivered"'))) === undefined) {
      assert.ok(Date.now() < deadline, "no delivery within 90 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    delivery = found;
  });
  after(() => receiver.close());

  test("Stripe-style X-Service-Signature", () => {
    const { headers, body } = delivery;
    assert.equal(headers["x-service-event"], "project.created");
    verifyWebhook(body, headers, secret);
    verifyWebhook(body.toString(), headers, ["whsec_old", secret]);
    refused(() => verifyWebhook(Buffer.concat([body, Buffer.from(" ")]), headers, secret), "NO_MATCH");
    refused(() => verifyWebhook(body, headers, "whsec_other"), "NO_MATCH");
    refused(() => verifyWebhook(body, {}, secret), "NO_SIGNATURE");
    const t = Number(/t=(\d+)/.exec(String(headers["x-service-signature"]))?.[1]);
    verifyWebhook(body, headers, secret, { now: () => new Date(t * 1000 + 299_999) });
    refused(() => verifyWebhook(body, headers, secret, { now: () => new Date(t * 1000 + 300_000) }), "TOO_OLD");
    refused(() => verifyWebhook(body, headers, secret, { now: () => new Date(t * 1000 - 300_000) }), "TOO_OLD");
    const at = (ms: number) => () => new Date(t * 1000 + ms);
    verifyWebhook(body, headers, secret, { now: at(20_000), toleranceSeconds: 30 });
    refused(() => verifyWebhook(body, headers, secret, { now: at(31_000), toleranceSeconds: 30 }), "TOO_OLD");
  });

  test("Standard Webhooks webhook-signature", () => {
    const { headers, body } = delivery;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    verifyStandardWebhook(body, headers, secret);
    verifyStandardWebhook(body, new Headers(headers as Record<string, string>), [secret]);
    refused(() => verifyStandardWebhook(Buffer.from(body.toString().replace("delivered", "tampered")), headers,
      secret), "NO_MATCH");
    refused(() => verifyStandardWebhook(body, headers, "whsec_" + Buffer.alloc(32, 7).toString("base64")),
      "NO_MATCH");
    refused(() => verifyStandardWebhook(body, headers, "whsec_" + "A1b".repeat(14) + "z"), "SECRET_SHAPE");
    refused(() => verifyStandardWebhook(body, {}, secret), "NO_STANDARD_SIGNATURE");
    const t = Number(headers["webhook-timestamp"]);
    verifyStandardWebhook(body, headers, secret, { now: () => new Date(t * 1000 - 299_999) });
    refused(() => verifyStandardWebhook(body, headers, secret, { now: () => new Date(t * 1000 - 300_000) }),
      "TOO_OLD");
  });

  test("the standardwebhooks package verifies it as docs/webhooks.md shows", () => {
    const { headers, body } = delivery;
    const wh = new Webhook(secret);
    const event = wh.verify(body, {
      "webhook-id": String(headers["webhook-id"]),
      "webhook-timestamp": String(headers["webhook-timestamp"]),
      "webhook-signature": String(headers["webhook-signature"]),
    }) as ProjectCreatedWebhook;
    assert.equal(event.type, "project.created");
    assert.equal(event.data?.name, "delivered");
  });
});

describe("a rotation's deliveries, signed by the server's signer", () => {
  type Signed = Record<string, string>;
  const r = JSON.parse(env("PMAPI_ROTATION")) as {
    body: string;
    current: string;
    previous: string;
    old: string;
    both: Signed;
    fromOld: Signed;
    oldOnly: Signed;
  };

  test("signed with both: the new secret, the old one or both verify", () => {
    for (const secrets of [r.current, r.previous, [r.previous, r.current]]) {
      verifyWebhook(r.body, r.both, secrets);
      verifyStandardWebhook(r.body, r.both, secrets);
    }
    assert.equal(r.both["webhook-signature"]?.split(" ").length, 2, "two Standard signatures");
    refused(() => verifyStandardWebhook(r.body, r.both, r.old), "SECRET_SHAPE");
  });

  test("rotated from an old-shape secret: Stripe-style takes both, Standard the new one", () => {
    verifyWebhook(r.body, r.fromOld, r.old);
    verifyWebhook(r.body, r.fromOld, r.current);
    verifyStandardWebhook(r.body, r.fromOld, r.current);
    refused(() => verifyStandardWebhook(r.body, r.fromOld, [r.old, r.current]), "SECRET_SHAPE");
  });

  test("an old-shape secret alone: no Standard headers, Stripe-style verifies", () => {
    verifyWebhook(r.body, r.oldOnly, r.old);
    refused(() => verifyStandardWebhook(r.body, r.oldOnly, r.current), "NO_STANDARD_SIGNATURE");
    refused(() => verifyWebhook(r.body, r.oldOnly, r.current), "NO_MATCH");
  });
});
