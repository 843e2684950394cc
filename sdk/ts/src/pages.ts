/** One page of a list: its items and the cursor of the next, null on the last. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Every page of a list, from the first (cursor undefined) until nextCursor is
 * null. fetchPage asks for the page at cursor, usually
 * `(cursor) => unwrap(client.GET(path, { params: { query: { ..., cursor } } }))`.
 * Not for the event feed, whose nextCursor is never null (read it with `after`).
 */
export async function* pages<P extends Page<unknown>>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
): AsyncGenerator<P, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield page;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** Every item of every page of a list, in order (see pages). */
export async function* items<P extends Page<unknown>>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
): AsyncGenerator<P["items"][number], void, undefined> {
  for await (const page of pages(fetchPage)) {
    yield* page.items as P["items"][number][];
  }
}
