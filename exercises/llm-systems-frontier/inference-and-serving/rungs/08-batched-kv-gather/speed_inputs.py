"""The speed phase's inputs: a cache of pages and a batch whose tables name them in shuffled order."""


def make_inputs(rng, batch, num_pages, page_size, head_dim, max_len):
    pages = rng.standard_normal((num_pages, page_size, head_dim)).astype("float32")
    lengths = [int(n) for n in rng.integers(max_len // 2, max_len + 1, size=batch)]
    tables = [[int(p) for p in rng.choice(num_pages, size=-(-n // page_size), replace=False)] for n in lengths]
    return [pages, tables, lengths]
