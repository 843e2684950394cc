import createClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";

import type { paths } from "./schema.gen.js";

/** How the client authenticates each request. */
export type Credential =
  | { readonly kind: "apiKey"; readonly key: string }
  | { readonly kind: "bearer"; readonly token: string | (() => string | Promise<string>) };

/** An API key (`pmk_...`), sent bare in `Authorization` as pmapi expects. */
export function apiKey(key: string): Credential {
  return { kind: "apiKey", key };
}

/**
 * An OAuth access token, sent as `Bearer <token>`. A function is called before
 * every request, so it can hand out a refreshed token.
 */
export function bearer(token: string | (() => string | Promise<string>)): Credential {
  return { kind: "bearer", token };
}

export interface PmapiClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /** Where the server is, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The app the credential belongs to (`X-Client-ID`). */
  clientId: string;
  credential: Credential;
}

/** The openapi-fetch client of every operation the server serves. */
export type PmapiClient = Client<paths>;

/**
 * The client of the server at baseUrl, calling as the app clientId with
 * credential: `GET`, `POST`, ... take the document's paths and are typed by it.
 */
export function createPmapiClient(options: PmapiClientOptions): PmapiClient {
  const { baseUrl, clientId, credential, ...rest } = options;
  const client = createClient<paths>({ ...rest, baseUrl: baseUrl.replace(/\/+$/, "") });
  client.use(authenticate(clientId, credential));
  return client;
}

function authenticate(clientId: string, credential: Credential): Middleware {
  return {
    async onRequest({ request }) {
      request.headers.set("X-Client-ID", clientId);
      if (credential.kind === "apiKey") {
        request.headers.set("Authorization", credential.key);
      } else {
        const token = typeof credential.token === "string" ? credential.token : await credential.token();
        request.headers.set("Authorization", `Bearer ${token}`);
      }
      return request;
    },
  };
}
