/** Cursor pagination: await a list call for one page, or iterate it with `for await` for every item. */
import { ArgumentError } from './errors.js';

export interface PageResult<T> {
  data: T[];
  nextCursor: string | null;
}

type Fetcher<T> = (cursor: string | undefined) => Promise<PageResult<T>>;

/** One page of a list, with the cursor of the next one. */
export class Page<T> implements AsyncIterable<T> {
  readonly data: T[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  readonly nextCursor: string | null;
  private readonly fetcher: Fetcher<T>;

  constructor(result: PageResult<T>, fetcher: Fetcher<T>) {
    this.data = result.data;
    this.nextCursor = result.nextCursor;
    this.fetcher = fetcher;
  }

  hasNextPage(): boolean {
    return this.nextCursor !== null;
  }

  /** The next page; throws when this is the last one (check {@link hasNextPage}). */
  async getNextPage(): Promise<Page<T>> {
    if (this.nextCursor === null) throw new Error('this is the last page');
    return new Page(await this.fetcher(this.nextCursor), this.fetcher);
  }

  /** Every item of this page and of the pages after it, at most `limit` of them. */
  toArray(options: { limit: number }): Promise<T[]> {
    return collect(this, options);
  }

  /** Every item of this page and of the pages after it. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let page: Page<T> = this;
    for (;;) {
      yield* page.data;
      if (!page.hasNextPage()) return;
      page = await page.getNextPage();
    }
  }
}

/** Collects every item of every page, up to `limit`. */
async function collect<T>(items: AsyncIterable<T>, options: { limit: number }): Promise<T[]> {
  const limit = options?.limit;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ArgumentError('argument_invalid', 'limit', 'toArray needs a positive integer limit');
  }
  const out: T[] = [];
  if (out.length >= limit) return out;
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * What a list method returns: a real Promise of the first page (a {@link Page}: `await`, `.then`, `.catch`,
 * `.finally`), that is also an async iterable over every item of every page (`for await`, fetched one page at a
 * time as the loop advances), with `toArray({ limit })` to collect them.
 */
export class PagePromise<T> extends Promise<Page<T>> implements AsyncIterable<T> {
  // `then`, `catch` and `finally` answer plain Promises.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  constructor(fetcher: Fetcher<T>, cursor: string | undefined) {
    super((resolve, reject) => {
      // Started at once, as a Promise is; a page nobody awaits does not become an unhandled rejection.
      Promise.resolve()
        .then(() => fetcher(cursor))
        .then((result) => resolve(new Page(result, fetcher)), reject);
    });
    Promise.prototype.catch.call(this, () => undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* await this;
  }

  /** Every item of every page (fetched as needed), at most `limit` of them. */
  toArray(options: { limit: number }): Promise<T[]> {
    return collect(this, options);
  }
}
