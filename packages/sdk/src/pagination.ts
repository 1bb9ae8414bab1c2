/** Cursor pagination: await a list call for one page, or iterate it with `for await` for every item. */

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

/**
 * What a list method returns: `await` it for the first page (a {@link Page}), or `for await` over it for every
 * item across pages (fetched one page at a time, as the loop advances).
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private promise: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetcher: Fetcher<T>,
    private readonly cursor: string | undefined,
  ) {}

  private first(): Promise<Page<T>> {
    this.promise ??= this.fetcher(this.cursor).then((result) => new Page(result, this.fetcher));
    return this.promise;
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.first().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* await this.first();
  }
}
