"""Pull pages bounded by bytes (--page-bytes) as well as by count (--page-size); a page never
splits a mutation's records, and a mutation larger than the bound travels alone."""

from conftest import Client, change_text, delete, mutation, put

BLOB = "b" * 20_000


def page_bytes(page):
    return sum(len(change_text(ch).encode()) for ch in page["changes"])


def assert_mutations_whole(pages, mutation_keys):
    """Every mutation's records arrive in one page."""
    where = {ch["key"]: n for n, p in enumerate(pages) for ch in p["changes"]}
    for keys in mutation_keys:
        assert len({where[k] for k in keys}) == 1, f"mutation {keys} split over pages"


def test_pages_are_bounded_by_bytes(start_server):
    bound = 100_000
    server = start_server("--page-bytes", str(bound))
    c = Client(server)
    mutation_keys = []
    # 60 records of 20 KB: single ones and groups of three written by one mutation.
    n = 0
    for i in range(1, 31):
        keys = [f"k{n + j:03}" for j in range(1 if i % 2 else 3)]
        n += len(keys)
        mutation_keys.append(keys)
        assert c.push([mutation(i, *[put("blobs", k, {"s": BLOB}) for k in keys])])[0]["status"] == "ok"
    pages = c.pages()
    assert len(pages) >= 12  # 60 records of about 20 KB, at most 100 KB a page
    for p in pages:
        assert page_bytes(p) <= bound, (page_bytes(p), len(p["changes"]))
        assert p["changes"], "no empty page before the end"
    assert [p["more"] for p in pages] == [True] * (len(pages) - 1) + [False]
    keys = [ch["key"] for p in pages for ch in p["changes"]]
    assert keys == [f"k{i:03}" for i in range(n)]
    assert_mutations_whole(pages, mutation_keys)
    # The pages are full: each but the last had no room for the next mutation.
    sizes = [page_bytes(p) for p in pages]
    assert all(s > bound - 3 * 20_100 for s in sizes[:-1]), sizes


def test_a_mutation_larger_than_the_bound_travels_alone(start_server):
    bound = 100_000
    server = start_server("--page-bytes", str(bound))
    c = Client(server)
    c.push([mutation(1, put("m", "a1", {"s": BLOB})), mutation(2, put("m", "a2", {"s": BLOB}))])
    big = [f"big{j}" for j in range(8)]  # 160 KB in one mutation
    c.push([mutation(3, *[put("m", k, {"s": BLOB}) for k in big])])
    c.push([mutation(4, put("m", "z1", {"s": BLOB})), mutation(5, delete("m", "a1"))])
    pages = c.pages(unacked=[3])
    contents = [[ch["key"] for ch in p["changes"]] for p in pages]
    # a1's row moved to its delete (seq 5): the change log holds each record once.
    assert contents == [["a2"], big, ["z1", "a1"]], contents
    assert page_bytes(pages[1]) > bound
    assert pages[-1]["outcomes"] == [{"id": 3, "status": "ok", "retry": 0}]
    # The same from the start of the big mutation's page alone.
    alone = c.pull(pages[0]["cursor"])
    assert [ch["key"] for ch in alone["changes"]] == big and alone["more"] is True


def test_the_count_bound_holds_with_the_byte_bound(start_server):
    server = start_server("--page-bytes", "1000000", "--page-size", "3")
    c = Client(server)
    c.push([mutation(i, put("s", f"k{i:02}", {"i": i})) for i in range(1, 11)])
    c.push([mutation(11, *[put("s", f"g{j}", {}) for j in range(5)])])
    pages = c.pages()
    assert [len(p["changes"]) for p in pages] == [3, 3, 3, 1, 5]
